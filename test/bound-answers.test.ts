import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Client } from 'pg';
import type { BatchProgress } from '../src/domain/batch-model';
import type { PaymentResource } from '../src/domain/payment-model';
import { paymentRequest, uniqueReference } from './support/request-builders';
import { OPERATOR_KEY, OTHER_MERCHANT_KEY, startStack, testDatabaseUrl } from './support/test-stack';
import type { Stack } from './support/test-stack';

// The server answers a payment or batch only when its record is that id and of that merchant: a row planted in
// PostgreSQL under one id with another's resource, or under another merchant, answers 404 and is logged as an anomaly.
// A running batch's record answers when Temporal cannot, with its items counted from their own records.

const logText: string[] = [];
const logStream = new Writable({
  write(chunk: Buffer, _encoding, done) {
    logText.push(...chunk.toString().split('\n').filter(Boolean));
    done();
  },
});
const anomalies = () =>
  logText
    .map((line) => JSON.parse(line) as { anomaly?: string; requested?: string; found?: { id: unknown } })
    .filter((line) => line.anomaly === 'mismatched_answer');

let stack: Stack;
let db: Client;
before(async () => {
  stack = await startStack({ withoutWorker: true, env: { LOG_LEVEL: 'info' }, logStream });
  db = new Client({ connectionString: testDatabaseUrl(stack.workerEnv) });
  await db.connect();
});
after(async () => {
  await db?.end();
  await stack?.close();
});

const suffix = () => randomBytes(4).toString('hex');

async function plantPayment(id: string, merchantId: string, resource: PaymentResource): Promise<void> {
  await db.query(
    `INSERT INTO payments (id, merchant_id, type, reference, status, amount, resource, revision, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 3, now(), now())`,
    [id, merchantId, resource.type, resource.reference, resource.status, resource.amount, JSON.stringify(resource)],
  );
}

async function plantBatch(id: string, merchantId: string, resource: BatchProgress): Promise<void> {
  await db.query(
    `INSERT INTO batches (id, merchant_id, reference, status, resource, revision, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, 3, now(), now())`,
    [id, merchantId, resource.reference, resource.status, JSON.stringify(resource)],
  );
}

function batchResource(id: string, reference: string): BatchProgress {
  const tally = (count: number, amount: number) => ({ count, amount });
  const at = '2026-03-01T08:00:00.000Z';
  return {
    id,
    reference,
    status: 'completed',
    concurrency: 5,
    created_at: at,
    started_at: at,
    finished_at: at,
    total: tally(1, 10),
    items: {
      not_started: tally(0, 0),
      in_flight: tally(0, 0),
      succeeded: tally(1, 10),
      failed: tally(0, 0),
      needs_review: tally(0, 0),
    },
    needs_review: [],
    not_started: null,
    paused_by: null,
    starts_at: null,
    approvals_required: 0,
    approvals: [],
    approval_expires_at: null,
  };
}

