import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { ErrorEnvelope, PaymentList } from '../src/domain/api-resources';
import type { BatchProgress } from '../src/domain/batch-model';
import { paymentWorkflowId } from '../src/domain/ids';
import type { PaymentResource } from '../src/domain/payment-model';
import { newPaymentResource } from '../src/domain/payment-model';
import { waitUntil } from '../src/local/wait-until';
import { eventually } from '../src/local/eventually';
import { paymentFingerprint } from '../src/payments/fingerprint';
import { openDatabase } from '../src/records/database';
import { takePaymentKey } from '../src/records/idempotency-keys';
import { batchBody } from './support/batch-helpers';
import { paymentRequest, uniqueReference } from './support/request-builders';
import { MERCHANT_KEY, startStack, testDatabaseUrl, connectTestClient } from './support/test-stack';
import type { Stack } from './support/test-stack';

// The payment records in PostgreSQL, tried from outside: what Temporal forgets, the API still answers; lists page by
// (created_at, id) with every filter; and with PostgreSQL unreachable nothing starts.

const FINGERPRINT_SECRET = 'test-fingerprint-secret-0123456789abcdef';
// A merchant of its own: its lists page through every payment of its merchant in a range, and other files' batches
// add acme's payments at any time (an item's creation time comes before its record's commit).
const MERCHANT = 'records';

let temporal: Client;
let stack: Stack;
before(async () => {
  temporal = await connectTestClient();
  // A short late-callback window: settled payments' workflows close within seconds.
  stack = await startStack({ env: { LATE_CALLBACK_WINDOW: '1s', MERCHANT_API_KEYS: `${MERCHANT}:${MERCHANT_KEY}` } });
});
after(async () => {
  await stack?.close();
  await temporal?.connection.close();
});

/** Whether Temporal still has the workflow (running, closed, or not yet deleted). */
async function workflowExists(workflowId: string): Promise<boolean> {
  return temporal.workflow
    .getHandle(workflowId)
    .describe()
    .then(
      () => true,
      (err: unknown) => {
        if (err instanceof WorkflowNotFoundError) return false;
        throw err;
      },
    );
}

/** Deletes a closed workflow's history, as Temporal's retention does (`temporal workflow delete`). */
async function deleteHistory(workflowId: string): Promise<void> {
  const runId = await waitUntil(
    async () => {
      const description = await temporal.workflow.getHandle(workflowId).describe();
      return description.status.name === 'RUNNING' ? undefined : description.runId;
    },
    { timeoutMs: 20_000, timedOut: () => Promise.resolve(new Error(`${workflowId} still running after 20 s`)) },
  );
  // With its run id: without one, Temporal looks for a current (running) execution only.
  await temporal.workflowService.deleteWorkflowExecution({
    namespace: 'default',
    workflowExecution: { workflowId, runId },
  });
  // Deletion is asynchronous: the dev server takes about half a minute.
  await waitUntil(async () => !(await workflowExists(workflowId)) || undefined, {
    timeoutMs: 90_000,
    intervalMs: 1000,
    timedOut: () => Promise.resolve(new Error(`${workflowId} still in Temporal 90 s after its deletion`)),
  });
}

const query = (params: Record<string, string>) => new URLSearchParams(params).toString();

