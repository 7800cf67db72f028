import type { BatchProgress } from '../../src/domain/batch-model';
import { batchItemId } from '../../src/domain/ids';
import type { PaymentResource } from '../../src/domain/payment-model';
import { PAYMENT_TYPES } from '../../src/domain/requests';
import type { PaymentType } from '../../src/domain/requests';
import { sampleRequest } from '../../src/local/sample-requests';
import { scenarioFor } from '../../src/sandbox/scenarios';
import type { BenchStack } from './bench-stack';
import { costTable, historyCost } from './history-cost';
import type { HistoryCost } from './history-cost';
import { idleHistory } from './history';
import type { Twin } from './phases';
import type { BenchSettings } from './settings';
import { log } from './stats';

/** The scenarios whose cost the bench prints, by the last two digits of a phone or account number. */
const COST_SCENARIOS = ['00', '11', '22', '99'] as const;
/** The scenario of the target: success by a callback that comes after the acknowledgement. */
export const CALLBACK_AFTER_ACK = '00';

/**
 * Timings that close a payment within seconds (reconciliation included), on a server of their own: the other
 * phases' figures keep the stack's settings.
 */
const SHORT_TIMING: Record<string, string> = {
  ...Object.fromEntries(['MOBILE_MONEY', 'CARD', 'BANK_CREDIT'].map((type) => [`CALLBACK_TIMEOUT_${type}`, '2s'])),
  RECONCILE_FOR: '3s',
  RECONCILE_INTERVAL: '500ms',
};

/** Each payment closes within this (the short timings add up to 5 s); longer is a broken run. */
const CLOSE_MS = 60_000;

export interface CostResult {
  /** Each payment's cost, by `type` and scenario digits: `mobile_money_debit 00`. */
  payments: Map<string, HistoryCost>;
  twin: HistoryCost;
}

/** The twin's cost: one run, signalled `signalDelayMs` after its Update returned (as a callback after the ack). */
export async function twinCost(stack: BenchStack, twin: Twin, signalDelayMs: number): Promise<HistoryCost> {
  const id = await twin.run(3_000_000, signalDelayMs);
  return historyCost((await idleHistory(stack.client, id)).events ?? []);
}

/** One payment of `type` in scenario `digits` through the merchant API, to its workflow's close; its cost. */
async function paymentCost(stack: BenchStack, api: BenchStack['api'], type: PaymentType, digits: string) {
  const reference = `cost-${Date.now().toString(36)}-${type}-${digits}`;
  const created = await api<PaymentResource>('POST', '/v1/payments', sampleRequest(type, digits, reference));
  if (created.status !== 201) throw new Error(`POST ${type} ${digits} answered ${created.status}`);
  const closed = stack.client.workflow.getHandle(created.body.id).result();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${type} ${digits}: ${created.body.id} still open after ${CLOSE_MS} ms`)),
      CLOSE_MS,
    );
  });
  await Promise.race([closed, late]).finally(() => clearTimeout(timer));
  return historyCost((await idleHistory(stack.client, created.body.id)).events ?? []);
}

/** A one-item payout batch's item (a bank credit in scenario `digits`), to its workflow's close; its cost. */
async function batchItemCost(stack: BenchStack, api: BenchStack['api'], digits: string) {
  const reference = `cost-${Date.now().toString(36)}-batch-${digits}`;
  const item = {
    reference: 'item-1',
    amount: 10,
    customer_name: 'Kofi Boateng',
    bank_code: 'GH030100',
    account_number: `12345678${digits}`,
    description: 'cost of an item',
  };
  const body = { reference, items: [item] };
  const created = await api<BatchProgress>('POST', '/v1/payout-batches', body);
  if (created.status !== 201) throw new Error(`POST a one-item batch answered ${created.status}`);
  const itemId = batchItemId(created.body.id, 'item-1');
  const deadline = Date.now() + CLOSE_MS;
  while (
    (
      await stack.client.workflow
        .getHandle(itemId)
        .describe()
        .catch(() => undefined)
    )?.status.name !== 'COMPLETED'
  ) {
    if (Date.now() > deadline) throw new Error(`batch item ${itemId} not closed after ${CLOSE_MS} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return historyCost((await idleHistory(stack.client, itemId)).events ?? []);
}

/**
 * (g) Cost per payment: one payment of each type in each common scenario, to its workflow's close (short timings, on a
 * server of their own), its history counted; beside the twin's (docs/performance.md#cost-per-payment).
 */
export async function costPhase(stack: BenchStack, settings: BenchSettings, twin: HistoryCost): Promise<CostResult> {
  const delay = settings.BENCH_OPEN_CALLBACK_DELAY_MS;
  log(
    `(g) cost per payment: each type in scenarios ${COST_SCENARIOS.join(', ')} to its close, callbacks ${delay} ms after`,
  );
  const server = await stack.startServerWith(SHORT_TIMING);
  stack.sandbox.setCallbackDelay(delay);
  try {
    const runs = PAYMENT_TYPES.flatMap((type) =>
      COST_SCENARIOS.map(
        async (digits) => [`${type} ${digits}`, await paymentCost(stack, server.api, type, digits)] as const,
      ),
    );
    const item = batchItemCost(stack, server.api, CALLBACK_AFTER_ACK);
    const payments = new Map(await Promise.all(runs));
    const rows = [...payments].map(([key, cost]) => {
      const digits = key.slice(-2);
      return [`${key}-${scenarioFor(digits)}`, cost] as const;
    });
    const itemRow = [`batch item ${CALLBACK_AFTER_ACK}-${scenarioFor(CALLBACK_AFTER_ACK)}`, await item] as const;
    for (const line of costTable([...rows, itemRow, ['twin', twin]])) log(`  ${line}`);
    return { payments, twin };
  } finally {
    stack.sandbox.setCallbackDelay(0);
    await server.stop();
  }
}

/** The most of one count (events by default) any type's payment took with its callback after its acknowledgement. */
export function callbackAfterAck(result: CostResult, count: keyof HistoryCost = 'events'): number {
  return Math.max(
    ...PAYMENT_TYPES.map((type) => result.payments.get(`${type} ${CALLBACK_AFTER_ACK}`)?.[count] ?? Number.NaN),
  );
}
