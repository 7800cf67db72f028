import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { batchProgressSchema, paymentResourceSchema } from '../../src/domain/api-resources';
import type { BatchProgress } from '../../src/domain/batch';
import type { PaymentResource } from '../../src/domain/payment';
import { batchItemPaymentId, batchWorkflowId, paymentWorkflowId } from '../../src/domain/ids';
import { PAYMENT_TYPES } from '../../src/domain/requests';
import type { PaymentType } from '../../src/domain/requests';
import { callbackFaults } from './callback-faults';
import { callApi, newTally } from './merchant';
import { paymentIdOfCallbackUrl, providerFaults } from './provider-faults';
import { seededRandom } from './random';
import { verify } from './verify';
import type { Outage, Planned } from './verify';
import { paymentBody, batchItems, SCENARIOS } from './requests';
import { MERCHANT_ID, startChaosStack } from './stack';
import type { ChaosStack } from './stack';

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
/** Takes a process down, waits, brings it back; resolves to how long it was gone. */
async function outage(down: () => Promise<unknown>, forMs: number, up: () => Promise<unknown>): Promise<number> {
  const started = Date.now();
  await down();
  await sleep(forMs);
  await up();
  return Date.now() - started;
}

/** The faults, each due once this share of the payments is created. */
function faultSchedule(stack: ChaosStack) {
  const killWorker = () => outage(stack.killWorker, WORKER_DOWN_MS, stack.startWorker);
  return [
    { at: 0.1, what: 'worker SIGKILL', run: killWorker },
    { at: 0.25, what: 'Temporal server restart', run: () => stack.restartTemporal() },
    { at: 0.4, what: 'worker SIGKILL', run: killWorker },
    {
      at: 0.55,
      what: 'API server B SIGKILL',
      run: () =>
        outage(
          () => stack.killServer(1),
          SERVER_DOWN_MS,
          () => stack.startServer(1),
        ),
    },
    {
      at: 0.7,
      what: `Redis stopped ${REDIS_DOWN_MS / 1000} s`,
      run: () => outage(stack.stopRedis, REDIS_DOWN_MS, stack.startRedis),
    },
    { at: 0.85, what: 'worker SIGKILL', run: killWorker },
  ];
}

