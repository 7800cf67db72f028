// A local stand-in with the contract's API (records-contract.md); the platform helper's database.ts replaces it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'pg';
import type { PoolClient } from 'pg';

export type Database = Pool;

const MIGRATIONS_DIR = join(__dirname, 'migrations');
/** Any constant: it serializes concurrent migrations of one database. */
const MIGRATION_LOCK = 2_100_021;

/** A pool for DATABASE_URL (numeric columns parsed as JS numbers by the record modules, not here). */
export function openDatabase(url: string, options: { max?: number; applicationName?: string } = {}): Database {
  const pool = new Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName,
    connectionTimeoutMillis: 2000,
  });
  // An idle client losing its connection (PostgreSQL restarting) must not crash the process; queries fail on their own.
  pool.on('error', () => undefined);
  return pool;
}

/** Applies the numbered migrations in src/records/migrations not yet applied, in one transaction under an advisory lock. */
export async function migrate(db: Database, log: (line: string) => void = () => undefined): Promise<string[]> {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d+_.*\.sql$/.test(f))
    .sort();
  return inTransaction(db, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name),
    );
    const applied: string[] = [];
    for (const file of files.filter((f) => !done.has(f))) {
      log(`records: applying ${file}`);
      await client.query(readFileSync(join(MIGRATIONS_DIR, file), 'utf8'));
      await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
      applied.push(file);
    }
    return applied;
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
