import { Client } from '@temporalio/client';
import type { BatchProgress } from '../../src/domain/batch-model';
import { CpuMeter, cpuLine, processTreeCpu } from './cpu';
import type { CpuPer } from './cpu';
import { callbackToFinal, idleEventCount, signalToCompletion } from './history';
import type { SignalSpan } from './history';
import { closedLoop, oneAtATime, openLoop } from './load';
import { createPayment, paymentToFinalStatus } from './payments';
import { localActivityTimes, writesLine, writesPer } from './postgres-stats';
import type { ActivityTimes, WritesPer } from './postgres-stats';
import { RssSampler } from './rss';
import type { BenchSettings } from './settings';
import { stopChild } from '../../src/local/stack-builder';
import { TWIN_TASK_QUEUE } from './bench-stack';
import type { BenchStack } from './bench-stack';
import { latencyLine, log } from './stats';
import { runTwin } from './twin-run';

export interface RateAndLatency {
  rate: number;
  serial: number[];
  /** CPU per run in the closed loop, by process. */
  cpu: CpuPer;
}

/** The full stack's closed loop, and what each payment wrote to PostgreSQL. */
export interface FullResult extends RateAndLatency {
  writes: WritesPer;
  /** The worker's recordPayment local activities in the closed loop: per payment, and their mean time. */
  recordPayment: ActivityTimes;
  /** The closed loop's payments, all final. */
  paymentIds: string[];
}

/** The twin's worker and a client for it; `run` is one twin from start to result. */
export interface Twin {
  run(index: number, signalDelayMs?: number): Promise<string>;
  cpu: CpuMeter;
  stop(): Promise<void>;
}

/** Starts the twin's own worker (kept until the open-loop phase has run the twin too). */
export async function startTwin(stack: BenchStack): Promise<Twin> {
  const worker = await stack.startTwinWorker();
  // Plain payloads: the twin has no codec, no signatures, no interceptors.
  const client = new Client({ connection: stack.client.connection, namespace: 'default' });
  const runId = Date.now().toString(36);
  const run = (i: number, signalDelayMs = 0) => runTwin(client, TWIN_TASK_QUEUE, `twin-${runId}-${i}`, signalDelayMs);
  // The payment worker idles meanwhile; the twin's own worker takes its place in the accounts.
  const cpu = new CpuMeter({ ...stack.cpu, worker: processTreeCpu(worker.pid ?? 0) });
  return { run, cpu, stop: () => stopChild(worker) };
}

/** (a) The twin: closed-loop rate, then one run at a time. */
export async function twinPhase(twin: Twin, settings: BenchSettings): Promise<RateAndLatency> {
  log('(a) twin: one no-op activity, an Update answered once it is done, one signal, completion');
  twin.cpu.start();
  const closed = await closedLoop(
    'twin',
    settings.BENCH_CLIENTS,
    settings.BENCH_WARMUP_SECONDS,
    settings.BENCH_RATE_SECONDS,
    (i) => twin.run(i).then(() => undefined),
  );
  log(
    `  twin closed loop: ${closed.rate.toFixed(1)}/s with ${settings.BENCH_CLIENTS} clients, ${latencyLine(closed.latencies)}`,
  );
  const cpu = twin.cpu.per(closed.completed);
  log(`  ${cpuLine(cpu)} (worker: the twin's)`);
  const serial = await oneAtATime(settings.BENCH_SERIAL, (i) => twin.run(1_000_000 + i).then(() => undefined));
  log(`  twin one at a time: ${latencyLine(serial)}`);
  return { rate: closed.rate, serial, cpu };
}

