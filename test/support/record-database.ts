import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { freePort } from '../../src/local/free-port';
import { startPostgres } from '../../src/local/postgres';
import type { Postgres } from '../../src/local/postgres';
import { migrate, openDatabase } from '../../src/records/database';
import type { Database } from '../../src/records/database';

export interface RecordDatabase {
  db: Database;
  url: string;
  /** The PostgreSQL started for it (none when TEST_DATABASE_URL gave one): tests stop and start it again. */
  postgres?: Postgres;
  /** Where that PostgreSQL keeps its data (startPostgres with it and the same port starts it again). */
  dataDir?: string;
  close(): Promise<void>;
}

/**
 * A migrated record database of its own: a new database on TEST_DATABASE_URL's server when `npm test` gave one, else a
 * PostgreSQL started in a temporary directory (`ownServer`: always the latter, for tests that stop it).
 */
export async function recordDatabase(options: { ownServer?: boolean } = {}): Promise<RecordDatabase> {
  const shared = options.ownServer ? undefined : process.env.TEST_DATABASE_URL;
  if (shared) {
    const name = `records_${randomBytes(6).toString('hex')}`;
    await adminQuery(shared, `CREATE DATABASE ${name}`);
    const url = new URL(shared);
    url.pathname = `/${name}`;
    const db = openDatabase(url.toString());
    await migrate(db);
    return {
      db,
      url: url.toString(),
      async close() {
        await db.end();
        await adminQuery(shared, `DROP DATABASE ${name} WITH (FORCE)`);
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'records-'));
  const postgres = await startPostgres(dir, await freePort(), () => undefined);
  const url = `postgres://${postgres.user}:${postgres.password}@127.0.0.1:${postgres.port}/postgres`;
  const db = openDatabase(url);
  await migrate(db);
  const own: RecordDatabase = {
    db,
    url,
    postgres,
    dataDir: dir,
    async close() {
      await db.end();
      await own.postgres?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return own;
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
