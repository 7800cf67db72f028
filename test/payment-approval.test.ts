import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { NotificationEvent } from '../src/domain/notification';
import type { PaymentResource } from '../src/domain/payment-model';
import type { PaymentType } from '../src/domain/requests';
import { eventually } from '../src/local/eventually';
import type { Database } from '../src/records/database';
import { SECOND_OPERATOR, startApprovalStack } from './support/approval-stack';
import { ops } from './support/ops-cli-runner';
import { paymentRequest } from './support/request-builders';
import { MERCHANT_KEY, OPERATOR_KEY, OPERATOR_NAME } from './support/test-stack';
import type { Stack } from './support/test-stack';

// Maker-checker for single payments, from outside (API and CLI): acme's bank credits above 100 wait for an operator
// before anything reaches the provider; below it, and other payment types, start at once. The approval window is
// short so that expiry can be seen.

const WINDOW_S = 15;
/** How long a test watches the sandbox to be sure nothing arrives. */
const QUIET_MS = 2000;

let stack: Stack;
let db: Database;
before(async () => {
  ({ stack, db } = await startApprovalStack('acme:100/1000', WINDOW_S));
});
after(async () => {
  await db?.end();
  await stack?.close();
});

async function create(amount: number, type: PaymentType = 'bank_credit'): Promise<PaymentResource> {
  const created = await stack.api('POST', '/v1/payments', { ...paymentRequest(type, '00'), amount });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body;
}

function decide(id: string, decision: string, key: string | null = OPERATOR_KEY) {
  return stack.api('POST', `/v1/payments/${id}/approvals`, { decision }, key);
}

async function read(id: string): Promise<PaymentResource> {
  const got = await stack.api('GET', `/v1/payments/${id}`);
  assert.equal(got.status, 200, JSON.stringify(got.body));
  return got.body;
}

async function nothingSent(id: string): Promise<void> {
  assert.equal((await stack.upstreamRequests(id)).length, 0, `${id} reached the provider`);
}

async function eventTypes(id: string): Promise<string[]> {
  const listed = await stack.api<{ data: NotificationEvent[] }>('GET', `/v1/events?payment=${id}&limit=100`);
  assert.equal(listed.status, 200);
  return listed.body.data.map((event) => event.type);
}

async function recorded(id: string): Promise<{ approvals: string[]; actions: string[] }> {
  const approvals = await db.query<{ operator: string; decision: string }>(
    'SELECT operator, decision FROM approvals WHERE subject_id = $1 ORDER BY at, operator',
    [id],
  );
  const actions = await db.query<{ action: string; operator: string }>(
    'SELECT action, operator FROM operator_actions WHERE subject_id = $1 ORDER BY id',
    [id],
  );
  return {
    approvals: approvals.rows.map((r) => `${r.decision} by ${r.operator}`),
    actions: actions.rows.map((r) => `${r.action} by ${r.operator}`),
  };
}