describe('a payment whose workflow history Temporal has deleted', () => {
  it('still answers GET with its final status, is listed, and re-sending its reference sends nothing', async () => {
    const body = paymentRequest('mobile_money_debit', '00');
    const created = await stack.api('POST', '/v1/payments', body);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const settled = await stack.waitForStatus(created.body.id, ['succeeded']);
    await deleteHistory(created.body.id);

    const shown = await stack.api('GET', `/v1/payments/${created.body.id}`);
    assert.equal(shown.status, 200, JSON.stringify(shown.body));
    assert.equal(shown.body.status, 'succeeded');
    assert.deepEqual(
      [shown.body.id, shown.body.reference, shown.body.amount, shown.body.created_at],
      [settled.id, settled.reference, settled.amount, settled.created_at],
    );

    const listed = await stack.api<PaymentList>('GET', `/v1/payments?${query({ reference: body.reference })}`);
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    assert.deepEqual(
      listed.body.data.map((p) => [p.id, p.status]),
      [[created.body.id, 'succeeded']],
    );

    const again = await stack.api('POST', '/v1/payments', body);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.deepEqual(again.body, shown.body);
    assert.equal(await workflowExists(created.body.id), false, 'no workflow was started again');
    assert.equal((await stack.upstreamRequests(created.body.id)).length, 1, 'the provider got one request only');

    const otherBody = await stack.api<ErrorEnvelope>('POST', '/v1/payments', { ...body, amount: body.amount + 1 });
    assert.equal(otherBody.status, 409, JSON.stringify(otherBody.body));
    assert.equal(otherBody.body.error.code, 'conflict');
  });

  it('a key taken by a request that crashed before the start is completed by the next attempt, once', async () => {
    // What a server that died between its transaction and the workflow's start leaves: the key and revision 0.
    const body = paymentRequest('mobile_money_debit', '00');
    if (body.type !== 'mobile_money_debit') throw new Error('a mobile-money request was asked for');
    const paymentId = paymentWorkflowId(MERCHANT, body.reference);
    const createdAt = new Date(Date.now() - 60_000).toISOString();
    const db = openDatabase(testDatabaseUrl());
    try {
      const first = newPaymentResource({
        paymentId,
        merchantId: MERCHANT,
        request: body,
        createdAt,
        timing: { callbackTimeoutMs: 0, reconcileForMs: 0, reconcileIntervalMs: 0 },
      });
      const key = {
        merchantId: MERCHANT,
        scope: 'payment' as const,
        reference: body.reference,
        fingerprint: paymentFingerprint(FINGERPRINT_SECRET, MERCHANT, body),
        resourceId: paymentId,
      };
      await takePaymentKey(db, key, first);
    } finally {
      await db.end();
    }
    assert.equal(await workflowExists(paymentId), false);

    const completed = await stack.api('POST', '/v1/payments', body);
    assert.equal(completed.status, 201, JSON.stringify(completed.body));
    assert.equal(completed.body.id, paymentId);
    assert.equal(completed.body.created_at, createdAt, 'the payment keeps the creation time of its record');
    await stack.waitForStatus(paymentId, ['succeeded']);
    const again = await stack.api('POST', '/v1/payments', body);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.status, 'succeeded');
    assert.equal((await stack.upstreamRequests(paymentId)).length, 1, 'the provider got one request only');
  });
});

