import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { PaymentResource, PaymentStatus } from '../src/domain/payment-model';
import type { PaymentType } from '../src/domain/requests';
import { openDatabase } from '../src/records/database';
import type { Database } from '../src/records/database';
import { takePaymentKey } from '../src/records/idempotency-keys';
import { listPayments, paymentExists, readPayment } from '../src/records/record-reads';
import { testDatabaseUrl } from './support/test-stack';
import type { Client } from '@temporalio/client';
import { PaymentReads } from '../src/payments/payment-reads';

/** A payment record as the server writes it, then moved to `status` at `revision` (as a workflow's write would). */
async function record(
  db: Database,
  merchantId: string,
  n: number,
  fields: { status?: PaymentStatus; type?: PaymentType; createdAt: string; batchId?: string; revision?: number },
): Promise<PaymentResource> {
  const reference = `ref-${n}`;
  const payment: PaymentResource = {
    id: `payment-${merchantId}-${reference}`,
    type: fields.type ?? 'mobile_money_debit',
    reference,
    status: 'initiating',
    amount: n + 0.25,
    created_at: fields.createdAt,
    updated_at: fields.createdAt,
    provider: { transaction_id: null, status_code: null, message: null },
    next_action: null,
    failure: null,
    events: [],
  };
  const key = { merchantId, scope: 'payment' as const, reference, fingerprint: 'fp', resourceId: payment.id };
  await takePaymentKey(db, key, payment);
  if (fields.batchId) await db.query('UPDATE payments SET batch_id = $2 WHERE id = $1', [payment.id, fields.batchId]);
  if (!fields.status) return payment;
  const moved = {
    ...payment,
    status: fields.status,
    updated_at: new Date(Date.parse(fields.createdAt) + 5000).toISOString(),
  };
  await db.query('UPDATE payments SET status = $2, resource = $3, revision = $4, updated_at = $5 WHERE id = $1', [
    payment.id,
    moved.status,
    JSON.stringify(moved),
    fields.revision ?? 1,
    moved.updated_at,
  ]);
  return moved;
}

const ids = (page: { data: { id: string }[] }) => page.data.map((p) => p.id.replace(/^payment-[a-z0-9]+-/, ''));