/** (b) and (c): the full stack's closed-loop rate, then one payment at a time. */
export async function fullPhase(stack: BenchStack, settings: BenchSettings): Promise<FullResult> {
  log('(b) full stack: POST /v1/payments (mobile money, scenario 00, callback at once) → GET shows succeeded');
  stack.sandbox.setCallbackDelay(0);
  const meter = new CpuMeter(stack.cpu);
  const writesBefore = await stack.postgresStats.counters();
  const recordBefore = await localActivityTimes(stack.workerMetricsAddresses, 'recordPayment');
  const paymentIds: string[] = [];
  meter.start();
  const closed = await closedLoop(
    'full',
    settings.BENCH_CLIENTS,
    settings.BENCH_WARMUP_SECONDS,
    settings.BENCH_RATE_SECONDS,
    async () => {
      paymentIds.push(await paymentToFinalStatus(stack));
    },
  );
  const cpu = meter.per(closed.completed);
  const writes = writesPer(
    writesBefore,
    await stack.postgresStats.counters(settings.BENCH_STATS_SETTLE_SECONDS * 1000),
    closed.completed,
  );
  const recordAfter = await localActivityTimes(stack.workerMetricsAddresses, 'recordPayment');
  const recordCount = recordAfter.count - recordBefore.count;
  const recordPayment = {
    count: recordCount / Math.max(closed.completed, 1),
    seconds: (recordAfter.seconds - recordBefore.seconds) / Math.max(recordCount, 1),
  };
  log(
    `  full closed loop: ${closed.rate.toFixed(1)}/s with ${settings.BENCH_CLIENTS} clients, ${latencyLine(closed.latencies)}`,
  );
  log(`  ${cpuLine(cpu)}`);
  log(`  records ${writesLine(writes, 'payment')}`);
  log(
    `  PostgreSQL CPU ${perWrite(cpu, writes)}; recordPayment local activity (worker): ` +
      `${recordPayment.count.toFixed(1)} per payment, mean ${(recordPayment.seconds * 1000).toFixed(1)} ms`,
  );
  log('(c) full stack, one payment at a time');
  const serial = await oneAtATime(settings.BENCH_SERIAL, () => paymentToFinalStatus(stack).then(() => undefined));
  log(`  full one at a time: ${latencyLine(serial)}`);
  return { rate: closed.rate, serial, cpu, writes, recordPayment, paymentIds };
}

/** PostgreSQL's CPU per row write and per commit, as "0.21 ms per row write · 0.30 ms per commit". */
export function perWrite(cpu: CpuPer, writes: WritesPer): string {
  const postgres = cpu.byProcess.postgres ?? 0;
  return (
    `${(postgres / Math.max(writes.rows, Number.EPSILON)).toFixed(2)} ms per row write · ` +
    `${(postgres / Math.max(writes.commits, Number.EPSILON)).toFixed(2)} ms per commit`
  );
}

export interface GetResult {
  rate: number;
  latencies: number[];
  cpu: CpuPer;
  writes: WritesPer;
}

/**
 * (c′) `GET /v1/payments/{id}` of the closed loop's final payments, by the same clients in a closed loop: a GET reads
 * PostgreSQL only, so Temporal and the worker should spend nothing on it.
 */
export async function getPhase(stack: BenchStack, settings: BenchSettings, paymentIds: string[]): Promise<GetResult> {
  log(`(c′) GET /v1/payments/{id} of the ${paymentIds.length} payments of (b), ${settings.BENCH_CLIENTS} clients`);
  const meter = new CpuMeter(stack.cpu);
  const writesBefore = await stack.postgresStats.counters();
  meter.start();
  const closed = await closedLoop('get', settings.BENCH_CLIENTS, 0, settings.BENCH_GET_SECONDS, async (i) => {
    const id = paymentIds[i % paymentIds.length] ?? '';
    const shown = await stack.api<{ status: string }>('GET', `/v1/payments/${id}`);
    if (shown.status !== 200 || shown.body.status !== 'succeeded')
      throw new Error(`GET ${id} answered ${shown.status} ${shown.body.status}, not succeeded`);
  });
  const cpu = meter.per(closed.completed);
  const writes = writesPer(
    writesBefore,
    await stack.postgresStats.counters(settings.BENCH_STATS_SETTLE_SECONDS * 1000),
    closed.completed,
  );
  log(`  GET closed loop: ${closed.rate.toFixed(1)}/s, ${latencyLine(closed.latencies)}`);
  log(`  ${cpuLine(cpu, 'GET')}`);
  log(`  PostgreSQL ${writesLine(writes, 'GET')}`);
  return { rate: closed.rate, latencies: closed.latencies, cpu, writes };
}