describe('payment lists from the records', () => {
  const label = uniqueReference('keyset');
  const payments: PaymentResource[] = [];
  let from = '';
  before(async () => {
    from = new Date(Date.now() - 1).toISOString();
    const bodies = [
      paymentRequest('mobile_money_debit', '00', `${label}-a`),
      paymentRequest('bank_credit', '00', `${label}-b`),
      paymentRequest('mobile_money_debit', '11', `${label}-c`),
      paymentRequest('bank_credit', '00', `${label}-d`),
    ];
    for (const body of bodies) {
      const created = await stack.api('POST', '/v1/payments', body);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      payments.push(created.body);
    }
    await Promise.all(payments.map((p) => stack.waitForStatus(p.id, ['succeeded', 'failed'])));
  });

  /** Every page of a list, `limit` at a time, following `starting_after`. */
  async function allPages(path: string, params: Record<string, string>, limit: number): Promise<string[]> {
    const ids: string[] = [];
    let startingAfter: string | undefined;
    for (let pages = 0; pages < 20; pages += 1) {
      const cursor: Record<string, string> = startingAfter ? { starting_after: startingAfter } : {};
      const page = await stack.api<PaymentList>(
        'GET',
        `${path}?${query({ ...params, ...cursor, limit: String(limit) })}`,
      );
      assert.equal(page.status, 200, JSON.stringify(page.body));
      assert.ok(page.body.data.length <= limit);
      ids.push(...page.body.data.map((p) => p.id));
      if (!page.body.has_more) return ids;
      startingAfter = page.body.data.at(-1)?.id;
    }
    throw new Error('more than 20 pages');
  }

  const newestFirst = () =>
    [...payments].sort((a, b) => b.created_at.localeCompare(a.created_at) || (a.id < b.id ? 1 : -1)).map((p) => p.id);
  const to = () => new Date(Date.parse(payments.at(-1)?.created_at ?? '') + 1).toISOString();

  it('pages newest first by (created_at, id), one at a time or all at once, within a creation range', async () => {
    const range = { 'created[gte]': from, 'created[lt]': to() };
    const mine = (ids: string[]) => ids.filter((id) => id.includes(label));
    assert.deepEqual(mine(await allPages('/v1/payments', range, 1)), newestFirst());
    assert.deepEqual(mine(await allPages('/v1/payments', range, 100)), newestFirst());
  });

  it('filters by type, status, reference and the creation range', async () => {
    const list = async (params: Record<string, string>) =>
      (await allPages('/v1/payments', { 'created[gte]': from, ...params }, 100)).filter((id) => id.includes(label));
    const ids = payments.map((p) => p.id);
    assert.deepEqual(await list({ type: 'bank_credit' }), [ids[3], ids[1]]);
    // Scenario 11 fails.
    assert.deepEqual(await list({ status: 'failed' }), [ids[2]]);
    assert.deepEqual(await list({ status: 'succeeded', type: 'mobile_money_debit' }), [ids[0]]);
    assert.deepEqual(await list({ reference: `${label}-c` }), [ids[2]]);
    const third = payments[2]?.created_at ?? '';
    assert.deepEqual(await list({ 'created[lt]': third }), [ids[1], ids[0]]);
    assert.deepEqual(await list({ 'created[gte]': third }), [ids[3], ids[2]]);
  });

  it('refuses a creation range that is not a time, naming the parameter', async () => {
    const bad = await stack.api<ErrorEnvelope>('GET', `/v1/payments?${query({ 'created[gte]': 'yesterday' })}`);
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.deepEqual(
      bad.body.error.fields.map((f) => f.path),
      ['created[gte]'],
    );
  });

  it("lists a batch's items by batch, in /v1/payments?batch= and /v1/payout-batches/{id}/items alike", async () => {
    const created = await stack.api<BatchProgress>('POST', '/v1/payout-batches', batchBody(uniqueReference('rb'), 3));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const batchId = created.body.id;
    const items = await eventually(
      async () => {
        const ids = await allPages(`/v1/payout-batches/${batchId}/items`, {}, 1);
        assert.equal(ids.length, 3);
        return ids;
      },
      { timeoutMs: 30_000, what: `the 3 items of ${batchId} listed` },
    );
    assert.deepEqual(await allPages('/v1/payments', { batch: batchId }, 2), items);
    assert.deepEqual(await allPages('/v1/payments', { batch: batchId, type: 'mobile_money_debit' }, 2), []);
  });
});

describe('PostgreSQL unreachable', () => {
  let silent: Server;
  let down: Stack;
  before(async () => {
    // A port that accepts connections and never answers: the worst case, a time-out rather than a refusal.
    silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `postgres://u:p@127.0.0.1:${(silent.address() as AddressInfo).port}/records`;
    down = await startStack({ env: { DATABASE_URL: url } });
  });
  after(async () => {
    await down?.close();
    silent?.close();
  });

  it('POST answers 503 with Retry-After within 2 s and starts nothing; GET answers 503', async () => {
    const body = paymentRequest('mobile_money_debit', '00');
    const started = Date.now();
    const refused = await down.api<ErrorEnvelope>('POST', '/v1/payments', body);
    const tookMs = Date.now() - started;
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'unavailable');
    assert.equal(refused.headers['retry-after'], '2');
    assert.ok(tookMs < 2000, `answered after ${tookMs} ms`);
    const paymentId = paymentWorkflowId('acme', body.reference);
    assert.equal(await workflowExists(paymentId), false, 'no workflow was started');
    assert.equal((await down.upstreamRequests(paymentId)).length, 0);
    const read = await down.api('GET', `/v1/payments/${paymentId}`);
    assert.equal(read.status, 503, JSON.stringify(read.body));
    const list = await down.api('GET', '/v1/payments');
    assert.equal(list.status, 503, JSON.stringify(list.body));
  });
});
