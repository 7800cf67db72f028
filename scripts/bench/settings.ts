import { z } from 'zod';
import { HISTORY_SHARDS } from '../../src/local/temporal-server-config';

const count = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

/** The benchmark's sizes (BENCH_* variables); the defaults are the full run the README reports. */
const benchSchema = z.object({
  /** Concurrent clients in the closed-loop phases (twin and full stack). */
  BENCH_CLIENTS: count(16),
  /** Measured seconds of each closed-loop phase, after BENCH_WARMUP_SECONDS not counted. */
  BENCH_RATE_SECONDS: count(60),
  BENCH_WARMUP_SECONDS: count(5),
  /** Measured seconds of GETs of the closed loop's payments, by BENCH_CLIENTS clients. */
  BENCH_GET_SECONDS: count(20),
  /** Payments (and twin runs) one at a time. */
  BENCH_SERIAL: count(50),
  /** Seconds of the open-loop phase at half the measured full-stack rate. */
  BENCH_OPEN_SECONDS: count(60),
  /** The sandbox's callback delay in the open-loop and cost phases: callbacks come after the initiation's answer. */
  BENCH_OPEN_CALLBACK_DELAY_MS: count(200),
  /** Payments left waiting for a callback that never comes, while the worker's memory is sampled. */
  BENCH_WAITING: count(10_000),
  /** Payout batch items (`--batch-items N` too), and the batch's concurrency. */
  BENCH_ITEMS: count(2_000),
  BENCH_CONCURRENCY: count(50),
  /** The batch's items split over this many batches run at once (`--batches N`), BENCH_CONCURRENCY shared among them. */
  BENCH_BATCHES: z.coerce.number().int().min(1).default(1),
  /** Measured seconds of single bank credits by BENCH_CONCURRENCY clients: the rate the batch is compared with. */
  BENCH_CREDIT_SECONDS: count(30),
  /**
   * Seconds before PostgreSQL's write counters are read after a loaded phase: a backend that found the statistics'
   * shared entry locked by another tries again 10 s later (PGSTAT_IDLE_INTERVAL), so the default has them all.
   */
  BENCH_STATS_SETTLE_SECONDS: count(11),
  /** On a real cluster the bench starts (`--cluster`): PostgreSQL, temporal-server; otherwise a dev server in memory. */
  BENCH_CLUSTER: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false'),
  /** Payment worker processes (`--workers N`). */
  BENCH_WORKERS: z.coerce.number().int().min(1).default(1),
  /** The real cluster's history shards (`--shards N`), `npm run cluster`'s by default. */
  BENCH_SHARDS: z.coerce.number().int().min(1).default(HISTORY_SHARDS),
});

export type BenchSettings = z.infer<typeof benchSchema>;

/** Command-line flags that take a value, and the setting each one sets. */
const VALUE_FLAGS = {
  '--batch-items': 'BENCH_ITEMS',
  '--batches': 'BENCH_BATCHES',
  '--workers': 'BENCH_WORKERS',
  '--shards': 'BENCH_SHARDS',
} as const;

/**
 * The benchmark's settings from the environment and the command line (`--batch-items N` for BENCH_ITEMS,
 * `--batches N` for BENCH_BATCHES, `--workers N` for BENCH_WORKERS, `--shards N` for BENCH_SHARDS, `--cluster` for
 * BENCH_CLUSTER=true); a bad value names its variable.
 */
export function benchSettings(env: NodeJS.ProcessEnv, argv: readonly string[] = []): BenchSettings {
  const given: Record<string, string | undefined> = { ...env };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--cluster') given.BENCH_CLUSTER = 'true';
    else if (arg in VALUE_FLAGS) {
      const value = argv[++i];
      if (value === undefined || value.startsWith('--')) throw new Error(`${arg} needs a number`);
      given[VALUE_FLAGS[arg as keyof typeof VALUE_FLAGS]] = value;
    } else
      throw new Error(`unknown argument ${arg} (--cluster, --workers N, --shards N, --batch-items N, --batches N)`);
  }
  const parsed = benchSchema.safeParse(given);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${String(issue?.path[0])}: ${issue?.message ?? 'invalid'}`);
  }
  const settings = parsed.data;
  if (given.BENCH_SHARDS !== undefined && settings.BENCH_CLUSTER !== 'true') {
    throw new Error("BENCH_SHARDS: history shards are a real cluster's (--cluster); the dev server has one");
  }
  if (settings.BENCH_CONCURRENCY % settings.BENCH_BATCHES !== 0) {
    throw new Error('BENCH_BATCHES: must divide BENCH_CONCURRENCY, so that the batches hold that many items in flight');
  }
  if (settings.BENCH_ITEMS < settings.BENCH_BATCHES) throw new Error('BENCH_BATCHES: more batches than BENCH_ITEMS');
  return settings;
}
