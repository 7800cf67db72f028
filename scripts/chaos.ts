// npm run chaos: payments of every type and scenario and a payout batch through the whole stack while it is broken
// on purpose (worker kills, a Temporal restart, an API server kill, Redis stopped, PostgreSQL frozen, stopped and
// killed, a faulty provider and callbacks); every payment is then checked from outside, and its record against its
// workflow. Sizes: CHAOS_PAYMENTS (1000), CHAOS_BATCH_ITEMS (500), CHAOS_SEED.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runChaos } from './chaos/run';

const payments = Number(process.env.CHAOS_PAYMENTS ?? 1000);
const batchItems = Number(process.env.CHAOS_BATCH_ITEMS ?? 500);
const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 100_000);
/** The whole run is bounded: a run still going after this has failed. */
const RUN_LIMIT_MS = Number(process.env.CHAOS_LIMIT_MS ?? 20 * 60_000);

function log(line: string): void {
  process.stdout.write(`[chaos] ${line}\n`);
}

async function main(): Promise<number> {
  // The run stops its servers at its limit; a minute later, stopping them has hung too.
  const backstop = setTimeout(() => {
    log(`FAIL: the run took longer than ${RUN_LIMIT_MS / 60_000} min, and stopping it one more`);
    process.exit(1);
  }, RUN_LIMIT_MS + 60_000);
  backstop.unref();
  const result = await runChaos({
    payments,
    batchItems,
    seed,
    concurrency: Number(process.env.CHAOS_CONCURRENCY ?? 12),
    loadForMs: Number(process.env.CHAOS_LOAD_MS ?? 60_000),
    reportFile: process.env.CHAOS_REPORT ?? join(tmpdir(), `chaos-report-${seed}.json`),
    settleForMs: Number(process.env.CHAOS_SETTLE_MS ?? 420_000),
    recordsForMs: Number(process.env.CHAOS_RECORDS_MS ?? 180_000),
    limitMs: RUN_LIMIT_MS,
    log,
  });
  log('results');
  for (const line of result.figures) log(`  ${line}`);
  for (const problem of result.problems) log(`problem: ${problem}`);
  log(result.problems.length === 0 ? 'PASS' : 'FAIL');
  return result.problems.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[chaos] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
