import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BatchProgress } from '../src/domain/batch-model';
import type { NotificationEvent } from '../src/domain/notification';
import { batchItemPaymentId } from '../src/domain/ids';
import { eventually } from '../src/local/eventually';
import type { Database } from '../src/records/database';
import { batchBody, waitForBatch } from './support/batch-helpers';
import { SECOND_OPERATOR, startApprovalStack } from './support/approval-stack';
import { ops } from './support/ops-cli-runner';
import { uniqueReference } from './support/request-builders';
import { OPERATOR_KEY, OPERATOR_NAME, OTHER_MERCHANT_KEY } from './support/test-stack';
import type { Stack } from './support/test-stack';

// Maker-checker and scheduled batches, from outside: acme's batches wait for operators (one; two above 100), other's
// start at once or at their scheduled_at. The approval window is short so that expiry can be seen.

const WINDOW_S = 20;

let stack: Stack;
let db: Database;
before(async () => {
  ({ stack, db } = await startApprovalStack('acme:50/100', WINDOW_S));
});
after(async () => {
  await db?.end();
  await stack?.close();
});

async function create(items: number, key?: string, extra: Record<string, unknown> = {}): Promise<BatchProgress> {
  const body = { ...batchBody(uniqueReference('approval'), items), ...extra };
  const created = await stack.api<BatchProgress>('POST', '/v1/payout-batches', body, key);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body;
}

function decide(id: string, decision: string, key: string | null = OPERATOR_KEY) {
  return stack.api<BatchProgress>('POST', `/v1/payout-batches/${id}/approvals`, { decision }, key);
}

/** Checks that none of an acme batch's items reached the provider. */
async function nothingSent(batch: BatchProgress, items: number): Promise<void> {
  for (let i = 1; i <= items; i++) {
    const reference = `item-${String(i).padStart(5, '0')}`;
    const paymentId = batchItemPaymentId('acme', batch.reference, reference);
    assert.equal((await stack.upstreamRequests(paymentId)).length, 0, `${reference} was sent`);
  }
}

async function eventTypes(id: string): Promise<string[]> {
  const listed = await stack.api<{ data: NotificationEvent[] }>('GET', `/v1/events?batch=${id}&limit=100`);
  assert.equal(listed.status, 200);
  return listed.body.data.map((event) => event.type);
}

async function recordedApprovals(id: string): Promise<{ operator: string; decision: string }[]> {
  const { rows } = await db.query<{ operator: string; decision: string }>(
    'SELECT operator, decision FROM approvals WHERE subject_id = $1 ORDER BY at, operator',
    [id],
  );
  return rows;
}

describe('maker-checker', () => {
  it('holds a batch until an operator approves it; the merchant cannot approve its own', async () => {
    const batch = await create(3);
    assert.equal(batch.status, 'awaiting_approval');
    assert.equal(batch.approvals_required, 1);
    assert.ok(batch.approval_expires_at, 'its approval deadline is shown');
    const waiting = await waitForBatch(stack, batch.id, (b) => b.status === 'awaiting_approval');
    assert.deepEqual(waiting.approvals, []);
    await nothingSent(batch, 3);

    const byMerchant = await decide(batch.id, 'approve', null);
    assert.equal(byMerchant.status, 401);
    const byMerchantKey = await stack.api('POST', `/v1/payout-batches/${batch.id}/approvals`, { decision: 'approve' });
    assert.equal(byMerchantKey.status, 403, 'a merchant key never approves');
    const bad = await decide(batch.id, 'maybe');
    assert.equal(bad.status, 400);

    const approved = await decide(batch.id, 'approve');
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.equal(approved.body.status, 'running');
    assert.equal(approved.body.approvals.length, 1);
    assert.equal(approved.body.approvals[0]?.operator, OPERATOR_NAME);
    assert.equal(approved.body.approvals[0]?.decision, 'approve');
    assert.ok(!Number.isNaN(Date.parse(approved.body.approvals[0]?.at ?? '')), 'when it was approved');

    const done = await waitForBatch(stack, batch.id, (b) => b.status === 'completed');
    assert.equal(done.items.succeeded.count, 3);
    assert.deepEqual(
      done.approvals.map((a) => a.operator),
      [OPERATOR_NAME],
      'the approval stays on the resource',
    );
    assert.deepEqual(await recordedApprovals(batch.id), [{ operator: OPERATOR_NAME, decision: 'approve' }]);
    const types = await eventTypes(batch.id);
    assert.ok(types.includes('batch.approval_required'), types.join());
    assert.ok(types.includes('batch.approved'), types.join());
    assert.equal((await decide(batch.id, 'approve')).status, 409, 'nothing left to approve');
  });

  it('needs two different operators above the second threshold (API, then CLI)', async () => {
    const batch = await create(10); // 10 items of 10 to 16: above 100
    assert.equal(batch.approvals_required, 2);
    await waitForBatch(stack, batch.id, (b) => b.status === 'awaiting_approval');
    const first = await decide(batch.id, 'approve');
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.status, 'awaiting_approval', 'one approval of two');
    const again = await decide(batch.id, 'approve');
    assert.equal(again.status, 409, 'the same operator twice counts once');
    assert.match(JSON.stringify(again.body), /already decided/);

    const asCreator = await ops(['batch', 'approve', batch.id, '--by', 'acme']);
    assert.equal(asCreator.code, 4, 'the creating merchant never approves');
    assert.match(asCreator.stderr, /created it/);

    const second = await ops(['batch', 'approve', batch.id, '--by', SECOND_OPERATOR, '--json']);
    assert.equal(second.code, 0, second.stderr);
    const shown = JSON.parse(second.stdout) as BatchProgress;
    assert.equal(shown.status, 'running');
    assert.deepEqual(
      shown.approvals.map((a) => a.operator),
      [OPERATOR_NAME, SECOND_OPERATOR],
    );
    const { rows } = await db.query<{ action: string; operator: string }>(
      "SELECT action, operator FROM operator_actions WHERE subject_id = $1 AND action = 'batch.approve' ORDER BY id",
      [batch.id],
    );
    assert.deepEqual(rows, [
      { action: 'batch.approve', operator: OPERATOR_NAME },
      { action: 'batch.approve', operator: SECOND_OPERATOR },
    ]);
    await waitForBatch(stack, batch.id, (b) => b.status === 'completed');
  });

  it('ends a rejected batch with nothing sent (CLI), and shows who rejected it', async () => {
    const batch = await create(2);
    await waitForBatch(stack, batch.id, (b) => b.status === 'awaiting_approval');
    const rejected = await ops(['batch', 'reject', batch.id, '--by', SECOND_OPERATOR]);
    assert.equal(rejected.code, 0, rejected.stderr);
    assert.match(rejected.stdout, /status: +rejected/);
    assert.match(rejected.stdout, new RegExp(`reject by ${SECOND_OPERATOR.replace('.', '\\.')}`));
    const closed = await waitForBatch(stack, batch.id, (b) => b.status === 'rejected');
    assert.ok(closed.finished_at);
    assert.equal(closed.items.not_started.count, 2);
    await nothingSent(batch, 2);
    assert.equal((await decide(batch.id, 'approve')).status, 409, 'a rejected batch stays rejected');
    assert.ok((await eventTypes(batch.id)).includes('batch.rejected'));
    assert.deepEqual(await recordedApprovals(batch.id), [{ operator: SECOND_OPERATOR, decision: 'reject' }]);
  });

  it('expires a batch nobody approved within the window, nothing sent', async () => {
    const batch = await create(2);
    const expired = await waitForBatch(stack, batch.id, (b) => b.status === 'expired', (WINDOW_S + 30) * 1000);
    assert.ok(expired.finished_at);
    assert.ok(
      Date.parse(expired.finished_at) >= Date.parse(batch.approval_expires_at ?? ''),
      'not before its deadline',
    );
    await nothingSent(batch, 2);
    // A query may show the expiry a moment before its record write (which carries the event) commits.
    await eventually(async () => (await eventTypes(batch.id)).includes('batch.expired'), {
      timeoutMs: 10_000,
      what: 'batch.expired queued',
    });
    assert.equal((await decide(batch.id, 'approve')).status, 409);
  });
});

