// The system of record's connection and schema: a pg pool, numbered SQL migrations applied under a lock, and
// transactions. What is stored where, and why plain SQL files: docs/records.md.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'pg';
import type { PoolClient } from 'pg';

export type Database = Pool;

/** The pool, or one of its connections in a transaction: what a statement runs on. */
export type Queryable = Database | PoolClient;

/** Beside this file in src/ and, copied by `npm run build`, in dist/. */
const MIGRATIONS_DIR = join(__dirname, 'migrations');
const MIGRATION_FILE = /^(\d{3})_[a-z0-9_-]+\.sql$/;
/** One key for every process migrating this database (any bigint would do; this one spells nothing). */
const MIGRATION_LOCK = 7_310_021_001;
/**
 * Past this a connection attempt fails rather than waits: with PostgreSQL unreachable a `POST` must answer 503 within
 * 2 s, with room left for a loaded machine, and a record write fails fast and is retried by Temporal. A connection on
 * a healthy database opens in milliseconds.
 */
const CONNECT_TIMEOUT_MS = 1_000;

/**
 * A worker's query time-out: below a record write's 10 s, so a query stuck on a frozen database gives its connection
 * back and is tried again.
 */
export const WORKER_QUERY_TIMEOUT_MS = 5_000;

/**
 * A pool for DATABASE_URL (numeric columns parsed as JS numbers by the record modules, not here). `queryTimeoutMs`
 * bounds each query as the client waits for it: a database that accepted the connection and then froze (a partition)
 * fails the request instead of holding it.
 */
export function openDatabase(
  url: string,
  options: { max?: number; applicationName?: string; queryTimeoutMs?: number } = {},
): Database {
  const pool = new Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    ...(options.queryTimeoutMs ? { query_timeout: options.queryTimeoutMs } : {}),
  });
  // An idle connection that breaks (PostgreSQL restarted) is dropped by the pool; unheard, the error would end the
  // process. The next query opens a new connection or fails on its own.
  pool.on('error', () => undefined);
  return pool;
}

/** Runs `work` in a transaction (BEGIN/COMMIT, ROLLBACK on throw). */
export async function inTransaction<T>(db: Database, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  let broken: Error | undefined;
  // pg fails the query of a connection that breaks while it is out (PostgreSQL stopped or killed) and also emits
  // `error` on it, which the pool hears only while the connection is idle: unheard, that would end the process.
  const onBreak = (err: Error) => (broken = err);
  client.on('error', onBreak);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    // A connection that cannot even roll back, or whose query timed out (it may still run), is closed, not pooled.
    if (isUnreachable(err)) broken = err as Error;
    else {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
    }
    throw err;
  } finally {
    client.removeListener('error', onBreak);
    client.release(broken);
  }
}

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

/** The migration files in order; two files with one number are refused. */
function migrationFiles(): Migration[] {
  const names = readdirSync(MIGRATIONS_DIR)
    .filter((name) => MIGRATION_FILE.test(name))
    .sort();
  const numbers = new Map<string, string>();
  for (const name of names) {
    const number = name.slice(0, 3);
    const other = numbers.get(number);
    if (other) throw new Error(`migrations ${other} and ${name} share the number ${number}: renumber one`);
    numbers.set(number, name);
  }
  return names.map((name) => {
    const sql = readFileSync(join(MIGRATIONS_DIR, name), 'utf8');
    return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
  });
}

/** Applies the numbered migrations in src/records/migrations not yet applied, in one transaction under an advisory lock. */
export async function migrate(db: Database, log: (line: string) => void = () => undefined): Promise<string[]> {
  const migrations = migrationFiles();
  return inTransaction(db, async (client) => {
    // Held until the transaction ends: a second process starting at the same time waits, then finds nothing to do.
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         name       text PRIMARY KEY,
         checksum   text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const { rows } = await client.query<{ name: string; checksum: string }>(
      'SELECT name, checksum FROM schema_migrations',
    );
    const applied = new Map(rows.map((row) => [row.name, row.checksum]));
    for (const { name, checksum } of migrations) {
      const recorded = applied.get(name);
      if (recorded !== undefined && recorded !== checksum) {
        throw new Error(
          `migration ${name} was changed after it was applied to this database: ` +
            'restore it as it was and put the change in a new numbered migration',
        );
      }
    }
    const pending = migrations.filter(({ name }) => !applied.has(name));
    for (const { name, sql, checksum } of pending) {
      log(`records: applying migration ${name}`);
      await client.query(sql);
      await client.query('INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2)', [name, checksum]);
    }
    return pending.map(({ name }) => name);
  });
}

/** PostgreSQL's SQLSTATE classes that say the database cannot serve now: connection, resources, shutdown. */
const UNAVAILABLE_SQLSTATE = /^(08|53|57P)/;

/** True when an error says PostgreSQL cannot serve now (unreachable, full, shutting down), not that a query is wrong. */
export function isUnreachable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = 'code' in err && typeof err.code === 'string' ? err.code : '';
  // Refused, timed out or dropped before the database answered: a socket error, or pg's own words for it (a query
  // on a connection that broke while it was checked out is refused as not queryable).
  const unreachable =
    /^E[A-Z]+$/.test(code) ||
    /timeout exceeded when trying to connect|Connection terminated|Query read timeout|is not queryable/i.test(
      err.message,
    );
  return unreachable || UNAVAILABLE_SQLSTATE.test(code);
}

/**
 * Migrates at a process's start. With PostgreSQL unreachable the process starts all the same (the server answers 503
 * until it is back, running payments keep moving) and migrates once it can.
 */
export class StartMigrations {
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly warn: (err: unknown) => void,
  ) {}

  /** Migrates now, or schedules tries every five seconds while PostgreSQL is unreachable. */
  async start(): Promise<void> {
    try {
      await migrate(this.db);
    } catch (err) {
      if (!isUnreachable(err)) throw err;
      this.warn(err);
      if (!this.stopped) this.retry = setTimeout(() => void this.start().catch(this.warn), 5000).unref();
    }
  }

  /** No more tries (the pool is closing). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
  }
}
