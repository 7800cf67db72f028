import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BatchProgress } from '../src/domain/batch-model';
import type { PaymentResource } from '../src/domain/payment-model';
import { batchBody, waitForBatch } from './support/batch-helpers';
import { paymentRequest, uniqueReference } from './support/request-builders';
import { OPERATOR_KEY, OPERATOR_NAME, OTHER_MERCHANT_KEY, startStack } from './support/test-stack';
import type { Stack } from './support/test-stack';

interface ErrorBody {
  error: { code: string; message: string; fields: { path: string; message: string }[] };
}

/** Small, so that an over-limit upload is quick to build; the default is 64 MiB. */
const UPLOAD_LIMIT = 256 * 1024;

let stack: Stack;
before(async () => {
  stack = await startStack({ env: { BATCH_CONCURRENCY: '3', BATCH_UPLOAD_LIMIT_BYTES: String(UPLOAD_LIMIT) } });
});
after(async () => {
  await stack?.close();
});

function fieldPaths(body: unknown): string[] {
  return (body as ErrorBody).error.fields.map((f) => f.path);
}

async function assertNoBatch(reference: string): Promise<void> {
  const response = await stack.api('GET', `/v1/payout-batches/batch-acme-${reference}`, undefined, OPERATOR_KEY);
  assert.equal(response.status, 404, 'an invalid batch starts nothing');
}

describe('bank codes', () => {
  it('refuses a single bank credit to a bank the provider does not list, before sending anything', async () => {
    const body = { ...paymentRequest('bank_credit', '00'), bank_code: 'XX999999' };
    const response = await stack.api<ErrorBody>('POST', '/v1/payments', body);
    assert.equal(response.status, 400);
    assert.deepEqual(fieldPaths(response.body), ['bank_code']);
    assert.match(response.body.error.fields[0]?.message ?? '', /not a bank the provider supports/);
    const listed = await stack.api<{ data: unknown[] }>('GET', `/v1/payments?reference=${body.reference}`);
    assert.equal(listed.body.data.length, 0);
  });
});

describe('payout batch validation', () => {
  it('names every bad item and field', async () => {
    const body = batchBody(uniqueReference('bad'), 6);
    const items = body.items as Record<string, unknown>[];
    items[1] = { ...items[1], amount: -5 };
    items[2] = { ...items[2], account_number: 'no spaces allowed' };
    items[3] = { ...items[3], reference: items[0]?.reference };
    items[4] = { ...items[4], iban: 'GB00' };
    items[5] = { ...items[5], type: 'card_payment' };
    const response = await stack.api<ErrorBody>('POST', '/v1/payout-batches', body);
    assert.equal(response.status, 400);
    assert.deepEqual(fieldPaths(response.body).sort(), [
      'items.1.amount',
      'items.2.account_number',
      'items.4.iban',
      'items.5.type',
    ]);
    await assertNoBatch(body.reference);
  });

  it('refuses a repeated item reference, naming both places', async () => {
    const body = batchBody(uniqueReference('dup'), 3);
    const items = body.items as Record<string, unknown>[];
    items[2] = { ...items[2], reference: items[0]?.reference };
    const response = await stack.api<ErrorBody>('POST', '/v1/payout-batches', body);
    assert.equal(response.status, 400);
    assert.deepEqual(response.body.error.fields, [{ path: 'items.2.reference', message: 'repeats items.0.reference' }]);
  });

  it('refuses unknown bank codes in items', async () => {
    const body = batchBody(uniqueReference('bank'), 4);
    const items = body.items as Record<string, unknown>[];
    items[3] = { ...items[3], bank_code: 'NOPE01' };
    const response = await stack.api<ErrorBody>('POST', '/v1/payout-batches', body);
    assert.equal(response.status, 400);
    assert.deepEqual(fieldPaths(response.body), ['items.3.bank_code']);
    await assertNoBatch(body.reference);
  });

  it('refuses empty and shapeless batches', async () => {
    const cases: [unknown, string, RegExp][] = [
      [{ reference: 'empty-1', items: [] }, 'items', /at least one item/],
      [{ reference: 'not-array', items: { a: 1 } }, 'items', /array/],
      [{ items: [] }, 'reference', /./],
      [[1, 2, 3], '(body)', /./],
    ];
    for (const [body, path, message] of cases) {
      const response = await stack.api<ErrorBody>('POST', '/v1/payout-batches', body);
      assert.equal(response.status, 400, JSON.stringify(body).slice(0, 80));
      const field = response.body.error.fields.find((f) => f.path === path);
      assert.ok(field, `${path} named in ${JSON.stringify(response.body.error.fields).slice(0, 300)}`);
      assert.match(field.message, message);
    }
  });

  it('bounds the upload by BATCH_UPLOAD_LIMIT_BYTES, not by an item count', async () => {
    const over = batchBody(uniqueReference('too-big'), 3000);
    assert.ok(JSON.stringify(over).length > UPLOAD_LIMIT);
    const refused = await stack.api<ErrorBody>('POST', '/v1/payout-batches', over);
    assert.equal(refused.status, 413);
    assert.equal(refused.body.error.code, 'payload_too_large');
    await assertNoBatch(over.reference);
  });

  it('needs a merchant key to submit', async () => {
    const body = batchBody(uniqueReference('op'), 1);
    assert.equal((await stack.api('POST', '/v1/payout-batches', body, OPERATOR_KEY)).status, 403);
    assert.equal((await stack.api('POST', '/v1/payout-batches', body, null)).status, 401);
  });
});

