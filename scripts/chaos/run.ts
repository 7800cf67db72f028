import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { parseKeyring } from '../../src/crypto/keyring';
import { batchProgressSchema, paymentResourceSchema } from '../../src/domain/api-resources';
import type { BatchProgress } from '../../src/domain/batch-model';
import type { PaymentResource } from '../../src/domain/payment-model';
import { batchItemPaymentId, batchWorkflowId, paymentWorkflowId } from '../../src/domain/ids';
import { PAYMENT_TYPES } from '../../src/domain/requests';
import type { PaymentType } from '../../src/domain/requests';
import { callbackFaults } from './callback-faults';
import { callApi, newTally } from './merchant';
import type { AnswerTally } from './merchant';
import { paymentIdOfCallbackUrl, providerFaults } from './provider-faults';
import { seededRandom } from './random';
import { verify } from './verify';
import type { Outage, Planned } from './verify';
import { SCENARIOS } from './scenario-digits';
import { sampleBatchItems, sampleRequest } from '../../src/local/sample-requests';
import { connectClient } from '../../src/temporal/temporal-client';
import { checkRecords } from './record-check';
import { MERCHANT_ID, startChaosStack } from './chaos-stack';
import type { ChaosStack } from './chaos-stack';

export interface ChaosOptions {
  payments: number;
  batchItems: number;
  seed: number;
  /** Merchants sending payments at once. */
  concurrency: number;
  /** The load is spread over at least this long, so that every fault lands while payments are being created. */
  loadForMs: number;
  /** Where the payment-by-payment report goes (JSON). */
  reportFile: string;
  /** How long payments may take to settle once the load is over. */
  settleForMs: number;
  /** How long, once they settled, workflows may take to finish and their records to catch up. */
  recordsForMs: number;
  /** The whole run, from its start: past it the run fails, and its servers are stopped. */
  limitMs: number;
  log: (line: string) => void;
}

export interface ChaosResult {
  /** The figures, one line each. */
  figures: string[];
  /** What went wrong: empty when every required zero is zero. */
  problems: string[];
}

interface LedgerRecord {
  callback_url?: string | null;
  body?: { callback_url?: string };
}

const FINAL = new Set<string>(['succeeded', 'failed', 'needs_review']);
/** Payments read at once while waiting for them to settle. */
const SETTLE_READERS = 32;
const WORKER_DOWN_MS = 2000;
const SERVER_DOWN_MS = 3000;
const REDIS_DOWN_MS = 10_000;
const POSTGRES_DOWN_MS = 10_000;
/** Runs `work`; resolves to how long it took. */
async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = Date.now();
  await work();
  return Date.now() - started;
}

/** Takes a process down, waits, brings it back; resolves to how long it was gone. */
function outage(down: () => Promise<unknown>, forMs: number, up: () => Promise<unknown>): Promise<number> {
  return timed(async () => {
    await down();
    await sleep(forMs);
    await up();
  });
}

/** The faults, each due once this share of the payments is created. */
function faultSchedule(stack: ChaosStack) {
  const killWorker = () => outage(stack.killWorker, WORKER_DOWN_MS, stack.startWorker);
  const seconds = POSTGRES_DOWN_MS / 1000;
  return [
    { at: 0.1, what: 'worker SIGKILL', run: killWorker },
    {
      // A network partition: connections open, nothing answers.
      at: 0.2,
      what: `PostgreSQL frozen ${seconds} s (SIGSTOP)`,
      run: () => timed(() => stack.postgres.freezeFor(POSTGRES_DOWN_MS)),
    },
    { at: 0.3, what: 'Temporal server restart', run: () => stack.restartTemporal() },
    { at: 0.4, what: 'worker SIGKILL', run: killWorker },
    {
      // A restart or a failover: connections refused.
      at: 0.5,
      what: `PostgreSQL stopped ${seconds} s`,
      run: () => timed(() => stack.postgres.stopFor(POSTGRES_DOWN_MS)),
    },
    {
      // A crash: no shutdown checkpoint, the next start replays the WAL. Early enough that payments are still being
      // created (the 10 s outages after it stall the load and bunch the last faults together).
      at: 0.6,
      what: 'PostgreSQL SIGKILL',
      run: () => timed(() => stack.postgres.crash()),
    },
    {
      at: 0.7,
      what: 'API server B SIGKILL',
      run: () =>
        outage(
          () => stack.killServer(1),
          SERVER_DOWN_MS,
          () => stack.startServer(1),
        ),
    },
    {
      at: 0.8,
      what: `Redis stopped ${REDIS_DOWN_MS / 1000} s`,
      run: () => outage(stack.stopRedis, REDIS_DOWN_MS, stack.startRedis),
    },
    { at: 0.9, what: 'worker SIGKILL', run: killWorker },
  ];
}

