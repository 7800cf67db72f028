// `npm run bench`: the payment stack against a minimal twin workflow on the same Temporal dev server, in one run:
// rates, latencies, worker memory with payments waiting, and a payout batch (docs/performance.md).
import { execSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { batchPhase, fullPhase, openPhase, startTwin, twinPhase, waitingPhase } from './bench/phases';
import { printTable } from './bench/report';
import type { Figure } from './bench/report';
import { benchSettings } from './bench/settings';
import { rssMb } from './bench/rss';
import { startStack } from './bench/bench-stack';
import { log, percentile } from './bench/stats';

const fixed = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

async function main(): Promise<number> {
  const settings = benchSettings(process.env);
  log(`settings ${JSON.stringify(settings)}`);
  log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  log(`commit ${execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim()}`);
  const stack = await startStack(settings.BENCH_CONCURRENCY);
  const startRss = rssMb(stack.workerPid);
  log(`worker RSS at start: ${startRss.toFixed(0)} MB`);
  const stopAll = () => {
    void stack.stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
  try {
    const twinWorker = await startTwin(stack);
    const twin = await twinPhase(twinWorker, settings);
    const full = await fullPhase(stack, settings);
    const open = await openPhase(stack, twinWorker, settings, full.rate);
    await twinWorker.stop();
    const waiting = await waitingPhase(stack, settings, settings.BENCH_CLIENTS);
    const batch = await batchPhase(stack, settings);

    const twinP50 = percentile(twin.serial, 0.5);
    const fullP50 = percentile(full.serial, 0.5);
    const cbP99 = percentile(open.callbackToFinal, 0.99);
    const expectedFailed = Math.ceil(batch.items / 10);
    const figures: Figure[] = [
      { name: 'twin rate (closed loop)', value: `${fixed(twin.rate, 1)} /s` },
      { name: 'full-stack rate (closed loop)', value: `${fixed(full.rate, 1)} payments/s` },
      {
        name: 'full / twin rate',
        value: fixed(full.rate / twin.rate, 2),
        target: '≥ 0.95',
        met: full.rate / twin.rate >= 0.95,
      },
      { name: 'twin one at a time p50', value: `${fixed(twinP50)} ms` },
      { name: 'full one at a time p50 (POST → final)', value: `${fixed(fullP50)} ms` },
      {
        name: 'one at a time full / twin',
        value: fixed(fullP50 / twinP50, 2),
        target: '≤ 1.3',
        met: fullP50 / twinP50 <= 1.3,
      },
      {
        name: `half load (${fixed(open.rate, 1)}/s) POST → final p50 / p99`,
        value: `${fixed(percentile(open.postToFinal, 0.5))} / ${fixed(percentile(open.postToFinal, 0.99))} ms`,
      },
      {
        name: 'half load callback → final p50',
        value: `${fixed(percentile(open.callbackToFinal, 0.5))} ms`,
      },
      { name: 'half load callback → final p99', value: `${fixed(cbP99)} ms`, target: '≤ 100 ms', met: cbP99 <= 100 },
      {
        name: 'half load twin signal → completion p50 / p99',
        value: `${fixed(percentile(open.twinSignalToEnd, 0.5))} / ${fixed(percentile(open.twinSignalToEnd, 0.99))} ms`,
      },
      {
        name: 'history events per payment (callback after ack) / twin',
        value: `${fixed(open.paymentEvents)} (+5 at close) / ${fixed(open.twinEvents)}`,
      },
      { name: 'worker RSS at start', value: `${fixed(startRss)} MB` },
      {
        name: `worker RSS, ${waiting.count} waiting (peak)`,
        value: `${fixed(waiting.peakMb)} MB`,
        target: '≤ 300 MB',
        met: waiting.peakMb <= 300,
      },
      {
        name: `batch: ${batch.items} items`,
        value: `${fixed(batch.items / batch.seconds, 1)} items/s (${fixed(batch.seconds)} s)`,
      },
      {
        name: 'batch: peak worker RSS',
        value: `${fixed(batch.peakMb)} MB`,
        target: '< 400 MB',
        met: batch.peakMb < 400,
      },
      {
        name: 'batch: runs, longest history',
        value: `${batch.runs}, ${batch.maxEvents} events`,
        target: '≤ 10000 events',
        met: batch.maxEvents <= 10_000,
      },
    ];
    printTable(figures);
    log(
      `load average after: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    // A missed target is a finding, not a broken run; wrong outcomes are.
    if (batch.succeeded !== batch.items - expectedFailed || batch.failed !== expectedFailed) {
      log(
        `BROKEN: batch outcomes ${batch.succeeded} succeeded / ${batch.failed} failed, expected ${batch.items - expectedFailed} / ${expectedFailed}`,
      );
      return 1;
    }
    log('DONE');
    return 0;
  } finally {
    await stack.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[bench] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