describe('payout batch runs', () => {
  it('runs each item as its own payment and completes with the count of every status', async () => {
    const body = batchBody(uniqueReference('run'), 10, ['00', '11', '33', '88', '22']);
    const created = await stack.api<BatchProgress>('POST', '/v1/payout-batches', body);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.total.count, 10);
    assert.equal(
      created.body.total.amount,
      body.items.reduce((sum, item) => sum + item.amount, 0),
    );

    const again = await stack.api<BatchProgress>('POST', '/v1/payout-batches', body);
    assert.equal(again.status, 200, 'the same batch again is the same batch');
    assert.equal(again.body.id, created.body.id);
    const changed = { ...body, items: body.items.slice(1) };
    assert.equal((await stack.api('POST', '/v1/payout-batches', changed)).status, 409);

    const batch = await waitForBatch(stack, created.body.id, (b) => b.status === 'completed');
    assert.deepEqual(
      [batch.items.succeeded.count, batch.items.failed.count, batch.items.needs_review.count],
      [4, 4, 2],
    );
    assert.equal(batch.items.not_started.count + batch.items.in_flight.count, 0);
    assert.ok(batch.finished_at && batch.finished_at >= batch.started_at);
    assert.equal(batch.needs_review.length, 2);

    // Items are payments of their own: findable, with the same state machine as a single bank credit.
    const reviewId = batch.needs_review[0] ?? '';
    const item = await stack.api<PaymentResource>('GET', `/v1/payments/${encodeURIComponent(reviewId)}`);
    assert.equal(item.status, 200);
    assert.equal(item.body.status, 'needs_review');
    assert.equal(item.body.type, 'bank_credit');

    // Items in review stay resolvable one by one after the batch completed.
    const resolved = await stack.api<PaymentResource>(
      'POST',
      `/v1/payments/${encodeURIComponent(reviewId)}/resolve`,
      { outcome: 'succeeded', note: 'confirmed with the bank' },
      OPERATOR_KEY,
    );
    assert.equal(resolved.status, 200);
    assert.equal(resolved.body.status, 'succeeded');
    const after = await stack.api<BatchProgress>('GET', `/v1/payout-batches/${batch.id}`);
    assert.equal(after.body.status, 'completed');

    assert.equal((await stack.api('GET', `/v1/payout-batches/${batch.id}`, undefined, OTHER_MERCHANT_KEY)).status, 404);
    assert.equal((await stack.api('POST', `/v1/payout-batches/${batch.id}/pause`)).status, 409);
  });

  it('pauses, resumes and cancels: cancel lets in-flight items finish and reports those never started', async () => {
    // Scenario 22 never calls back, so each item holds its slot until reconciliation (a few seconds).
    const body = batchBody(uniqueReference('ctl'), 12, ['22']);
    const created = await stack.api<BatchProgress>('POST', '/v1/payout-batches', body);
    assert.equal(created.status, 201);
    const id = created.body.id;

    const paused = await stack.api<BatchProgress>('POST', `/v1/payout-batches/${id}/pause`);
    assert.equal(paused.status, 200);
    assert.equal(paused.body.status, 'paused');
    const drained = await waitForBatch(stack, id, (b) => b.items.in_flight.count === 0, 30_000);
    const startedWhilePaused = drained.total.count - drained.items.not_started.count;
    assert.ok(startedWhilePaused <= 3, 'no more than the concurrency started');
    await new Promise((r) => setTimeout(r, 1500));
    const still = await stack.api<BatchProgress>('GET', `/v1/payout-batches/${id}`);
    assert.equal(still.body.items.not_started.count, drained.items.not_started.count, 'a paused batch starts nothing');

    assert.equal((await stack.api('POST', `/v1/payout-batches/${id}/resume`, undefined, OPERATOR_KEY)).status, 200);
    await waitForBatch(stack, id, (b) => b.items.not_started.count < drained.items.not_started.count, 30_000);

    const cancelling = await stack.api<BatchProgress>('POST', `/v1/payout-batches/${id}/cancel`);
    assert.equal(cancelling.status, 200);
    assert.equal(cancelling.body.status, 'cancelling');
    assert.equal((await stack.api('POST', `/v1/payout-batches/${id}/resume`)).status, 409);
    const cancelled = await waitForBatch(stack, id, (b) => b.status === 'cancelled', 30_000);
    assert.equal(cancelled.items.in_flight.count, 0);
    assert.equal(cancelled.items.succeeded.count + cancelled.items.not_started.count, 12, 'in-flight items finished');
    assert.ok(cancelled.items.not_started.count > 0);
    assert.equal(cancelled.not_started?.length, cancelled.items.not_started.count);
    for (const reference of cancelled.not_started ?? []) {
      const paymentId = `payment-acme-${body.reference}~${reference}`;
      assert.equal((await stack.upstreamRequests(paymentId)).length, 0, `${reference} was never sent`);
      assert.equal((await stack.api('GET', `/v1/payments/${encodeURIComponent(paymentId)}`)).status, 404);
    }
    assert.equal((await stack.api('POST', `/v1/payout-batches/${id}/cancel`)).status, 409);
  });

  it("keeps an operator's pause against the merchant's resume, and names who paused", async () => {
    const body = batchBody(uniqueReference('hold'), 12, ['22']);
    const created = await stack.api<BatchProgress>('POST', '/v1/payout-batches', body);
    assert.equal(created.status, 201);
    const id = created.body.id;
    assert.equal(created.body.paused_by, null);

    const held = await stack.api<BatchProgress>('POST', `/v1/payout-batches/${id}/pause`, undefined, OPERATOR_KEY);
    assert.equal(held.status, 200);
    assert.equal(held.body.paused_by, OPERATOR_NAME);
    const drained = await waitForBatch(stack, id, (b) => b.items.in_flight.count === 0, 30_000);

    // The merchant's resume (and a pause over the hold, then a resume) lifts nothing.
    const resumed = await stack.api<ErrorBody>('POST', `/v1/payout-batches/${id}/resume`);
    assert.equal(resumed.status, 409);
    assert.match(resumed.body.error.message, /paused by an operator .*only an operator can resume it/);
    assert.equal((await stack.api('POST', `/v1/payout-batches/${id}/pause`)).status, 200);
    assert.equal((await stack.api('POST', `/v1/payout-batches/${id}/resume`)).status, 409);
    await new Promise((r) => setTimeout(r, 1000));
    const still = await stack.api<BatchProgress>('GET', `/v1/payout-batches/${id}`);
    assert.equal(still.body.status, 'paused');
    assert.equal(still.body.paused_by, OPERATOR_NAME, "the merchant's pause did not replace the operator's");
    assert.equal(still.body.items.not_started.count, drained.items.not_started.count, 'nothing started');

    const lifted = await stack.api<BatchProgress>('POST', `/v1/payout-batches/${id}/resume`, undefined, OPERATOR_KEY);
    assert.equal(lifted.status, 200);
    assert.equal(lifted.body.paused_by, null);
    assert.equal((await stack.api('POST', `/v1/payout-batches/${id}/cancel`)).status, 200);
  });

  it('answers 404 for unknown batches and actions', async () => {
    assert.equal((await stack.api('GET', '/v1/payout-batches/batch-acme-nothing-here')).status, 404);
    assert.equal((await stack.api('POST', '/v1/payout-batches/batch-acme-nothing-here/pause')).status, 404);
    assert.equal((await stack.api('POST', '/v1/payout-batches/batch-acme-x/explode')).status, 404);
  });
});