/** Runs payments and a batch through the whole stack while it breaks it, then checks every payment from outside. */
export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const { log } = options;
  const started = Date.now();
  const provider = providerFaults(seededRandom(options.seed), 0.1);
  const callbacks = callbackFaults(seededRandom(options.seed + 1), 0.4);
  const stack = await startChaosStack({
    handleProvider: provider.handle,
    handleCallback: callbacks.handle,
    batchConcurrency: 50,
  });
  try {
    const tally = newTally();
    const run = Date.now().toString(36);
    const plan: Planned[] = Array.from({ length: options.payments }, (_, i) => {
      const type = PAYMENT_TYPES[i % PAYMENT_TYPES.length] as PaymentType;
      const scenario = SCENARIOS[Math.floor(i / PAYMENT_TYPES.length) % SCENARIOS.length] as string;
      const reference = `chaos-${run}-${i + 1}`;
      return {
        id: paymentWorkflowId(MERCHANT_ID, reference),
        type,
        scenario,
        body: paymentBody(type, scenario, reference),
        batchItem: false,
      };
    });
    const batchReference = `chaos-batch-${run}`;
    const items = batchItems(options.batchItems);
    for (const item of items) {
      plan.push({
        id: batchItemPaymentId(MERCHANT_ID, batchReference, item.reference),
        type: 'bank_credit',
        scenario: item.account_number.slice(-2),
        body: item,
        batchItem: true,
      });
    }
    log(
      `seed ${options.seed} · ${options.payments} payments (${PAYMENT_TYPES.length} types × ${SCENARIOS.length} scenarios) and a batch of ${items.length} items`,
    );

    const batchId = batchWorkflowId(MERCHANT_ID, batchReference);
    const batch = await callApi(
      tally,
      stack.servers,
      'POST',
      '/v1/payout-batches',
      { reference: batchReference, items },
      batchProgressSchema,
      (b) => (b.id === batchId && b.total.count === items.length ? undefined : `batch answer ${b.id} ${b.total.count}`),
    );
    if (!batch) throw new Error(`the batch was not accepted: ${tally.wrong.join('; ')}`);

    // The load, and the faults as it reaches each share of it.
    let created = 0;
    const singles = plan.filter((p) => !p.batchItem);
    const outages: Outage[] = [];
    const faultLog: string[] = [];
    const load = (async () => {
      let next = 0;
      await Promise.all(
        Array.from({ length: options.concurrency }, async () => {
          while (next < singles.length) {
            const index = next++;
            const planned = singles[index] as Planned;
            await sleep(started + (index * options.loadForMs) / singles.length - Date.now());
            const body = planned.body as { reference: string; amount: number };
            await callApi(tally, stack.servers, 'POST', '/v1/payments', body, paymentResourceSchema, (p) =>
              p.id === planned.id &&
              p.reference === body.reference &&
              p.type === planned.type &&
              p.amount === body.amount
                ? undefined
                : `answered ${p.id} ${p.type} ${p.amount} for ${planned.id}`,
            );
            created++;
          }
        }),
      );
    })();
    const faults = (async () => {
      for (const fault of faultSchedule(stack)) {
        while (created < fault.at * singles.length) await sleep(100);
        const at = Date.now();
        const tookMs = await fault.run();
        outages.push({ at, until: at + tookMs });
        const line = `${fault.what} at ${created} payments created (back in ${(tookMs / 1000).toFixed(1)} s)`;
        faultLog.push(line);
        log(line);
      }
    })();
    let progress = setInterval(() => log(`${created}/${singles.length} payments created`), 5000);
    await Promise.all([load, faults]);
    clearInterval(progress);
    const loadDone = Date.now();
    log(`load done in ${((loadDone - started) / 1000).toFixed(0)} s; waiting for every payment to settle`);

    // Settling: every payment and batch item reaches a final status, checked through the API.
    const finals = new Map<string, PaymentResource>();
    const deadline = Date.now() + options.settleForMs;
    progress = setInterval(() => log(`${finals.size}/${plan.length} payments and items settled`), 10_000);
    while (finals.size < plan.length && Date.now() < deadline) {
      const open = plan.filter((p) => !finals.has(p.id));
      for (let i = 0; i < open.length; i += SETTLE_READERS) {
        await Promise.all(
          open.slice(i, i + SETTLE_READERS).map(async (p) => {
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
          }),
        );
      }
      if (finals.size < plan.length) await sleep(2000);
    }
    clearInterval(progress);
    const settledAt = Date.now();
    let finalBatch: BatchProgress | undefined;
    while (Date.now() < deadline + 30_000) {
      finalBatch = await callApi(
        tally,
        stack.servers,
        'GET',
        `/v1/payout-batches/${batchId}`,
        undefined,
        batchProgressSchema,
        () => undefined,
      );
      if (finalBatch?.status === 'completed') break;
      await sleep(1000);
    }
    await callbacks.settle();

    // What the provider knows, by payment: its ledger's initiation requests and transactions.
    const sandboxGet = async (path: string): Promise<Array<string | undefined>> => {
      const response = await request(`${stack.sandboxUrl}${path}`, {
        headers: { authorization: `Bearer ${stack.sandboxToken}` },
      });
      const records = (await response.body.json()) as LedgerRecord[];
      return records.map((r) => paymentIdOfCallbackUrl(r.body?.callback_url ?? r.callback_url ?? ''));
    };
    const verdict = verify({
      plan,
      finals,
      batch: finalBatch,
      ledger: {
        requests: await sandboxGet('/sandbox/requests'),
        transactions: await sandboxGet('/sandbox/transactions'),
      },
      providerRequests: provider.records,
      callbacks: callbacks.byPayment,
      outages,
      tally,
    });
    const seconds = (from: number, to: number) => `${((to - from) / 1000).toFixed(0)} s`;
    const figures = [
      `payments ${options.payments} (${PAYMENT_TYPES.length} types × ${SCENARIOS.length} scenarios) and a batch of ${items.length} items, seed ${options.seed}`,
      ...faultLog.map((line) => `fault: ${line}`),
      ...verdict.figures,
      `durations: load ${seconds(started, loadDone)}, settling ${seconds(loadDone, settledAt)}, total ${seconds(started, Date.now())}`,
      `payment by payment: ${options.reportFile}`,
    ];
    writeFileSync(
      options.reportFile,
      JSON.stringify({ figures, problems: verdict.problems, outages, payments: verdict.report }, null, 1),
    );
    return { figures, problems: verdict.problems };
  } finally {
    await stack.close();
  }
}