/** The payments and batch items of one run: every type over every scenario, and the batch's bank credits. */
function planRun(payments: number, batchItemCount: number) {
  const run = Date.now().toString(36);
  const plan: Planned[] = Array.from({ length: payments }, (_, i) => {
    const type = PAYMENT_TYPES[i % PAYMENT_TYPES.length] as PaymentType;
    const scenario = SCENARIOS[Math.floor(i / PAYMENT_TYPES.length) % SCENARIOS.length] as string;
    const reference = `chaos-${run}-${i + 1}`;
    const body = sampleRequest(type, scenario, reference);
    return { id: paymentWorkflowId(MERCHANT_ID, reference), type, scenario, body, batchItem: false };
  });
  const batchReference = `chaos-batch-${run}`;
  const items = sampleBatchItems(batchItemCount, SCENARIOS);
  for (const item of items) {
    plan.push({
      id: batchItemPaymentId(MERCHANT_ID, batchReference, item.reference),
      type: 'bank_credit',
      scenario: item.account_number.slice(-2),
      body: item,
      batchItem: true,
    });
  }
  return { plan, batch: { reference: batchReference, items } };
}

/**
 * Sends the single payments, spread over `loadForMs`, while the faults are set off as the load reaches each one's
 * share; resolves to the fault lines and the outages once both are over.
 */
async function loadWithFaults(stack: ChaosStack, tally: AnswerTally, singles: Planned[], options: ChaosOptions) {
  const started = Date.now();
  let created = 0;
  const outages: Outage[] = [];
  const faultLog: string[] = [];
  const load = async () => {
    let next = 0;
    const merchant = async () => {
      while (next < singles.length) {
        const index = next++;
        const planned = singles[index] as Planned;
        await sleep(started + (index * options.loadForMs) / singles.length - Date.now());
        const body = planned.body as { reference: string; amount: number };
        await callApi(tally, stack.servers, 'POST', '/v1/payments', body, paymentResourceSchema, (p) =>
          p.id === planned.id && p.reference === body.reference && p.type === planned.type && p.amount === body.amount
            ? undefined
            : `answered ${p.id} ${p.type} ${p.amount} for ${planned.id}`,
        );
        created++;
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, merchant));
  };
  const faults = async () => {
    for (const fault of faultSchedule(stack)) {
      while (created < fault.at * singles.length) await sleep(100);
      const at = Date.now();
      const tookMs = await fault.run();
      outages.push({ at, until: at + tookMs });
      const line = `${fault.what} at ${created} payments created (back in ${(tookMs / 1000).toFixed(1)} s)`;
      faultLog.push(line);
      options.log(line);
    }
  };
  const progress = setInterval(() => options.log(`${created}/${singles.length} payments created`), 5000);
  await Promise.all([load(), faults()]);
  clearInterval(progress);
  return { outages, faultLog };
}

/** Reads every payment and item through the API until all are final or the time is up. */
async function readFinals(stack: ChaosStack, tally: AnswerTally, plan: Planned[], options: ChaosOptions) {
  const finals = new Map<string, PaymentResource>();
  const deadline = Date.now() + options.settleForMs;
  const progress = setInterval(() => options.log(`${finals.size}/${plan.length} payments and items settled`), 10_000);
  const read = async (p: Planned) => {
    const payment = await callApi(
      tally,
      stack.servers,
      'GET',
      `/v1/payments/${encodeURIComponent(p.id)}`,
      undefined,
      paymentResourceSchema,
      (answer) => (answer.id === p.id ? undefined : `answered ${answer.id} for ${p.id}`),
      p.batchItem ? { status: 404, code: 'not_found' } : undefined,
    );
    if (payment && FINAL.has(payment.status)) finals.set(p.id, payment);
  };
  while (finals.size < plan.length && Date.now() < deadline) {
    const open = plan.filter((p) => !finals.has(p.id));
    for (let i = 0; i < open.length; i += SETTLE_READERS)
      await Promise.all(open.slice(i, i + SETTLE_READERS).map(read));
    if (finals.size < plan.length) await sleep(2000);
  }
  clearInterval(progress);
  return finals;
}

/** Reads the batch until it completes (its items are final by then, or the run has failed anyway). */
async function readBatch(stack: ChaosStack, tally: AnswerTally, batchId: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  let batch: BatchProgress | undefined;
  while (batch?.status !== 'completed' && Date.now() < deadline) {
    const path = `/v1/payout-batches/${batchId}`;
    batch = await callApi(tally, stack.servers, 'GET', path, undefined, batchProgressSchema, () => undefined);
    if (batch?.status !== 'completed') await sleep(1000);
  }
  return batch;
}