describe('payment records: reads', () => {
  let db: Database;
  const merchant = `m${randomBytes(6).toString('hex')}`;
  const base = Date.parse('2026-03-01T10:00:00.000Z');
  const at = (seconds: number) => new Date(base + seconds * 1000).toISOString();

  before(async () => {
    db = openDatabase(testDatabaseUrl());
    // ref-1 … ref-7; ref-3 and ref-4 share their creation time, so the id breaks the tie.
    await record(db, merchant, 1, { createdAt: at(0), status: 'succeeded' });
    await record(db, merchant, 2, { createdAt: at(10), status: 'failed', type: 'card_payment' });
    await record(db, merchant, 3, { createdAt: at(20), type: 'bank_credit', batchId: `batch-${merchant}-b1` });
    await record(db, merchant, 4, { createdAt: at(20), type: 'bank_credit', batchId: `batch-${merchant}-b1` });
    await record(db, merchant, 5, { createdAt: at(30), status: 'pending' });
    await record(db, merchant, 6, { createdAt: at(40), status: 'succeeded' });
    await record(db, merchant, 7, { createdAt: at(50), status: 'needs_review' });
    await record(db, `${merchant}x`, 8, { createdAt: at(60) });
  });
  after(async () => {
    await db.end();
  });

  it('reads one record with its revision; none for an unknown id', async () => {
    const found = await readPayment(db, `payment-${merchant}-ref-1`);
    assert.equal(found?.revision, 1);
    assert.equal(found?.payment.status, 'succeeded');
    assert.equal(found?.payment.amount, 1.25);
    assert.equal(await readPayment(db, `payment-${merchant}-nope`), undefined);
    assert.equal(await paymentExists(db, `payment-${merchant}-ref-2`), true);
    assert.equal(await paymentExists(db, `payment-${merchant}-nope`), false);
  });

  it('pages newest first by (created_at, id) with a cursor, the same pages whatever the page size', async () => {
    const all: string[] = [];
    let startingAfter: string | undefined;
    for (;;) {
      const page = await listPayments(db, { merchantId: merchant, limit: 2, startingAfter });
      all.push(...ids(page));
      if (!page.hasMore) break;
      startingAfter = page.data.at(-1)?.id;
    }
    assert.deepEqual(all, ['ref-7', 'ref-6', 'ref-5', 'ref-4', 'ref-3', 'ref-2', 'ref-1']);
    const whole = await listPayments(db, { merchantId: merchant, limit: 100 });
    assert.deepEqual(ids(whole), all);
    assert.equal(whole.hasMore, false);
  });

  it('answers the list shape: numbers for amounts, ISO times, closed_at once settled', async () => {
    const { data } = await listPayments(db, { merchantId: merchant, reference: 'ref-6', limit: 5 });
    assert.deepEqual(data, [
      {
        id: `payment-${merchant}-ref-6`,
        type: 'mobile_money_debit',
        reference: 'ref-6',
        status: 'succeeded',
        amount: 6.25,
        created_at: at(40),
        closed_at: at(45),
      },
    ]);
    const open = await listPayments(db, { merchantId: merchant, reference: 'ref-5', limit: 5 });
    assert.equal(open.data[0]?.closed_at, null);
  });

  it('filters by status, type, reference, batch and a creation range [gte, lt)', async () => {
    const list = async (filter: Omit<Parameters<typeof listPayments>[1], 'limit'>) =>
      ids(await listPayments(db, { merchantId: merchant, limit: 50, ...filter }));
    assert.deepEqual(await list({ status: 'succeeded' }), ['ref-6', 'ref-1']);
    assert.deepEqual(await list({ status: 'initiating' }), ['ref-4', 'ref-3']);
    assert.deepEqual(await list({ type: 'card_payment' }), ['ref-2']);
    assert.deepEqual(await list({ reference: 'ref-5' }), ['ref-5']);
    assert.deepEqual(await list({ batchId: `batch-${merchant}-b1` }), ['ref-4', 'ref-3']);
    assert.deepEqual(await list({ createdFrom: new Date(at(20)), createdBefore: new Date(at(40)) }), [
      'ref-5',
      'ref-4',
      'ref-3',
    ]);
    assert.deepEqual(await list({ createdFrom: new Date(at(50)) }), ['ref-7']);
    assert.deepEqual(await list({ createdBefore: new Date(at(10)) }), ['ref-1']);
    assert.deepEqual(await list({ status: 'succeeded', createdFrom: new Date(at(1)) }), ['ref-6']);
    // Another merchant's record is in no list of this one's.
    assert.deepEqual(await list({ reference: 'ref-8' }), []);
  });

  it('keeps to the filter across pages', async () => {
    const first = await listPayments(db, { merchantId: merchant, type: 'bank_credit', limit: 1 });
    assert.deepEqual([ids(first), first.hasMore], [['ref-4'], true]);
    const second = await listPayments(db, {
      merchantId: merchant,
      type: 'bank_credit',
      limit: 1,
      startingAfter: first.data[0]?.id,
    });
    assert.deepEqual([ids(second), second.hasMore], [['ref-3'], false]);
  });

  it('a closed batch item that returned its outcome to its batch, no worker to query, is read from its record', async () => {
    const item = await record(db, merchant, 9, {
      createdAt: at(70),
      status: 'succeeded',
      batchId: `batch-${merchant}-b2`,
    });
    // Temporal as it is with no worker: the query fails, the run has completed, its result is the signed outcome.
    const outcome = { kind: 'batch-item-report', signature: 'mac', body: { paymentId: item.id, status: 'succeeded' } };
    const handle = {
      query: () => Promise.reject(new Error('no poller seen for this task queue')),
      describe: () => Promise.resolve({ status: { name: 'COMPLETED' } }),
      result: () => Promise.resolve(outcome),
    };
    const client = {
      workflow: { getHandle: () => handle },
      withDeadline: (_deadline: number, call: () => Promise<unknown>) => call(),
    } as unknown as Client;
    const reads = new PaymentReads(client, { taskQueue: 'payments', records: db });
    assert.deepEqual(await reads.live(item.id), item);
    const withoutRecords = new PaymentReads(client, { taskQueue: 'payments' });
    await assert.rejects(withoutRecords.live(item.id), /cannot be read right now \(no worker answered\)/);
  });
});
