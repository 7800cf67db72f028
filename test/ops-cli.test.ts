import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { PaymentResource } from '../src/domain/payment-model';
import type { HistoryStep } from '../src/payments/workflow-history';
import type { PaymentSummary } from '../src/payments/payment-reads';
import { freePort } from '../src/local/free-port';
import { ops, opsJsonUntil } from './support/ops-cli-runner';
import { paymentRequest } from './support/request-builders';
import { OPERATOR_KEY, startStack, TEST_ENCRYPTION_KEYS, TEST_SIGNING_KEYS } from './support/test-stack';
import type { Stack } from './support/test-stack';

// `npm run ops`, run as a process against the test dev server, with a real worker, server and sandbox behind it.

let stack: Stack;
let settled: PaymentResource;
let inReview: PaymentResource;
let waiting: PaymentResource;
let createdFrom: number;
/** `--newer-than` for this file's payments only: the shared dev server holds other files' payments too. */
const sinceCreated = () => `${Math.ceil((Date.now() - createdFrom) / 1000) + 5}s`;

before(async () => {
  // Bank credits wait an hour for their callback here, so scenario 33 stays pending: a "stuck" payment.
  stack = await startStack({ env: { CALLBACK_TIMEOUT_BANK_CREDIT: '1h' } });
  createdFrom = Date.now();
  const create = async (type: Parameters<typeof paymentRequest>[0], scenario: string) =>
    (await stack.api('POST', '/v1/payments', paymentRequest(type, scenario))).body;
  [settled, inReview, waiting] = await Promise.all([
    create('mobile_money_debit', '00'),
    create('mobile_money_debit', '33'),
    create('bank_credit', '33'),
  ]);
  await Promise.all([
    stack.waitForStatus(settled.id, ['succeeded']),
    stack.waitForStatus(inReview.id, ['needs_review']),
    stack.waitForStatus(waiting.id, ['pending']),
  ]);
});

after(() => stack.close());

describe('ops list', () => {
  it('filters by reference, status, type and age, as a table and as JSON', async () => {
    const byReference = await opsJsonUntil<PaymentSummary[]>(
      ['list', '--reference', settled.reference, '--merchant', 'acme'],
      (list) => list[0]?.status === 'succeeded',
    );
    assert.deepEqual(
      byReference.map((p) => [p.id, p.status, p.type, p.amount]),
      [[settled.id, 'succeeded', 'mobile_money_debit', 12.5]],
    );

    const inReviewList = await opsJsonUntil<PaymentSummary[]>(
      ['list', '--status', 'needs_review', '--type', 'mobile_money_debit', '--newer-than', sinceCreated()],
      (list) => list.some((p) => p.id === inReview.id),
    );
    assert.ok(inReviewList.some((p) => p.id === inReview.id));
    assert.ok(inReviewList.every((p) => p.status === 'needs_review' && p.type === 'mobile_money_debit'));

    const several = await opsJsonUntil<PaymentSummary[]>(
      ['list', '--status', 'succeeded,needs_review', '--type', 'mobile_money_debit', '--newer-than', sinceCreated()],
      (list) => list.some((p) => p.id === inReview.id) && list.some((p) => p.id === settled.id),
    );
    assert.ok(several.some((p) => p.id === inReview.id) && several.some((p) => p.id === settled.id));
    assert.ok(several.every((p) => p.status === 'succeeded' || p.status === 'needs_review'));

    const old = await ops(['list', '--reference', settled.reference, '--older-than', '1h']);
    assert.equal(old.code, 0, old.stderr);
    assert.equal(old.stdout, '(none)\n');
    const otherMerchant = await ops(['list', '--reference', settled.reference, '--merchant', 'other', '--json']);
    assert.deepEqual(JSON.parse(otherMerchant.stdout), []);

    const table = await ops(['list', '--reference', settled.reference]);
    assert.equal(table.code, 0, table.stderr);
    const [header, row, ...rest] = table.stdout.trimEnd().split('\n');
    assert.match(header!, /^ID\s+STATUS\s+TYPE\s+AMOUNT\s+REFERENCE\s+AGE$/);
    assert.match(
      row!,
      new RegExp(`^${settled.id}\\s+succeeded\\s+mobile_money_debit\\s+12.5\\s+${settled.reference}\\s+\\d+s$`),
    );
    assert.deepEqual(rest, []);
  });
});

describe('ops show', () => {
  it("prints the payment, its timeline and its workflow's steps; --json parses back", async () => {
    const run = await ops(['show', inReview.id, '--json']);
    assert.equal(run.code, 0, run.stderr);
    const shown = JSON.parse(run.stdout) as {
      payment: PaymentResource;
      workflow: { status: string; summary: string };
      history: HistoryStep[];
    };
    assert.equal(shown.payment.status, 'needs_review');
    assert.equal(shown.workflow.status, 'RUNNING');
    assert.equal(shown.workflow.summary, `mobile money debit 12.5 · ${inReview.reference.replace(/_/g, '\\_')}`);
    // Every merchant's events are queued in the outbox (GET /v1/events), so each shows on the payment too.
    const types = shown.payment.events.map((e) => e.type).filter((type) => type !== 'notification_queued');
    assert.deepEqual([types[0], types[1], types.at(-1)], ['initiated', 'timed_out', 'needs_review']);
    const steps = shown.history.map((h) => h.step);
    for (const step of [
      'workflow started',
      'initiate mobile-money debit: done',
      'wait for callback (3s): started',
      'wait for callback (3s): time is up',
      'status check 1: done',
    ]) {
      assert.ok(steps.includes(step), `${step} in ${steps.join(', ')}`);
    }

    const text = await ops(['show', inReview.id]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`^id:\\s+${inReview.id}$`, 'm'));
    assert.match(text.stdout, /^status:\s+needs_review$/m);
    assert.match(text.stdout, /^Timeline\nAT\s+TYPE\s+OUTCOME\s+STATUS_CODE\s+MESSAGE$/m);
    assert.match(text.stdout, /needs_review\s+-\s+-\s+reconciliation could not settle the payment/);
    assert.match(text.stdout, /^Temporal history\n/m);
    assert.match(text.stdout, /status check 1: started/);
  });
});