/** The payment id of each initiation request and each transaction in the provider's ledger. */
async function readLedger(stack: ChaosStack) {
  const ids = async (path: string) => {
    const response = await request(`${stack.sandboxUrl}${path}`, {
      headers: { authorization: `Bearer ${stack.sandboxToken}` },
    });
    const records = (await response.body.json()) as LedgerRecord[];
    return records.map((r) => paymentIdOfCallbackUrl(r.body?.callback_url ?? r.callback_url ?? ''));
  };
  return { requests: await ids('/sandbox/requests'), transactions: await ids('/sandbox/transactions') };
}

/** Runs payments and a batch through the whole stack while it breaks it, then checks every payment from outside. */
export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const started = Date.now();
  const provider = providerFaults(seededRandom(options.seed), 0.1);
  const callbacks = callbackFaults(seededRandom(options.seed + 1), 0.4);
  const stack = await startChaosStack({
    handleProvider: provider.handle,
    handleCallback: callbacks.handle,
    batchConcurrency: 50,
  });
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the run took longer than ${options.limitMs / 60_000} min`)),
      options.limitMs - (Date.now() - started),
    );
  });
  try {
    // Past its limit the run has failed; its servers stop all the same (they outlive this process otherwise).
    return await Promise.race([runOnStack(stack, provider, callbacks, options, started), limit]);
  } finally {
    clearTimeout(timer);
    await stack.close();
  }
}

/** The run itself, on a stack that is up: load with faults, settling, then every check. */
async function runOnStack(
  stack: ChaosStack,
  provider: ReturnType<typeof providerFaults>,
  callbacks: ReturnType<typeof callbackFaults>,
  options: ChaosOptions,
  started: number,
): Promise<ChaosResult> {
  const tally = newTally();
  const { plan, batch } = planRun(options.payments, options.batchItems);
  const shape = `(${PAYMENT_TYPES.length} types × ${SCENARIOS.length} scenarios) and a batch of ${batch.items.length} items`;
  options.log(`seed ${options.seed} · ${options.payments} payments ${shape}`);
  const batchId = batchWorkflowId(MERCHANT_ID, batch.reference);
  const accepted = await callApi(tally, stack.servers, 'POST', '/v1/payout-batches', batch, batchProgressSchema, (b) =>
    b.id === batchId && b.total.count === batch.items.length ? undefined : `batch answer ${b.id} ${b.total.count}`,
  );
  if (!accepted) throw new Error(`the batch was not accepted: ${tally.wrong.join('; ')}`);

  const singles = plan.filter((p) => !p.batchItem);
  const { outages, faultLog } = await loadWithFaults(stack, tally, singles, options);
  const loadDone = Date.now();
  options.log(`load done in ${((loadDone - started) / 1000).toFixed(0)} s; waiting for every payment to settle`);
  const finals = await readFinals(stack, tally, plan, options);
  const settledAt = Date.now();
  const finalBatch = await readBatch(stack, tally, batchId, 30_000);
  await callbacks.settle();

  const client = await connectClient({
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    ENCRYPTION_KEYS: parseKeyring(stack.encryptionKeys),
  });
  options.log('comparing every record with its workflow');
  const records = await checkRecords({
    client,
    databaseUrl: stack.postgres.url,
    paymentIds: plan.map((p) => p.id),
    batchId,
    answered: finals,
    timeoutMs: options.recordsForMs,
    log: options.log,
  }).finally(() => client.connection.close());
  const checked = verify({
    plan,
    finals,
    batch: finalBatch,
    ledger: await readLedger(stack),
    providerRequests: provider.records,
    callbacks: callbacks.byPayment,
    outages,
    tally,
  });
  const verdict = {
    ...checked,
    figures: [...checked.figures, ...records.figures],
    problems: [...checked.problems, ...records.problems],
  };
  const seconds = (from: number, to: number) => `${((to - from) / 1000).toFixed(0)} s`;
  const figures = [
    `payments ${options.payments} ${shape}, seed ${options.seed}`,
    ...faultLog.map((line) => `fault: ${line}`),
    ...verdict.figures,
    `durations: load ${seconds(started, loadDone)}, settling ${seconds(loadDone, settledAt)}, total ${seconds(started, Date.now())}`,
    `payment by payment: ${options.reportFile}`,
  ];
  const report = { figures, problems: verdict.problems, outages, payments: verdict.report };
  writeFileSync(options.reportFile, JSON.stringify(report, null, 1));
  return { figures, problems: verdict.problems };
}
