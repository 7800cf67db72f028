// `npm run bench`: the payment stack against a minimal twin workflow on the same Temporal dev server, in one run:
// rates, latencies, worker memory with payments waiting, and a payout batch (docs/performance.md). With `--cluster`
// the same phases on a real cluster it starts itself, with `--workers N` payment workers.
import { execSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import {
  batchPhase,
  creditPhase,
  fullPhase,
  getPhase,
  openPhase,
  perWrite,
  startTwin,
  twinPhase,
  waitingPhase,
} from './bench/phases';
import { callbackAfterAck, costPhase, twinCost } from './bench/cost-phase';
import { printTable } from './bench/report';
import type { Figure } from './bench/report';
import { benchSettings } from './bench/settings';
import { pollersLine, queuePollers, workerPollers } from './bench/pollers';
import { maxRssMb } from './bench/rss';
import { PAYMENT_TASK_QUEUE, startStack, workerExtras } from './bench/bench-stack';
import type { BenchStack } from './bench/bench-stack';
import { log, percentile } from './bench/stats';

const fixed = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

async function main(): Promise<number> {
  const settings = benchSettings(process.env, process.argv.slice(2));
  log(`settings ${JSON.stringify(settings)}`);
  const extras = workerExtras();
  if (Object.keys(extras).length > 0) log(`worker settings (BENCH_WORKER_*): ${JSON.stringify(extras)}`);
  log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  // The runtime moves the figures as much as the code does (the worker's CPU per payment, its RSS): print both.
  log(`commit ${execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim()}, Node.js ${process.version}`);
  const stack = await startStack(settings);
  const workers = stack.workerPids.length;
  // With several workers a worker's RSS is the largest one's, and its CPU the sum of theirs.
  const perWorker = workers > 1 ? ` (per worker, max of ${workers})` : '';
  const startRss = maxRssMb(stack.workerPids);
  await describeStack(stack).catch(async (err: unknown) => {
    await stack.stop();
    throw err;
  });
  log(`worker RSS at start${perWorker}: ${startRss.toFixed(0)} MB`);
  const stopAll = () => {
    void stack.stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
  try {
    const twinWorker = await startTwin(stack);
    const twin = await twinPhase(twinWorker, settings);
    const full = await fullPhase(stack, settings);
    const get = await getPhase(stack, settings, full.paymentIds);
    const open = await openPhase(stack, twinWorker, settings, full.rate);
    const twinCosts = await twinCost(stack, twinWorker, settings.BENCH_OPEN_CALLBACK_DELAY_MS);
    await twinWorker.stop();
    const waiting = await waitingPhase(stack, settings, settings.BENCH_CLIENTS);
    const batch = await batchPhase(stack, settings);
    const credit = await creditPhase(stack, settings);
    const creditRate = credit.rate;
    const cost = await costPhase(stack, settings, twinCosts);
    const costEvents = callbackAfterAck(cost);
    const cpuRatio = full.cpu.total / twin.cpu.total;
    const batchRate = batch.items / batch.seconds;

    const twinP50 = percentile(twin.serial, 0.5);
    const fullP50 = percentile(full.serial, 0.5);
    const cbP99 = percentile(open.callbackToRecord, 0.99);
    const { expectedFailed } = batch;
    const figures: Figure[] = [
      { name: 'twin rate (closed loop)', value: `${fixed(twin.rate, 1)} /s` },
      { name: 'full-stack rate (closed loop)', value: `${fixed(full.rate, 1)} payments/s` },
      {
        name: 'full / twin rate',
        value: fixed(full.rate / twin.rate, 2),
        target: '≥ 0.95',
        met: full.rate / twin.rate >= 0.95,
      },
      {
        name: 'CPU ms per payment / per twin (closed loop)',
        value: `${fixed(full.cpu.total, 1)} / ${fixed(twin.cpu.total, 1)}`,
      },
      {
        name: 'CPU per payment / per twin (closed loop)',
        value: fixed(cpuRatio, 2),
        target: '≤ 1.2',
        met: cpuRatio <= 1.2,
      },
      ...Object.entries(full.cpu.byProcess).map(([process, ms]) => ({
        name: `  ${process}`,
        value: `${fixed(ms, 1)} / ${fixed(twin.cpu.byProcess[process] ?? Number.NaN, 1)}`,
      })),
      {
        name: 'records per payment: row writes · commits',
        value: `${fixed(full.writes.rows, 1)} (${fixed(full.writes.inserted, 1)} ins, ${fixed(full.writes.updated, 1)} upd) · ${fixed(full.writes.commits, 1)}`,
      },
      { name: 'PostgreSQL CPU per write', value: perWrite(full.cpu, full.writes) },
      {
        name: 'recordPayment local activity per payment, mean',
        value: `${fixed(full.recordPayment.count, 1)}, ${fixed(full.recordPayment.seconds * 1000, 1)} ms`,
      },
      {
        name: `GET p50 / p99 (closed loop, ${fixed(get.rate)}/s)`,
        value: `${fixed(percentile(get.latencies, 0.5), 1)} / ${fixed(percentile(get.latencies, 0.99), 1)} ms`,
      },
      {
        name: 'CPU ms per GET: server · postgres · total',
        value: `${fixed(get.cpu.byProcess.server ?? Number.NaN, 2)} · ${fixed(get.cpu.byProcess.postgres ?? Number.NaN, 2)} · ${fixed(get.cpu.total, 2)}`,
      },
      {
        name: 'CPU ms per GET: temporal · worker (no query)',
        value: `${fixed(get.cpu.byProcess.temporal ?? Number.NaN, 2)} · ${fixed(get.cpu.byProcess.worker ?? Number.NaN, 2)}`,
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
        name: 'half load callback → final p50 (record)',
        value: `${fixed(percentile(open.callbackToRecord, 0.5))} ms`,
      },
      {
        name: 'half load callback → final p99 (record)',
        value: `${fixed(cbP99)} ms`,
        target: '≤ 100 ms',
        met: cbP99 <= 100,
      },
      {
        name: 'half load callback → upsert in Temporal p50 / p99',
        value: `${fixed(percentile(open.callbackToFinal, 0.5))} / ${fixed(percentile(open.callbackToFinal, 0.99))} ms`,
      },
      {
        name: 'half load twin signal → completion p50 / p99',
        value: `${fixed(percentile(open.twinSignalToEnd, 0.5))} / ${fixed(percentile(open.twinSignalToEnd, 0.99))} ms`,
      },
      {
        name: 'history events per payment, open loop (median) / twin',
        value: `${fixed(open.paymentEvents)} / ${fixed(open.twinEvents)}`,
      },
      {
        name: 'history events, callback after ack (to close, most of any type) / twin',
        value: `${fixed(costEvents)} / ${fixed(cost.twin.events)}`,
        target: '≤ twin + 2',
        met: costEvents <= cost.twin.events + 2,
      },
      {
        name: 'billable actions, callback after ack (most of any type) / twin',
        value: `${fixed(callbackAfterAck(cost, 'actions'))} / ${fixed(cost.twin.actions)}`,
      },
      { name: `worker RSS at start${perWorker}`, value: `${fixed(startRss)} MB` },
      {
        name: `worker RSS, ${waiting.count} waiting (peak)${perWorker}`,
        value: `${fixed(waiting.peakMb)} MB`,
        target: '≤ 300 MB',
        met: waiting.peakMb <= 300,
      },
      {
        name: `batch: ${batch.items} items${batch.batches > 1 ? ` in ${batch.batches} batches at once` : ''}`,
        value: `${fixed(batchRate, 1)} items/s (${fixed(batch.seconds)} s)`,
      },
      {
        name: `batch / single bank credits (${fixed(creditRate, 1)}/s, ${settings.BENCH_CONCURRENCY} clients)`,
        value: fixed(batchRate / creditRate, 2),
        target: '≥ 0.8',
        met: batchRate / creditRate >= 0.8,
      },
      {
        name: 'CPU ms per batch item / per single credit (all processes)',
        value: `${fixed(batch.cpu.total, 1)} / ${fixed(credit.cpu.total, 1)}`,
      },
      ...Object.entries(batch.cpu.byProcess).map(([process, ms]) => ({
        name: `  ${process}`,
        value: `${fixed(ms, 1)} / ${fixed(credit.cpu.byProcess[process] ?? Number.NaN, 1)}`,
      })),
      {
        name: `batch: peak worker RSS${perWorker}`,
        value: `${fixed(batch.peakMb)} MB`,
        target: '≤ 300 MB',
        met: batch.peakMb <= 300,
      },
      {
        name: 'batch: runs, longest history',
        value: `${batch.runs}, ${batch.maxEvents} events`,
        target: '≤ 10000 events',
        met: batch.maxEvents <= 10_000,
      },
    ];
    printTable(figures);
    if (stack.cluster)
      log(
        `on the cluster "postgres" is one PostgreSQL for Temporal's persistence and visibility and the payment records; ` +
          `"temporal" is temporal-server's process tree; "worker" the sum of ${workers} worker${workers > 1 ? 's' : ''}`,
      );
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

/** What the run is on: Temporal (the cluster's history shards), the workers and their pollers. */
async function describeStack(stack: BenchStack): Promise<void> {
  const { cluster } = stack;
  log(
    cluster
      ? `Temporal: a real cluster, ${cluster.versions}, ${cluster.historyShards} history shards (numHistoryShards); ` +
          "its PostgreSQL holds Temporal's persistence and visibility and the payment records"
      : 'Temporal: the dev server (temporal server start-dev, in memory)',
  );
  for (const [index, address] of stack.workerMetricsAddresses.entries()) {
    log(`payment worker ${index + 1} pollers (temporal_num_pollers): ${pollersLine(await workerPollers(address))}`);
  }
  const seen = await queuePollers(stack.client, PAYMENT_TASK_QUEUE);
  log(
    `Temporal sees ${seen.workflow} worker(s) polling workflow tasks and ${seen.activity} activity tasks on ` +
      `${PAYMENT_TASK_QUEUE} (DescribeTaskQueue)`,
  );
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[bench] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
