import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BatchProgress } from '../src/domain/batch-model';
import type { PaymentResource } from '../src/domain/payment-model';
import { freePort } from '../src/local/free-port';
import { AppError } from '../src/payments/app-errors';
import { recordAppliedAction } from '../src/payments/operator-action-log';
import { openDatabase } from '../src/records/database';
import type { Database } from '../src/records/database';
import { listOperatorActions, recordOperatorAction } from '../src/records/operator-actions';
import type { OperatorAction } from '../src/records/operator-actions';
import { purgeRecords } from '../src/records/record-purge';
import type { PurgeReport } from '../src/records/record-purge';
import { upsertBatchRecord, upsertPaymentRecord } from '../src/records/record-writes';
import { batchBody, waitForBatch } from './support/batch-helpers';
import { ops } from './support/ops-cli-runner';
import { paymentRequest, uniqueReference } from './support/request-builders';
import { OPERATOR_KEY, OPERATOR_NAME, startStack, testEnvironment } from './support/test-stack';
import type { Stack } from './support/test-stack';

// Operator actions recorded in PostgreSQL (resolutions, batch controls, `records verify` repairs), through the API and
// the CLI; and `records purge`: finished records past RECORDS_PURGE_AFTER go, open ones and references stay.

let stack: Stack;
let db: Database;
const startedAt = Date.now();
const sinceStart = () => `${Math.ceil((Date.now() - startedAt) / 1000) + 5}s`;

before(async () => {
  // Scenario 22 settles only by reconciliation, a few seconds per item: slow enough to pause a batch.
  stack = await startStack({ env: { BATCH_CONCURRENCY: '1' } });
  db = openDatabase(testEnvironment().databaseUrl);
});
after(async () => {
  await db?.end();
  await stack?.close();
});

const create = async (scenario: string, request = paymentRequest('mobile_money_debit', scenario)) => {
  const created = await stack.api('POST', '/v1/payments', request);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body;
};
const actionsOn = (subjectId: string) => listOperatorActions(db, { subjectId, limit: 100 });
const strip = (a: OperatorAction) => ({ ...a, id: undefined, at: undefined });

