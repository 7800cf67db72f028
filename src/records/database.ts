// A local stand-in with the API of the contract (records-contract.md); the platform helper's version replaces it.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'pg';
import type { PoolClient } from 'pg';

export type Database = Pool;

/** A pool for DATABASE_URL (numeric columns parsed as JS numbers by the record modules, not here). */
export function openDatabase(url: string, options: { max?: number; applicationName?: string } = {}): Database {
  return new Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName,
    connectionTimeoutMillis: 1500,
  });
}

const MIGRATIONS = join(__dirname, 'migrations');

/** Applies the numbered migrations in src/records/migrations not yet applied, in one transaction under an advisory lock. */
export async function migrate(db: Database, log: (line: string) => void = () => undefined): Promise<string[]> {
  return inTransaction(db, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(7212021)');
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const applied = new Set(
      (await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name),
    );
    const pending = readdirSync(MIGRATIONS)
      .filter((f) => f.endsWith('.sql') && !applied.has(f))
      .sort();
    for (const name of pending) {
      log(`records: applying ${name}`);
      await client.query(readFileSync(join(MIGRATIONS, name), 'utf8'));
      await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
    }
    return pending;
  });
}

/** Runs `work` in a transaction (BEGIN/COMMIT, ROLLBACK on throw). */
export async function inTransaction<T>(db: Database, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