describe('scheduled batches', () => {
  it('starts a batch at its scheduled_at, not before, and shows when', async () => {
    const at = new Date(Date.now() + 4000).toISOString();
    const batch = await create(2, OTHER_MERCHANT_KEY, { scheduled_at: at });
    assert.equal(batch.status, 'scheduled');
    assert.equal(batch.starts_at, at);
    assert.equal(batch.approvals_required, 0, 'other has no approval thresholds');
    const read = await stack.api<BatchProgress>('GET', `/v1/payout-batches/${batch.id}`, undefined, OTHER_MERCHANT_KEY);
    assert.equal(read.body.starts_at, at);
    const shown = await ops(['batch', 'show', batch.id]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /starts: /);
    const done = await waitForBatch(stack, batch.id, (b) => b.status === 'completed', 60_000);
    const { rows } = await db.query<{ first: Date }>(
      'SELECT min(created_at) AS first FROM payments WHERE batch_id = $1',
      [batch.id],
    );
    assert.ok(rows[0]?.first && rows[0].first.getTime() >= Date.parse(at), 'no item started before its time');
    assert.equal(done.items.succeeded.count, 2);
  });

  it('can be approved before its time, and then starts at it; or cancelled before, nothing sent', async () => {
    const at = new Date(Date.now() + 5000).toISOString();
    const approvedEarly = await create(2, undefined, { scheduled_at: at });
    assert.equal(approvedEarly.status, 'scheduled');
    const approved = await decide(approvedEarly.id, 'approve');
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.equal(approved.body.status, 'scheduled', 'approved, still waiting for its time');
    await waitForBatch(stack, approvedEarly.id, (b) => b.status === 'completed', 60_000);

    const later = await create(3, OTHER_MERCHANT_KEY, { scheduled_at: new Date(Date.now() + 3600_000).toISOString() });
    const cancelled = await stack.api<BatchProgress>(
      'POST',
      `/v1/payout-batches/${later.id}/cancel`,
      undefined,
      OTHER_MERCHANT_KEY,
    );
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    const closed = await waitForBatch(stack, later.id, (b) => b.status === 'cancelled');
    assert.equal(closed.not_started?.length, 3);
    assert.equal(
      (await stack.api('POST', `/v1/payout-batches/${later.id}/pause`, undefined, OTHER_MERCHANT_KEY)).status,
      409,
    );
  });

  it('refuses a time more than 30 days ahead', async () => {
    const far = new Date(Date.now() + 31 * 24 * 3600_000).toISOString();
    const refused = await stack.api('POST', '/v1/payout-batches', {
      ...batchBody(uniqueReference('far'), 1),
      scheduled_at: far,
    });
    assert.equal(refused.status, 400);
    assert.match(JSON.stringify(refused.body), /scheduled_at/);
  });
});
