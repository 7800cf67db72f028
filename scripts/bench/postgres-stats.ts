import { readFileSync } from 'node:fs';
import { Pool } from 'pg';
import { request } from 'undici';

/** PostgreSQL's cumulative write counters for the payments database, as its statistics views keep them. */
export interface WriteCounters {
  inserted: number;
  updated: number;
  /** Updates that touched no index (heap-only tuples): cheaper than the others. */
  hotUpdated: number;
  deleted: number;
  commits: number;
  rollbacks: number;
  /** Rows inserted + updated + deleted, by table. */
  byTable: Record<string, number>;
}

/** Writes per operation between two readings of the counters. */
export interface WritesPer {
  inserted: number;
  updated: number;
  hotUpdated: number;
  deleted: number;
  /** Row writes: inserted + updated + deleted. */
  rows: number;
  commits: number;
  rollbacks: number;
  byTable: Record<string, number>;
}

/**
 * A backend reports its counters to the statistics system when it goes idle, at most once a second
 * (PGSTAT_MIN_INTERVAL): after a quiet phase, 1.5 s is enough. After a loaded one, BENCH_STATS_SETTLE_SECONDS.
 */
const AFTER_QUIET_MS = 1500;

/** Reads the payments database's statistics and finds its server's postmaster, over one connection of its own. */
export class PostgresStats {
  private readonly pool: Pool;

  constructor(databaseUrl: string) {
    this.pool = new Pool({ connectionString: databaseUrl, max: 1, application_name: 'bench statistics' });
  }

  /** The postmaster's pid: the parent of this connection's backend (it must run on this machine). */
  async postmasterPid(): Promise<number> {
    const { rows } = await this.pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const backend = rows[0]?.pid ?? 0;
    const match = /^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${backend}/status`, 'utf8'));
    if (!match?.[1]) throw new Error(`no parent process for PostgreSQL backend ${backend}`);
    return Number(match[1]);
  }

  /** The counters once every backend has had the time to report what it did (`settleMs` after the last load). */
  async counters(settleMs = AFTER_QUIET_MS): Promise<WriteCounters> {
    await new Promise((r) => setTimeout(r, settleMs));
    const tables = await this.pool.query<{ relname: string; ins: string; upd: string; hot: string; del: string }>(
      'SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_hot_upd AS hot, n_tup_del AS del FROM pg_stat_user_tables',
    );
    const database = await this.pool.query<{ commits: string; rollbacks: string }>(
      'SELECT xact_commit AS commits, xact_rollback AS rollbacks FROM pg_stat_database WHERE datname = current_database()',
    );
    const counters: WriteCounters = {
      inserted: 0,
      updated: 0,
      hotUpdated: 0,
      deleted: 0,
      commits: Number(database.rows[0]?.commits ?? 0),
      rollbacks: Number(database.rows[0]?.rollbacks ?? 0),
      byTable: {},
    };
    for (const row of tables.rows) {
      counters.inserted += Number(row.ins);
      counters.updated += Number(row.upd);
      counters.hotUpdated += Number(row.hot);
      counters.deleted += Number(row.del);
      counters.byTable[row.relname] = Number(row.ins) + Number(row.upd) + Number(row.del);
    }
    return counters;
  }

  /**
   * When each payment's record was last committed (ms since the epoch): for a payment that has ended, when `GET` began
   * to answer its final status. Needs `track_commit_timestamp` (every PostgreSQL the stack starts has it).
   */
  async recordCommits(paymentIds: string[]): Promise<Map<string, number>> {
    const { rows } = await this.pool.query<{ id: string; committed: Date | null }>(
      'SELECT id, pg_xact_commit_timestamp(xmin) AS committed FROM payments WHERE id = ANY($1)',
      [paymentIds],
    );
    return new Map(rows.flatMap((row) => (row.committed ? [[row.id, row.committed.getTime()] as const] : [])));
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/**
 * Writes per operation from `before` to `after`. The bench's own readings are two transactions each, taken off the
 * commits.
 */
export function writesPer(before: WriteCounters, after: WriteCounters, operations: number): WritesPer {
  const n = Math.max(operations, 1);
  const per = (a: number, b: number) => (a - b) / n;
  const byTable: Record<string, number> = {};
  for (const [table, count] of Object.entries(after.byTable)) {
    const delta = count - (before.byTable[table] ?? 0);
    if (delta > 0) byTable[table] = delta / n;
  }
  const inserted = per(after.inserted, before.inserted);
  const updated = per(after.updated, before.updated);
  const deleted = per(after.deleted, before.deleted);
  return {
    inserted,
    updated,
    hotUpdated: per(after.hotUpdated, before.hotUpdated),
    deleted,
    rows: inserted + updated + deleted,
    commits: per(after.commits - 2, before.commits),
    rollbacks: per(after.rollbacks, before.rollbacks),
    byTable,
  };
}

/** "3.0 row writes (1.0 inserted, 2.0 updated of which 1.0 HOT, 0.0 deleted) in 4.0 commits; payments 2.0 · …". */
export function writesLine(writes: WritesPer, unit: string): string {
  const f = (n: number) => n.toFixed(1);
  const tables = Object.entries(writes.byTable)
    .sort(([, a], [, b]) => b - a)
    .map(([table, count]) => `${table} ${f(count)}`)
    .join(' · ');
  return (
    `per ${unit}: ${f(writes.rows)} row writes (${f(writes.inserted)} inserted, ${f(writes.updated)} updated of which ` +
    `${f(writes.hotUpdated)} HOT, ${f(writes.deleted)} deleted) in ${f(writes.commits)} commits` +
    `${writes.rollbacks > 0 ? ` (+${f(writes.rollbacks)} rolled back)` : ''}; by table: ${tables || 'none'}`
  );
}

/** A local activity's executions and their total time, from the worker's Prometheus endpoint. */
export interface ActivityTimes {
  count: number;
  seconds: number;
}

/**
 * The SDK's execution-latency histogram of the local activity `activityType`
 * (`temporal_local_activity_execution_latency_seconds`): its count and sum, all task queues and all the workers'
 * Prometheus endpoints together.
 */
export async function localActivityTimes(
  metricsAddresses: readonly string[],
  activityType: string,
): Promise<ActivityTimes> {
  const times = { count: 0, seconds: 0 };
  for (const address of metricsAddresses) {
    const response = await request(`http://${address}/metrics`);
    const text = await response.body.text();
    for (const line of text.split('\n')) {
      const match = /^temporal_local_activity_execution_latency_seconds_(sum|count)\{([^}]*)\} (\S+)$/.exec(line);
      if (!match?.[2]?.includes(`activity_type="${activityType}"`)) continue;
      if (match[1] === 'sum') times.seconds += Number(match[3]);
      else times.count += Number(match[3]);
    }
  }
  return times;
}