describe('metadata', () => {
  it('is answered with the batch on POST and GET, is part of the body, and stays off its items and the provider', async () => {
    const marker = `batch-meta-${Date.now()}`;
    const metadata = { run: marker, cost_centre: 'cc-7' };
    const body = { ...batchBody(uniqueReference('meta'), 2), metadata };
    const created = await stack.api<BatchProgress>('POST', '/v1/payout-batches', body);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.metadata, metadata);
    const again = await stack.api<BatchProgress>('POST', '/v1/payout-batches', body);
    assert.equal(again.status, 200);
    assert.deepEqual(again.body.metadata, metadata);
    const other = await stack.api('POST', '/v1/payout-batches', { ...body, metadata: { run: 'other' } });
    assert.equal(other.status, 409, 'other metadata with the same reference');
    const { metadata: _kept, ...withoutMetadata } = body;
    assert.equal((await stack.api('POST', '/v1/payout-batches', withoutMetadata)).status, 409, 'none at all');

    const batch = await waitForBatch(stack, created.body.id, (b) => b.status === 'completed');
    assert.deepEqual(batch.metadata, metadata, 'kept through the workflow and its record');
    const read = await stack.api<BatchProgress>('GET', `/v1/payout-batches/${batch.id}`);
    assert.deepEqual(read.body.metadata, metadata);

    const items = await stack.api<{ data: { id: string; metadata?: unknown }[] }>(
      'GET',
      `/v1/payout-batches/${batch.id}/items`,
    );
    assert.equal(items.body.data.length, 2);
    assert.ok(
      items.body.data.every((item) => !('metadata' in item)),
      'the batch metadata is not its items',
    );
    for (const item of items.body.data) {
      const upstream = await stack.upstreamRequests(item.id);
      assert.equal(upstream.length, 1);
      assert.ok(!JSON.stringify(upstream).includes(marker), 'never sent to the provider');
    }
    const noBatch = await stack.api<{ metadata?: unknown }>(
      'POST',
      '/v1/payout-batches',
      batchBody(uniqueReference('nm'), 1),
    );
    assert.equal(noBatch.status, 201);
    assert.equal('metadata' in noBatch.body, false, 'no metadata answered when none was given');
  });

  it('bad metadata, or metadata on an item: 400 naming the field, nothing started', async () => {
    const cases: [unknown, string][] = [
      [Object.fromEntries(Array.from({ length: 21 }, (_, n) => [`key${n}`, 'v'])), 'metadata'],
      [{ ['k'.repeat(41)]: 'v' }, `metadata.${'k'.repeat(41)}`],
      [{ some_key: 'v'.repeat(501) }, 'metadata.some_key'],
      [{ some_key: 1 }, 'metadata.some_key'],
    ];
    for (const [metadata, path] of cases) {
      const body = { ...batchBody(uniqueReference('badmeta'), 1), metadata };
      const response = await stack.api<ErrorBody>('POST', '/v1/payout-batches', body);
      assert.equal(response.status, 400);
      assert.deepEqual(fieldPaths(response.body), [path]);
      await assertNoBatch(body.reference);
    }
    const body = batchBody(uniqueReference('itemmeta'), 2);
    const items = body.items as Record<string, unknown>[];
    items[1] = { ...items[1], metadata: { order_id: '1' } };
    const response = await stack.api<ErrorBody>('POST', '/v1/payout-batches', body);
    assert.equal(response.status, 400);
    assert.deepEqual(fieldPaths(response.body), ['items.1.metadata']);
    await assertNoBatch(body.reference);
  });
});