describe('ops resolve', () => {
  it('settles a payment in review with the note, and refuses a settled one', async () => {
    const run = await ops([
      'resolve',
      inReview.id,
      '--outcome',
      'succeeded',
      '--note',
      'paid per bank statement',
      '--by',
      'ama',
      '--json',
    ]);
    assert.equal(run.code, 0, run.stderr);
    const payment = JSON.parse(run.stdout) as PaymentResource;
    assert.equal(payment.status, 'succeeded');
    assert.deepEqual(
      payment.events.filter((e) => e.type === 'resolved').map((e) => [e.outcome, e.message]),
      [['succeeded', 'paid per bank statement (by ama)']],
    );
    // The merchant API sees the same decision.
    assert.equal(
      (await stack.api('GET', `/v1/payments/${inReview.id}`, undefined, OPERATOR_KEY)).body.status,
      'succeeded',
    );

    const again = await ops(['resolve', inReview.id, '--outcome', 'failed', '--note', 'second thoughts']);
    assert.equal(again.code, 4);
    // Settled, the workflow closes with the resolution: a second one finds it closed (or, a moment earlier, settled).
    assert.match(
      again.stderr,
      /^ops: (the payment is already settled|payment is succeeded; only needs_review can be resolved)\n$/,
    );

    const text = await ops(['resolve', settled.id, '--outcome', 'failed', '--note', 'x']);
    assert.equal(text.code, 4);
  });

  it('names a bad outcome or a missing note', async () => {
    const bad = await ops(['resolve', waiting.id, '--outcome', 'maybe', '--note', 'x']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--outcome: /);
    const missing = await ops(['resolve', waiting.id, '--outcome', 'failed']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--note/);
  });
});

describe('ops keys', () => {
  it("takes npm start's generated keys from DATA_DIR when they are not set", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ops-keys-'));
    try {
      const unset = { ENCRYPTION_KEYS: '', SIGNING_KEYS: '', DATA_DIR: dataDir };
      const without = await ops(['show', settled.id, '--json'], unset);
      assert.equal(without.code, 2);
      assert.match(without.stderr, /ENCRYPTION_KEYS: is required/);
      const secrets = { encryptionKeys: TEST_ENCRYPTION_KEYS, signingKeys: TEST_SIGNING_KEYS };
      writeFileSync(join(dataDir, 'secrets.json'), JSON.stringify(secrets));
      const shown = await ops(['show', settled.id, '--json', '--no-history'], unset);
      assert.equal(shown.code, 0, shown.stderr);
      assert.equal((JSON.parse(shown.stdout) as { payment: PaymentResource }).payment.id, settled.id);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('ops stuck', () => {
  it('lists payments pending or reconciling longer than the threshold, and those ended without an outcome', async () => {
    const stuck = await opsJsonUntil<PaymentSummary[]>(['stuck', '--older-than', '1s'], (list) =>
      list.some((p) => p.id === waiting.id),
    );
    assert.ok(stuck.some((p) => p.id === waiting.id));
    // Besides those still waiting: payments whose workflow ended without an outcome (another test terminates one).
    const endedWithoutOutcome = (p: PaymentSummary) => p.status === 'needs_review' && p.closed_at !== null;
    assert.ok(stuck.every((p) => p.status === 'pending' || p.status === 'reconciling' || endedWithoutOutcome(p)));
    assert.ok(!stuck.some((p) => p.id === settled.id));

    const recent = await ops(['stuck', '--older-than', '1h', '--json']);
    assert.equal(recent.code, 0, recent.stderr);
    assert.ok(!(JSON.parse(recent.stdout) as PaymentSummary[]).some((p) => p.id === waiting.id));

    const table = await ops(['stuck', '--older-than', '1s']);
    assert.match(table.stdout, new RegExp(`^${waiting.id}\\s+pending\\s+bank_credit\\s+250\\s`, 'm'));
  });
});

describe('ops errors', () => {
  it('an unknown payment id', async () => {
    const run = await ops(['show', 'payment-acme-no-such-reference']);
    assert.equal(run.code, 3);
    assert.equal(run.stderr, 'ops: no payment payment-acme-no-such-reference\n');
    assert.equal(run.stdout, '');
    const resolve = await ops(['resolve', 'payment-acme-no-such-reference', '--outcome', 'failed', '--note', 'x']);
    assert.equal(resolve.code, 3);
    assert.equal(resolve.stderr, 'ops: no payment payment-acme-no-such-reference\n');
  });

  it('bad filters name the flag', async () => {
    const run = await ops(['list', '--status', 'lost', '--older-than', 'soon', '--limit', '0']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--status: .*"needs_review"/);
    assert.match(run.stderr, /--older-than: "soon" is not a duration/);
    assert.match(run.stderr, /--limit: /);
    const unknown = await ops(['list', '--colour', 'red']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown option '--colour'/);
  });

  it('an unreachable Temporal', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const run = await ops(['list'], { TEMPORAL_ADDRESS: address });
    assert.equal(run.code, 5);
    assert.match(run.stderr, new RegExp(`^ops: cannot reach Temporal at ${address} \\(namespace default\\): `));
  });
});
