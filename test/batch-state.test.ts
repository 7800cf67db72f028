import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BatchInput } from '../src/domain/batch-model';
import { itemResultRefusal } from '../src/domain/batch-model';
import { parseKeyring } from '../src/crypto/keyring';
import { signMessage } from '../src/crypto/signing';
import { BatchState } from '../src/workflows/batch-state';

const input: BatchInput = {
  batchId: 'batch-acme-b1',
  merchantId: 'acme',
  reference: 'b1',
  createdAt: '2026-01-01T00:00:00.000Z',
  itemCount: 5,
  totalMinor: 50_000,
  pageSize: 500,
  concurrency: 2,
  timing: { callbackTimeoutMs: 1, reconcileForMs: 1, reconcileIntervalMs: 1 },
  itemCheckMs: 60_000,
  maxRunEvents: 2000,
};
const now = new Date('2026-01-01T00:00:01.000Z');

function startTwo(state: BatchState): void {
  state.started('i1', 10_000);
  state.started('i2', 10_000);
}

describe('BatchState', () => {
  it('starts no more than the concurrency allows and frees a slot per settled item', () => {
    const state = new BatchState(input, undefined, now);
    assert.equal(state.freeSlots, 2);
    startTwo(state);
    assert.equal(state.freeSlots, 0);
    state.settled({ paymentId: 'i1', status: 'succeeded' });
    assert.equal(state.freeSlots, 1);
    state.settled({ paymentId: 'i2', status: 'needs_review' });
    assert.equal(state.freeSlots, 2, 'an item in review no longer holds a slot');
  });

  it('counts each item once, and moves a resolved review item to its outcome', () => {
    const state = new BatchState(input, undefined, now);
    startTwo(state);
    state.settled({ paymentId: 'i1', status: 'failed' });
    state.settled({ paymentId: 'i1', status: 'failed' });
    state.settled({ paymentId: 'unknown', status: 'succeeded' });
    state.settled({ paymentId: 'i2', status: 'needs_review' });
    let progress = state.progress();
    assert.deepEqual(progress.items.failed, { count: 1, amount: 100 });
    assert.deepEqual(progress.items.needs_review, { count: 1, amount: 100 });
    assert.deepEqual(progress.needs_review, ['i2']);
    assert.deepEqual(progress.items.not_started, { count: 3, amount: 300 });
    state.settled({ paymentId: 'i2', status: 'succeeded' });
    progress = state.progress();
    assert.deepEqual(progress.items.needs_review, { count: 0, amount: 0 });
    assert.deepEqual(progress.items.succeeded, { count: 1, amount: 100 });
    assert.deepEqual(progress.needs_review, []);
  });

  it('pauses, resumes and cancels, refusing what no longer applies', () => {
    const state = new BatchState(input, undefined, now);
    assert.equal(state.refusal({ action: 'resume' }), 'the batch is not paused');
    state.apply({ action: 'pause' });
    assert.equal(state.freeSlots, 0);
    assert.equal(state.refusal({ action: 'pause' }), undefined, 'pausing twice is harmless');
    state.apply({ action: 'resume' });
    assert.equal(state.freeSlots, 2);
    startTwo(state);
    state.apply({ action: 'cancel' });
    assert.equal(state.refusal({ action: 'resume' }), 'the batch is being cancelled');
    assert.equal(state.drained, false, 'in-flight items finish first');
    state.settled({ paymentId: 'i1', status: 'succeeded' });
    state.settled({ paymentId: 'i2', status: 'succeeded' });
    assert.equal(state.drained, true);
    state.finish(now, ['r3', 'r4', 'r5']);
    assert.equal(state.status, 'cancelled');
    assert.deepEqual(state.progress().not_started, ['r3', 'r4', 'r5']);
    assert.equal(state.refusal({ action: 'cancel' }), 'the batch is already cancelled');
  });

  it("keeps an operator's pause until an operator resumes it, and shows who paused", () => {
    const state = new BatchState(input, undefined, now);
    state.apply({ action: 'pause' });
    assert.equal(state.progress().paused_by, 'merchant');
    state.apply({ action: 'pause', operator: 'jane' });
    assert.equal(state.progress().paused_by, 'jane', "an operator's pause takes over the merchant's");
    state.apply({ action: 'pause' });
    assert.equal(state.progress().paused_by, 'jane', "a merchant's pause leaves the operator's");
    assert.match(state.refusal({ action: 'resume' }) ?? '', /paused by an operator \(jane\); only an operator/);
    assert.equal(state.refusal({ action: 'resume', operator: 'bob' }), undefined);
    state.apply({ action: 'resume', operator: 'bob' });
    assert.equal(state.status, 'running');
    assert.equal(state.progress().paused_by, null);
    state.apply({ action: 'pause' });
    assert.equal(state.refusal({ action: 'resume' }), undefined, "the merchant resumes the merchant's own pause");
  });

  it('completes once every item has started and none is in flight', () => {
    const state = new BatchState({ ...input, itemCount: 2, totalMinor: 20_000 }, undefined, now);
    startTwo(state);
    assert.equal(state.drained, false);
    state.settled({ paymentId: 'i1', status: 'succeeded' });
    state.settled({ paymentId: 'i2', status: 'needs_review' });
    assert.equal(state.drained, true);
    state.finish(now, []);
    const progress = state.progress();
    assert.equal(progress.status, 'completed');
    assert.equal(progress.not_started, null);
    assert.equal(progress.finished_at, now.toISOString());
  });

  it('carries its state into a continued run', () => {
    const first = new BatchState(input, undefined, now);
    startTwo(first);
    first.settled({ paymentId: 'i1', status: 'succeeded' });
    const second = new BatchState(input, structuredClone(first.carry()), new Date());
    assert.deepEqual(second.progress(), first.progress());
    second.settled({ paymentId: 'i2', status: 'failed' });
    assert.equal(second.progress().items.failed.count, 1);
  });
  it('waits for its start time and its approvals: distinct operators, never the creator; a rejection closes it', () => {
    const waiting = { ...input, startsAt: '2026-01-01T01:00:00.000Z', approvalsRequired: 2, approvalWindowMs: 60_000 };
    const state = new BatchState(waiting, undefined, now);
    assert.equal(state.status, 'scheduled');
    assert.equal(state.freeSlots, 0, 'nothing starts while scheduled');
    assert.equal(state.refusal({ action: 'pause' }), 'the batch has not started');
    assert.equal(state.progress().approval_expires_at, '2026-01-01T01:01:00.000Z', 'the window runs from its start');
    const at = now.toISOString();
    assert.match(state.decisionRefusal({ decision: 'approve', operator: 'acme' }) ?? '', /created it/);
    state.decided({ operator: 'ada', decision: 'approve', at });
    assert.match(state.decisionRefusal({ decision: 'approve', operator: 'ada' }) ?? '', /already decided/);
    state.decided({ operator: 'kwame', decision: 'approve', at });
    assert.equal(state.status, 'scheduled', 'approved early, it still waits for its time');
    state.due();
    assert.equal(state.status, 'running');
    assert.equal(state.freeSlots, 2);
    assert.match(state.decisionRefusal({ decision: 'reject', operator: 'other' }) ?? '', /no decision is due/);

    const rejected = new BatchState({ ...input, approvalsRequired: 1, approvalWindowMs: 60_000 }, undefined, now);
    assert.equal(rejected.status, 'awaiting_approval');
    rejected.decided({ operator: 'ada', decision: 'reject', at });
    assert.equal(rejected.status, 'rejected');
    assert.equal(rejected.progress().finished_at, at);
    assert.equal(rejected.refusal({ action: 'cancel' }), 'the batch is already rejected');

    const expired = new BatchState({ ...input, approvalsRequired: 1, approvalWindowMs: 60_000 }, undefined, now);
    expired.expire(now);
    assert.equal(expired.status, 'expired');
    assert.deepEqual(expired.progress().approvals, []);
  });

  it("counts an item's result only as that item's outcome, signed by a worker for this batch", () => {
    const keys = parseKeyring(`sign-1:${Buffer.alloc(32, 9).toString('base64')}`);
    const scope = { namespace: 'default', taskQueue: 'payments', now };
    const batch = { workflowId: input.batchId, ...scope };
    const report = (paymentId: string, kind: 'batch-item-report' | 'batch-control' = 'batch-item-report') =>
      signMessage(keys, kind, input.batchId, { paymentId, status: 'succeeded' }, scope);
    assert.equal(itemResultRefusal(report('i1'), 'i1', batch), undefined);
    assert.match(itemResultRefusal(report('i2'), 'i1', batch) ?? '', /it reports i2, not i1/);
    assert.match(itemResultRefusal(report('i1', 'batch-control'), 'i1', batch) ?? '', /not a batch-item-report/);
    assert.match(itemResultRefusal(report('i1'), 'i1', { ...batch, workflowId: 'batch-other' }) ?? '', /signed for/);
    assert.match(itemResultRefusal({ paymentId: 'i1', status: 'succeeded' }, 'i1', batch) ?? '', /not signed/);
    assert.match(itemResultRefusal({ unverified: 'bad mac' }, 'i1', batch) ?? '', /does not verify/);
    const later = { ...batch, now: new Date(now.getTime() + 24 * 3_600_000) };
    assert.match(itemResultRefusal(report('i1'), 'i1', later) ?? '', /expired/);
  });
});