describe('answers are what was asked for', () => {
  it("a payment record under another id, or another merchant's row, answers 404 to merchant and operator", async () => {
    const created = await stack.api('POST', '/v1/payments', paymentRequest('bank_credit', '00'));
    assert.equal(created.status, 201);
    const donor = { ...created.body, status: 'succeeded' as const };

    // Row id X holding the donor's resource (another payment of the same merchant).
    const transplanted = `payment-acme-${uniqueReference('planted')}`;
    await plantPayment(transplanted, 'acme', donor);
    // Row id Y whose resource says Y, but whose row is another merchant's.
    const reference = uniqueReference('foreign');
    const foreign = `payment-acme-${reference}`;
    await plantPayment(foreign, 'other', { ...donor, id: foreign, reference });
    // The control: the same kind of row, consistent, answers.
    const honestReference = uniqueReference('honest');
    const honest = `payment-acme-${honestReference}`;
    await plantPayment(honest, 'acme', { ...donor, id: honest, reference: honestReference });

    for (const key of [undefined, OPERATOR_KEY]) {
      for (const id of [transplanted, foreign]) {
        const answer = await stack.api('GET', `/v1/payments/${encodeURIComponent(id)}`, undefined, key);
        assert.equal(answer.status, 404, `${id}: ${JSON.stringify(answer.body)}`);
        assert.ok(!JSON.stringify(answer.body).includes(created.body.id), 'nothing of the donor leaks');
      }
      const control = await stack.api('GET', `/v1/payments/${encodeURIComponent(honest)}`, undefined, key);
      assert.equal(control.status, 200);
      assert.equal(control.body.id, honest);
    }
    assert.equal(
      (await stack.api('GET', `/v1/payments/${encodeURIComponent(foreign)}`, undefined, OTHER_MERCHANT_KEY)).status,
      404,
      'the other merchant cannot read an acme id either',
    );
    const logged = anomalies().filter((line) => line.requested === transplanted);
    assert.ok(logged.length > 0, 'logged as an anomaly');
    assert.equal(logged[0]?.found?.id, created.body.id);
    assert.ok(anomalies().some((line) => line.requested === foreign));
  });

  it("a batch record under another id, or another merchant's row, answers 404", async () => {
    const reference = `planted-${suffix()}`;
    const transplanted = `batch-acme-${reference}`;
    await plantBatch(transplanted, 'acme', batchResource(`batch-other-${reference}`, reference));
    const foreignReference = `foreign-${suffix()}`;
    const foreign = `batch-acme-${foreignReference}`;
    await plantBatch(foreign, 'other', batchResource(foreign, foreignReference));
    const honestReference = `honest-${suffix()}`;
    const honest = `batch-acme-${honestReference}`;
    await plantBatch(honest, 'acme', batchResource(honest, honestReference));

    for (const key of [undefined, OPERATOR_KEY]) {
      for (const id of [transplanted, foreign]) {
        assert.equal((await stack.api('GET', `/v1/payout-batches/${id}`, undefined, key)).status, 404, id);
      }
      const control = await stack.api<BatchProgress>('GET', `/v1/payout-batches/${honest}`, undefined, key);
      assert.equal(control.status, 200);
      assert.equal(control.body.id, honest);
    }
    assert.ok(
      anomalies().some((line) => line.requested === transplanted && line.found?.id === `batch-other-${reference}`),
    );
  });
});

describe('a running batch Temporal cannot answer', () => {
  it('answers its record with the items counted from their own records, not the record’s last tenth', async () => {
    const reference = `norun-${suffix()}`;
    const id = `batch-acme-${reference}`;
    // No workflow has this id: the record says running, its items as they stood when it last wrote (none done).
    const tally = (count: number, amount: number) => ({ count, amount });
    const running: BatchProgress = {
      ...batchResource(id, reference),
      status: 'running',
      finished_at: null,
      total: tally(3, 30),
      items: {
        not_started: tally(3, 30),
        in_flight: tally(0, 0),
        succeeded: tally(0, 0),
        failed: tally(0, 0),
        needs_review: tally(0, 0),
      },
    };
    await plantBatch(id, 'acme', running);
    const item = paymentRequest('bank_credit', '00');
    for (const [n, status] of [
      [1, 'succeeded'],
      [2, 'failed'],
    ] as const) {
      const itemReference = `${reference}-${n}`;
      const resource = { id: `payment-acme-${itemReference}`, reference: itemReference, type: item.type, amount: 10 };
      await db.query(
        `INSERT INTO payments (id, merchant_id, type, reference, status, amount, resource, revision, batch_id,
                               created_at, updated_at)
         VALUES ($1, 'acme', $2, $3, $4, 10, $5, 1, $6, now() - interval '2 seconds', now())`,
        [resource.id, item.type, itemReference, status, JSON.stringify({ ...resource, status }), id],
      );
    }

    const answer = await stack.api<BatchProgress>('GET', `/v1/payout-batches/${id}`);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.status, 'running');
    assert.deepEqual(answer.body.items, {
      not_started: tally(1, 10),
      in_flight: tally(0, 0),
      succeeded: tally(1, 10),
      failed: tally(1, 10),
      needs_review: tally(0, 0),
    });
    assert.ok((answer.body.pace?.items_per_second ?? 0) > 0, JSON.stringify(answer.body.pace));
  });
});