describe('a bank credit above its approval threshold', () => {
  it('waits with nothing sent until an operator approves it, then is sent and settles', async () => {
    const payment = await create(250);
    assert.equal(payment.status, 'awaiting_approval');
    assert.deepEqual(payment.approvals, []);
    assert.ok(payment.approval_expires_at, 'its approval deadline is shown');
    await sleep(QUIET_MS);
    assert.equal((await read(payment.id)).status, 'awaiting_approval');
    await nothingSent(payment.id);
    await eventually(async () => (await eventTypes(payment.id)).includes('payment.approval_required'), {
      timeoutMs: 10_000,
      what: 'payment.approval_required queued',
    });

    assert.equal((await decide(payment.id, 'approve', null)).status, 401);
    assert.equal((await decide(payment.id, 'approve', MERCHANT_KEY)).status, 403, 'a merchant key never approves');
    assert.equal((await decide(payment.id, 'maybe')).status, 400);
    const asCreator = await ops(['approve', payment.id, '--by', 'acme']);
    assert.equal(asCreator.code, 4, 'the creating merchant never approves');
    assert.match(asCreator.stderr, /created it/);

    const approved = await decide(payment.id, 'approve');
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.equal(approved.body.approvals?.[0]?.operator, OPERATOR_NAME);
    assert.equal(approved.body.approvals?.[0]?.decision, 'approve');
    assert.ok(!Number.isNaN(Date.parse(approved.body.approvals?.[0]?.at ?? '')), 'when it was approved');
    assert.notEqual(approved.body.status, 'awaiting_approval');

    const settled = await stack.waitForStatus(payment.id, ['succeeded', 'failed']);
    assert.equal(settled.status, 'succeeded', JSON.stringify(settled.failure));
    assert.equal((await stack.upstreamRequests(payment.id)).length, 1, 'sent once, after the approval');
    assert.deepEqual(
      (await read(payment.id)).approvals?.map((a) => a.operator),
      [OPERATOR_NAME],
      'the approval stays on the resource',
    );
    assert.deepEqual(await recorded(payment.id), {
      approvals: [`approve by ${OPERATOR_NAME}`],
      actions: [`payment.approve by ${OPERATOR_NAME}`],
    });
    const again = await decide(payment.id, 'approve');
    assert.equal(again.status, 409, 'nothing left to approve');

    const shown = await ops(['show', payment.id, '--no-history']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`approvals: +approve by ${OPERATOR_NAME.replace('.', '\\.')}`));
  });

  it('fails, nothing sent, when an operator rejects it (CLI)', async () => {
    const payment = await create(500);
    assert.equal(payment.status, 'awaiting_approval');
    const rejected = await ops(['reject', payment.id, '--by', SECOND_OPERATOR]);
    assert.equal(rejected.code, 0, rejected.stderr);
    assert.match(rejected.stdout, /status: +failed/);
    assert.match(rejected.stdout, /rejected_by_operator/);

    const failed = await stack.waitForStatus(payment.id, ['failed', 'succeeded']);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.failure?.code, 'rejected_by_operator');
    assert.deepEqual(
      failed.approvals?.map((a) => `${a.decision} by ${a.operator}`),
      [`reject by ${SECOND_OPERATOR}`],
    );
    await sleep(QUIET_MS);
    await nothingSent(payment.id);
    assert.equal((await decide(payment.id, 'approve')).status, 409, 'a rejected payment stays failed');
    assert.deepEqual(await recorded(payment.id), {
      approvals: [`reject by ${SECOND_OPERATOR}`],
      actions: [`payment.reject by ${SECOND_OPERATOR}`],
    });
    await eventually(async () => (await eventTypes(payment.id)).includes('payment.failed'), {
      timeoutMs: 10_000,
      what: 'payment.failed queued',
    });
  });

  it('fails, nothing sent, when nobody approves it within the window', async () => {
    const payment = await create(150);
    assert.equal(payment.status, 'awaiting_approval');
    const expired = await stack.waitForStatus(payment.id, ['failed', 'succeeded'], (WINDOW_S + 30) * 1000);
    assert.equal(expired.status, 'failed');
    assert.equal(expired.failure?.code, 'approval_expired');
    assert.ok(
      Date.parse(expired.updated_at) >= Date.parse(payment.approval_expires_at ?? ''),
      'not before its deadline',
    );
    await nothingSent(payment.id);
    assert.equal((await decide(payment.id, 'approve')).status, 409);
  });
});

describe('below the threshold, or not a bank credit', () => {
  it('starts at once as before, with no approvals shown', async () => {
    const credit = await create(100);
    const debit = await create(250, 'mobile_money_debit');
    for (const payment of [credit, debit]) {
      assert.notEqual(payment.status, 'awaiting_approval');
      assert.equal(payment.approvals, undefined);
      assert.equal(payment.approval_expires_at, undefined);
      const settled = await stack.waitForStatus(payment.id, ['succeeded', 'failed']);
      assert.equal(settled.status, 'succeeded');
      assert.equal((await stack.upstreamRequests(payment.id)).length, 1);
      assert.equal((await decide(payment.id, 'approve')).status, 409, 'nothing to approve');
    }
  });
});