describe('operator actions', () => {
  it('records a resolution through the API and the CLI, lists it with ops actions and ops show, not a refused one', async () => {
    const [viaApi, viaCli] = await Promise.all([create('33'), create('33')]);
    await Promise.all([
      stack.waitForStatus(viaApi.id, ['needs_review']),
      stack.waitForStatus(viaCli.id, ['needs_review']),
    ]);
    const body = { outcome: 'failed', note: 'customer confirmed no debit' };
    const resolved = await stack.api('POST', `/v1/payments/${viaApi.id}/resolve`, body, OPERATOR_KEY);
    assert.equal(resolved.status, 200);
    assert.deepEqual((await actionsOn(viaApi.id)).map(strip), [
      {
        id: undefined,
        at: undefined,
        operator: OPERATOR_NAME,
        action: 'payment.resolve',
        subject_id: viaApi.id,
        merchant_id: 'acme',
        detail: { outcome: 'failed', note: 'customer confirmed no debit' },
        outcome: 'failed',
      },
    ]);
    // Refused (already settled): nothing changed, nothing recorded.
    const again = await stack.api('POST', `/v1/payments/${viaApi.id}/resolve`, body, OPERATOR_KEY);
    assert.equal(again.status, 409);
    assert.equal((await actionsOn(viaApi.id)).length, 1);

    const cli = await ops([
      'resolve',
      viaCli.id,
      '--outcome',
      'succeeded',
      '--note',
      'bank statement',
      '--by',
      'bo.ops',
    ]);
    assert.equal(cli.code, 0, cli.stderr);
    const listed = await ops(['actions', '--subject', viaCli.id, '--json']);
    assert.equal(listed.code, 0, listed.stderr);
    const [action] = JSON.parse(listed.stdout) as OperatorAction[];
    assert.deepEqual(action && strip(action), {
      id: undefined,
      at: undefined,
      operator: 'bo.ops',
      action: 'payment.resolve',
      subject_id: viaCli.id,
      merchant_id: 'acme',
      detail: { outcome: 'succeeded', note: 'bank statement' },
      outcome: 'succeeded',
    });
    const byOperator = await ops(['actions', '--operator', 'bo.ops']);
    assert.equal(byOperator.code, 0, byOperator.stderr);
    assert.match(byOperator.stdout, /^AT\s+OPERATOR\s+ACTION\s+SUBJECT_ID\s+OUTCOME\s+DETAIL$/m);
    assert.match(byOperator.stdout, new RegExp(`bo\\.ops\\s+payment\\.resolve\\s+${viaCli.id}\\s+succeeded`));

    const shown = await ops(['show', viaCli.id, '--json', '--no-history']);
    assert.equal(shown.code, 0, shown.stderr);
    const { actions } = JSON.parse(shown.stdout) as { actions: OperatorAction[] };
    assert.deepEqual(
      actions.map((a) => [a.operator, a.action]),
      [['bo.ops', 'payment.resolve']],
    );
    const text = await ops(['show', viaCli.id, '--no-history']);
    assert.match(text.stdout, /^Operator actions\nAT\s+OPERATOR/m);

    // Without DATABASE_URL the CLI changes nothing it could not record.
    const unrecorded = await stack.waitForStatus((await create('33')).id, ['needs_review']);
    const refused = await ops(['resolve', unrecorded.id, '--outcome', 'failed', '--note', 'x'], { DATABASE_URL: '' });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /DATABASE_URL is not set: operator actions are recorded/);
    assert.equal((await stack.waitForStatus(unrecorded.id, ['needs_review'])).status, 'needs_review');
  });

  it("records an operator's batch controls through the API and the CLI, not a merchant's", async () => {
    const created = await stack.api<BatchProgress>(
      'POST',
      '/v1/payout-batches',
      batchBody(uniqueReference('actions'), 6, ['22']),
    );
    assert.equal(created.status, 201);
    const batchId = created.body.id;
    const paused = await stack.api<BatchProgress>('POST', `/v1/payout-batches/${batchId}/pause`, {}, OPERATOR_KEY);
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    const resumed = await ops(['batch', 'resume', batchId, '--by', 'bo.ops', '--json']);
    assert.equal(resumed.code, 0, resumed.stderr);
    const byMerchant = await stack.api<BatchProgress>('POST', `/v1/payout-batches/${batchId}/pause`, {});
    assert.equal(byMerchant.status, 200);
    const cancelled = await ops(['batch', 'cancel', batchId, '--by', 'bo.ops']);
    assert.equal(cancelled.code, 0, cancelled.stderr);
    const recorded = (await actionsOn(batchId)).reverse();
    assert.deepEqual(
      recorded.map((a) => [a.operator, a.action, a.outcome, a.merchant_id]),
      [
        [OPERATOR_NAME, 'batch.pause', 'paused', 'acme'],
        ['bo.ops', 'batch.resume', 'running', 'acme'],
        ['bo.ops', 'batch.cancel', 'cancelling', 'acme'],
      ],
    );
  });

  it('records one action per record `records verify` repairs', async () => {
    const settled = await stack.waitForStatus((await create('00')).id, ['succeeded']);
    await db.query('DELETE FROM payments WHERE id = $1', [settled.id]);
    const run = await ops(['records', 'verify', '--newer-than', sinceStart(), '--by', 'bo.ops', '--json'], {
      TASK_QUEUE: stack.taskQueue,
    });
    assert.equal(run.code, 0, run.stderr);
    const repairs = await actionsOn(settled.id);
    assert.deepEqual(repairs.map(strip), [
      {
        id: undefined,
        at: undefined,
        operator: 'bo.ops',
        action: 'record.repair',
        subject_id: settled.id,
        merchant_id: 'acme',
        detail: { kind: 'payment', found: 'missing', status: 'succeeded' },
        outcome: 'repaired',
      },
    ]);
  });

  it('fails loudly, naming what was applied, when PostgreSQL does not take the record', async () => {
    const down = openDatabase(`postgres://nobody:secret@127.0.0.1:${await freePort()}/none`);
    const waits: number[] = [];
    try {
      await assert.rejects(
        recordAppliedAction(
          down,
          { operator: 'bo.ops', action: 'batch.pause', subjectId: 'batch-acme-x', outcome: 'paused' },
          (ms) => Promise.resolve(waits.push(ms)),
        ),
        (err: unknown) =>
          err instanceof AppError &&
          err.kind === 'action_not_recorded' &&
          /batch\.pause on batch-acme-x by bo\.ops was applied \(paused\) but could not be recorded/.test(err.message),
      );
      assert.deepEqual(waits, [500, 1000, 2000], 'retried briefly first');
    } finally {
      await down.end();
    }
  });
});