export interface OpenLoopResult {
  rate: number;
  postToFinal: number[];
  /** Callback signal → the commit of the record's final write: from then on `GET` answers the final status. */
  callbackToRecord: number[];
  /** Callback signal → the PaymentStatus upsert, written when the callback's workflow task completed. */
  callbackToFinal: number[];
  /** The twin at the same arrival rate: its signal → its completion, from its history. */
  twinSignalToEnd: number[];
  /** History events of a payment whose callback came after its acknowledgement (median of a few), and the twin's. */
  paymentEvents: number;
  twinEvents: number;
}

/** Histories counted per side: a few are enough (they differ only by a retried task), and each is one fetch. */
const EVENT_SAMPLES = 5;

/**
 * (d) Payments arriving at half the measured rate; callback → final status from each workflow's own history. Then the
 * twin at the same arrival rate, its signal sent as long after its Update as the callbacks come, for comparison.
 */
export async function openPhase(
  stack: BenchStack,
  twin: Twin,
  settings: BenchSettings,
  fullRate: number,
): Promise<OpenLoopResult> {
  const rate = Math.max(fullRate / 2, 0.5);
  const delay = settings.BENCH_OPEN_CALLBACK_DELAY_MS;
  const seconds = settings.BENCH_OPEN_SECONDS;
  log(`(d) open loop: ${rate.toFixed(1)} payments/s for ${seconds} s, callbacks ${delay} ms after initiation`);
  stack.sandbox.setCallbackDelay(delay);
  let full: { results: string[]; latencies: number[] };
  try {
    full = await openLoop('open', rate, seconds, () => paymentToFinalStatus(stack));
  } finally {
    stack.sandbox.setCallbackDelay(0);
  }
  const callbackSpans: SignalSpan[] = [];
  for (const id of full.results) {
    const span = await callbackToFinal(stack.client, id);
    if (!span) throw new Error(`payment ${id}: no callback signal before its final status in its history`);
    callbackSpans.push(span);
  }
  const callbackToFinalMs = callbackSpans.map((span) => span.totalMs);
  const committed = await stack.postgresStats.recordCommits(full.results);
  const callbackToRecordMs = full.results.map((id, i) => {
    const at = committed.get(id);
    const signalledAt = callbackSpans[i]?.signalledAt ?? Number.NaN;
    // The final write comes after the callback: a commit before it (or none) is a broken measurement.
    if (at === undefined || !(at >= signalledAt))
      throw new Error(`payment ${id}: no commit of its record after its callback (${at ?? 'none'}, ${signalledAt})`);
    return at - signalledAt;
  });
  log(`  POST → final status: ${latencyLine(full.latencies)} (includes the ${delay} ms callback delay)`);
  log(`  callback → final status in the record (its commit): ${latencyLine(callbackToRecordMs)}`);
  log(`  callback → final status in Temporal (its upsert, history): ${latencyLine(callbackToFinalMs)}`);
  logSplit(callbackSpans);
  log(`  the twin at ${rate.toFixed(1)}/s, signalled ${delay} ms after its Update returned`);
  const twinRuns = await openLoop('twin open', rate, seconds, (i) => twin.run(2_000_000 + i, delay));
  const twinSpans: SignalSpan[] = [];
  for (const id of twinRuns.results) {
    const span = await signalToCompletion(stack.client, id);
    if (!span) throw new Error(`twin ${id}: no signal before its completion in its history`);
    twinSpans.push(span);
  }
  const twinSignalToEnd = twinSpans.map((span) => span.totalMs);
  log(`  twin signal → completion (history): ${latencyLine(twinSignalToEnd)}`);
  logSplit(twinSpans);
  const paymentEvents = await medianEvents(stack, full.results);
  const twinEvents = await medianEvents(stack, twinRuns.results);
  log(
    `  history events per payment: ${paymentEvents} (callback after its acknowledgement, to its close); ` +
      `per twin: ${twinEvents}`,
  );
  return {
    rate,
    postToFinal: full.latencies,
    callbackToRecord: callbackToRecordMs,
    callbackToFinal: callbackToFinalMs,
    twinSignalToEnd,
    paymentEvents,
    twinEvents,
  };
}

async function medianEvents(stack: BenchStack, workflowIds: string[]): Promise<number> {
  const counts: number[] = [];
  for (const id of workflowIds.slice(0, EVENT_SAMPLES)) counts.push(await idleEventCount(stack.client, id));
  return counts.sort((a, b) => a - b)[Math.floor(counts.length / 2)] ?? Number.NaN;
}

/** Where a signal's time went: waiting for a worker to take the workflow task, then the worker's own time. */
function logSplit(spans: SignalSpan[]): void {
  log(`    of which waiting for a worker: ${latencyLine(spans.map((span) => span.queueMs))}`);
  log(`    of which the workflow task: ${latencyLine(spans.map((span) => span.workMs))}`);
}

export interface WaitingResult {
  count: number;
  peakMb: number;
  settledMb: number;
  seconds: number;
}

/** (e) Payments that get no callback (scenario 33) pile up waiting; the worker's RSS is sampled meanwhile. */
export async function waitingPhase(
  stack: BenchStack,
  settings: BenchSettings,
  clients: number,
): Promise<WaitingResult> {
  const total = settings.BENCH_WAITING;
  log(`(e) ${total} payments left waiting for a callback (scenario 33), worker RSS sampled`);
  const sampler = new RssSampler(stack.workerPids);
  const started = Date.now();
  let created = 0;
  let lastPrint = started;
  try {
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (created < total) {
          created += 1;
          const payment = await createPayment(stack, '33');
          if (payment.status !== 'pending') throw new Error(`waiting payment ${payment.id} is ${payment.status}`);
          if (Date.now() - lastPrint >= 10_000) {
            lastPrint = Date.now();
            log(
              `  ${created}/${total} waiting · worker RSS ${sampler.now().toFixed(0)} MB (peak ${sampler.peak.toFixed(0)})`,
            );
          }
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    // Let the last workflow tasks and the cache settle, then read what it holds on to.
    await new Promise((r) => setTimeout(r, 5000));
    const settledMb = sampler.now();
    log(
      `  ${total} waiting after ${seconds.toFixed(0)} s: worker RSS ${settledMb.toFixed(0)} MB, peak ${sampler.peak.toFixed(0)} MB`,
    );
    return { count: total, peakMb: sampler.peak, settledMb, seconds };
  } finally {
    sampler.stop();
  }
}

export interface BatchResult {
  items: number;
  /** The batches the items were split over. */
  batches: number;
  succeeded: number;
  failed: number;
  /** How many items the sandbox fails by design. */
  expectedFailed: number;
  seconds: number;
  /** CPU per item, from the batches' creation to their completion. */
  cpu: CpuPer;
  peakMb: number;
  runs: number;
  maxEvents: number;
}

function batchBody(reference: string, items: number) {
  return {
    reference,
    items: Array.from({ length: items }, (_, i) => ({
      reference: `item-${i + 1}`,
      amount: 10 + (i % 50),
      customer_name: 'Kofi Boateng',
      bank_code: 'GH030100',
      // One item in ten fails; the rest succeed by callback.
      account_number: `12345678${i % 10 === 0 ? '11' : '00'}`,
      description: `salary ${i + 1}`,
    })),
  };
}

export interface CreditResult {
  rate: number;
  /** CPU per credit over the whole loop (warm-up included), by process. */
  cpu: CpuPer;
}

/**
 * (f′) Single bank credits, as many clients as the batch's concurrency, callbacks 200 ms after: the rate a batch of
 * the same concurrency is compared with.
 */
export async function creditPhase(stack: BenchStack, settings: BenchSettings): Promise<CreditResult> {
  const clients = settings.BENCH_CONCURRENCY;
  log(
    `(f′) single bank credits: ${clients} clients in a closed loop, callbacks 200 ms after (the batch's rate to match)`,
  );
  stack.sandbox.setCallbackDelay(200);
  const meter = new CpuMeter(stack.cpu);
  meter.start();
  try {
    const closed = await closedLoop(
      'credits',
      clients,
      settings.BENCH_WARMUP_SECONDS,
      settings.BENCH_CREDIT_SECONDS,
      async () => {
        await paymentToFinalStatus(stack, 'credit');
      },
    );
    const cpu = meter.per(closed.completed);
    log(`  single bank credits: ${closed.rate.toFixed(1)}/s with ${clients} clients, ${latencyLine(closed.latencies)}`);
    log(`  ${cpuLine(cpu, 'credit')}`);
    return { rate: closed.rate, cpu };
  } finally {
    stack.sandbox.setCallbackDelay(0);
  }
}

/**
 * (f) One payout batch through the stack, or its items split over BENCH_BATCHES batches run at once: items per second,
 * peak worker RSS, the runs' history lengths.
 */
export async function batchPhase(stack: BenchStack, settings: BenchSettings): Promise<BatchResult> {
  const items = settings.BENCH_ITEMS;
  const count = settings.BENCH_BATCHES;
  const concurrency = settings.BENCH_CONCURRENCY / count;
  log(
    count === 1
      ? `(f) one payout batch of ${items} items at concurrency ${concurrency}, callbacks 200 ms after`
      : `(f) ${items} items in ${count} payout batches at once, each at concurrency ${concurrency}, callbacks 200 ms after`,
  );
  stack.sandbox.setCallbackDelay(200);
  const sampler = new RssSampler(stack.workerPids);
  const meter = new CpuMeter(stack.cpu);
  meter.start();
  try {
    const sizes = Array.from({ length: count }, (_, k) => Math.floor(items / count) + (k < items % count ? 1 : 0));
    const stamp = Date.now();
    let batches = await Promise.all(
      sizes.map(async (size, k) => {
        const created = await stack.api<BatchProgress>(
          'POST',
          '/v1/payout-batches',
          batchBody(`bench-${stamp}-${k + 1}`, size),
        );
        if (created.status !== 201) throw new Error(`a batch was refused: ${JSON.stringify(created.body)}`);
        return created.body;
      }),
    );
    const accepted = Date.now();
    let lastPrint = 0;
    while (batches.some((batch) => batch.status !== 'completed')) {
      await new Promise((r) => setTimeout(r, 1000));
      batches = await Promise.all(
        batches.map(async (batch) => {
          if (batch.status === 'completed') return batch;
          const polled = await stack.api<BatchProgress>('GET', `/v1/payout-batches/${batch.id}`);
          // A busy worker may miss a query deadline: asked again next time.
          return polled.status === 200 ? polled.body : batch;
        }),
      );
      const done = batches.reduce(
        (sum, b) => sum + b.total.count - b.items.not_started.count - b.items.in_flight.count,
        0,
      );
      if (Date.now() - lastPrint >= 10_000) {
        lastPrint = Date.now();
        const rate = done / ((Date.now() - accepted) / 1000);
        log(`  ${done}/${items} done · ${rate.toFixed(1)} items/s · worker RSS ${sampler.now().toFixed(0)} MB`);
      }
    }
    const seconds = (Date.now() - accepted) / 1000;
    const cpu = meter.per(items);
    let runs = 0;
    let maxEvents = 0;
    for (const batch of batches) {
      for await (const run of stack.client.workflow.list({ query: `WorkflowId = "${batch.id}"` })) {
        runs += 1;
        maxEvents = Math.max(maxEvents, run.historyLength);
      }
    }
    const result = {
      items,
      batches: count,
      succeeded: batches.reduce((sum, b) => sum + b.items.succeeded.count, 0),
      failed: batches.reduce((sum, b) => sum + b.items.failed.count, 0),
      // One item in ten of each batch fails (batchBody).
      expectedFailed: sizes.reduce((sum, size) => sum + Math.ceil(size / 10), 0),
      seconds,
      cpu,
      peakMb: sampler.peak,
      runs,
      maxEvents,
    };
    log(
      `  ${items} items in ${seconds.toFixed(0)} s (${(items / seconds).toFixed(1)} items/s), peak worker RSS ${sampler.peak.toFixed(0)} MB`,
    );
    log(`  ${cpuLine(cpu, 'item')}`);
    return result;
  } finally {
    sampler.stop();
    stack.sandbox.setCallbackDelay(0);
  }
}