describe('records purge', () => {
  const LONG_AGO = '2001-01-01T00:00:00.000Z';
  const purge = async (...flags: string[]) => {
    const run = await ops(['records', 'purge', '--json', ...flags], { RECORDS_PURGE_AFTER: '400d' });
    assert.equal(run.code, 0, run.stderr);
    return JSON.parse(run.stdout) as PurgeReport;
  };
  const exists = async (table: 'payments' | 'batches', id: string) =>
    (await db.query(`SELECT 1 FROM ${table} WHERE id = $1`, [id])).rowCount === 1;
  /** Puts a record (and a batch's items) back to long ago, as if they had finished then. */
  const age = async (table: 'payments' | 'batches', id: string) => {
    await db.query(`UPDATE ${table} SET recorded_at = $2 WHERE id = $1`, [id, LONG_AGO]);
    if (table === 'batches') await db.query('UPDATE payments SET recorded_at = $2 WHERE batch_id = $1', [id, LONG_AGO]);
  };

  it('deletes finished records past RECORDS_PURGE_AFTER with their actions, keeps open and recent ones and the references', async () => {
    const request = paymentRequest('mobile_money_debit', '00');
    const real = await stack.waitForStatus((await create('00', request)).id, ['succeeded']);
    const batchRequest = batchBody(uniqueReference('purged'), 2);
    const batchCreated = await stack.api<BatchProgress>('POST', '/v1/payout-batches', batchRequest);
    const realBatch = await waitForBatch(stack, batchCreated.body.id, (b) => b.status === 'completed');
    await new Promise((r) => setTimeout(r, 1000)); // the batch's last record writes
    await Promise.all([age('payments', real.id), age('batches', realBatch.id)]);

    // Records written directly, long ago: one still in review, one finished only yesterday, a batch with an item in review.
    const copy = (label: string, status: PaymentResource['status']): PaymentResource => {
      const reference = uniqueReference(label);
      return { ...real, id: `payment-acme-${reference}`, reference, status };
    };
    const inReview = copy('review', 'needs_review');
    const recent = copy('recent', 'succeeded');
    const oldDone = copy('old', 'failed');
    const keptBatch: BatchProgress = { ...realBatch, id: `batch-acme-${uniqueReference('kept')}`, status: 'completed' };
    const keptItem = copy('kept-item', 'needs_review');
    const yesterday = new Date(Date.now() - 86_400_000).toISOString();
    const write = (resource: PaymentResource, recordedAt: string, batchId?: string) =>
      upsertPaymentRecord(db, {
        resource,
        merchantId: 'acme',
        revision: 3,
        recordedAt,
        ...(batchId ? { batchId } : {}),
      });
    await Promise.all([
      write(inReview, LONG_AGO),
      write(recent, yesterday),
      write(oldDone, LONG_AGO),
      write(keptItem, LONG_AGO, keptBatch.id),
      upsertBatchRecord(db, {
        resource: keptBatch,
        merchantId: 'acme',
        reference: keptBatch.reference,
        revision: 3,
        recordedAt: LONG_AGO,
      }),
    ]);
    for (const subjectId of [oldDone.id, inReview.id]) {
      await recordOperatorAction(db, { operator: 'bo.ops', action: 'payment.resolve', subjectId, outcome: 'failed' });
    }
    const items = (await db.query<{ id: string }>('SELECT id FROM payments WHERE batch_id = $1', [realBatch.id])).rows;
    assert.equal(items.length, 2);

    const dry = await purge('--dry-run');
    assert.equal(dry.dryRun, true);
    assert.ok(dry.payments >= 2 && dry.batches >= 1 && dry.batchItems >= 2, JSON.stringify(dry));
    assert.ok(await exists('payments', real.id), 'a dry run deletes nothing');

    const report = await purge();
    assert.ok(report.payments >= 2 && report.batches >= 1 && report.batchItems >= 2, JSON.stringify(report));
    assert.ok((report.related.operator_actions ?? 0) >= 1);
    // The real payment's notifications (every merchant's events are in the outbox) go with it.
    assert.ok((report.related.notification_events ?? 0) >= 1, JSON.stringify(report.related));
    const events = await db.query('SELECT 1 FROM notification_events WHERE subject = $1', [real.id]);
    assert.equal(events.rowCount, 0);
    // So does the status answer that confirmed its callback.
    assert.ok((report.related.confirmation_answers ?? 0) >= 1, JSON.stringify(report.related));
    const answers = await db.query('SELECT 1 FROM confirmation_answers WHERE payment_id = $1', [real.id]);
    assert.equal(answers.rowCount, 0);
    assert.ok((report.related.initiation_answers ?? 0) >= 1, 'and the answer its initiation kept');
    const initiated = await db.query('SELECT 1 FROM initiation_answers WHERE payment_id = $1', [real.id]);
    assert.equal(initiated.rowCount, 0);
    for (const id of [real.id, oldDone.id, ...items.map((i) => i.id)])
      assert.equal(await exists('payments', id), false, id);
    assert.equal(await exists('batches', realBatch.id), false);
    for (const id of [inReview.id, recent.id, keptItem.id]) assert.ok(await exists('payments', id), `${id} is kept`);
    assert.ok(await exists('batches', keptBatch.id), 'a batch with an item in review is kept');
    assert.deepEqual(await actionsOn(oldDone.id), []);
    assert.equal((await actionsOn(inReview.id)).length, 1);
    const claim = await db.query('SELECT 1 FROM initiation_claims WHERE payment_id = $1', [real.id]);
    assert.equal(claim.rowCount, 1, 'the initiation claim stays');

    // A purged reference never starts anything again.
    const resent = await stack.api('POST', '/v1/payments', request);
    assert.equal(resent.status, 409);
    assert.equal((resent.body as unknown as { error: { code: string } }).error.code, 'reference_purged');
    const resentBatch = await stack.api('POST', '/v1/payout-batches', batchRequest);
    assert.equal(resentBatch.status, 409);
    assert.equal((resentBatch.body as unknown as { error: { code: string } }).error.code, 'reference_purged');
    assert.equal(await exists('payments', real.id), false);

    const table = await ops(['records', 'purge'], { RECORDS_PURGE_AFTER: '400d' });
    assert.equal(table.code, 0, table.stderr);
    assert.match(
      table.stdout,
      /^deleted \d+ payments, \d+ batches \(\d+ items\), \d+ operator_actions, \d+ notification_events, \d+ confirmation_answers, \d+ initiation_answers: finished/,
    );
  });

  it('purges in chunks, and refuses to run without RECORDS_PURGE_AFTER', async () => {
    const base = (await db.query<{ resource: PaymentResource }>('SELECT resource FROM payments LIMIT 1')).rows[0];
    assert.ok(base);
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const reference = uniqueReference(`chunk${i}`);
      const resource = { ...base.resource, id: `payment-acme-${reference}`, reference, status: 'succeeded' as const };
      await upsertPaymentRecord(db, { resource, merchantId: 'acme', revision: 2, recordedAt: LONG_AGO });
      ids.push(resource.id);
    }
    const chunks: number[] = [];
    const report = await purgeRecords(db, {
      before: new Date(Date.now() - 400 * 86_400_000),
      dryRun: false,
      chunkSize: 2,
      progress: (sofar) => chunks.push(sofar.payments),
    });
    assert.ok(report.payments >= 5);
    assert.ok(chunks.length >= 3 && chunks.every((n, i) => i === 0 || n > chunks[i - 1]!), chunks.join());
    for (const id of ids) assert.equal(await exists('payments', id), false);

    const unset = await ops(['records', 'purge'], { RECORDS_PURGE_AFTER: '' });
    assert.equal(unset.code, 2);
    assert.match(unset.stderr, /RECORDS_PURGE_AFTER is not set: records are kept forever/);
    const short = await ops(['records', 'purge'], { RECORDS_PURGE_AFTER: '5m' });
    assert.equal(short.code, 2);
    assert.match(short.stderr, /RECORDS_PURGE_AFTER/);
  });
});
