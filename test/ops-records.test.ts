import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { BatchProgress } from '../src/domain/batch-model';
import type { PaymentResource } from '../src/domain/payment-model';
import type { VerifyReport } from '../src/payments/record-verification';
import { eventually } from '../src/local/eventually';
import { openDatabase } from '../src/records/database';
import type { Database } from '../src/records/database';
import { readVersioned } from '../src/records/record-reads';
import { repairPaymentRecord, upsertPaymentRecord } from '../src/records/record-writes';
import { batchBody, waitForBatch } from './support/batch-helpers';
import { ops } from './support/ops-cli-runner';
import { paymentRequest, uniqueReference } from './support/request-builders';
import { OPERATOR_KEY, startStack, testEnvironment } from './support/test-stack';
import type { Stack } from './support/test-stack';

// `npm run ops -- records verify`, run as a process: records put back to an older state or deleted (as a restore from
// a backup leaves them) are repaired from the workflows' live state, and a second run finds them all equal.

let stack: Stack;
let db: Database;
let lagging: PaymentResource;
let deleted: PaymentResource;
let batch: BatchProgress;
const startedAt = Date.now();
/** `--newer-than` for this file's workflows only: the shared dev server holds other files' too. */
const sinceStart = () => `${Math.ceil((Date.now() - startedAt) / 1000) + 5}s`;

before(async () => {
  stack = await startStack();
  db = openDatabase(testEnvironment().databaseUrl);
  const create = async () => (await stack.api('POST', '/v1/payments', paymentRequest('mobile_money_debit', '00'))).body;
  [lagging, deleted] = await Promise.all([create(), create()]);
  const created = await stack.api<BatchProgress>('POST', '/v1/payout-batches', batchBody(uniqueReference('b'), 2));
  assert.equal(created.status, 201);
  batch = await closedBatch(created.body.id);
  [lagging, deleted] = await Promise.all([
    stack.waitForStatus(lagging.id, ['succeeded']),
    stack.waitForStatus(deleted.id, ['succeeded']),
  ]);
});

/**
 * The batch as its closed workflow left it. It may show `completed` a moment earlier: a workflow task tried again (an
 * item's report came as it completed) finishes it once more, at a later time.
 */
async function closedBatch(id: string): Promise<BatchProgress> {
  await waitForBatch(stack, id, (b) => b.status === 'completed');
  const connection = await Connection.connect({ address: testEnvironment().address });
  try {
    await eventually(
      async () => {
        const { workflowExecutionInfo } = await connection.workflowService.describeWorkflowExecution({
          namespace: 'default',
          execution: { workflowId: id },
        });
        const running = temporal.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;
        assert.notEqual(workflowExecutionInfo?.status, running);
      },
      { timeoutMs: 30_000, what: `batch ${id} closed` },
    );
  } finally {
    await connection.close();
  }
  return waitForBatch(stack, id, (b) => b.status === 'completed');
}

after(async () => {
  await db.end();
  await stack.close();
});

const verify = async (...flags: string[]): Promise<VerifyReport> => {
  const run = await ops(['records', 'verify', '--newer-than', sinceStart(), '--json', ...flags], {
    DATABASE_URL: testEnvironment().databaseUrl,
    // This stack's workflows only: other files' stacks leave workflows whose workers are gone.
    TASK_QUEUE: stack.taskQueue,
  });
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout) as VerifyReport;
};

const found = (report: VerifyReport, id: string) => report.differences.find((d) => d.id === id);

describe('ops records verify', () => {
  it('repairs a record put back to an older state and one deleted, then finds them all equal', async () => {
    await db.query(
      `UPDATE payments SET status = 'pending', resource = jsonb_set(resource::jsonb, '{status}', '"pending"')::json,
         revision = 1, recorded_at = recorded_at - interval '1 minute' WHERE id = $1`,
      [lagging.id],
    );
    await db.query('DELETE FROM payments WHERE id = $1', [deleted.id]);
    const earlier = new Date(Date.parse(batch.created_at) + 1).toISOString();
    await db.query(
      `UPDATE batches SET resource = jsonb_set(resource::jsonb, '{finished_at}', to_jsonb($2::text))::json,
         revision = 1, recorded_at = recorded_at - interval '1 minute' WHERE id = $1`,
      [batch.id, earlier],
    );

    // The API answers a finished batch from its record.
    const fromRecord = await stack.api<BatchProgress>('GET', `/v1/payout-batches/${batch.id}`, undefined, OPERATOR_KEY);
    assert.deepEqual(fromRecord.body, { ...batch, finished_at: earlier });

    const dry = await verify('--dry-run');
    assert.equal(dry.dryRun, true);
    assert.deepEqual(found(dry, lagging.id), { kind: 'payment', id: lagging.id, found: 'lagging', repaired: false });
    assert.deepEqual(found(dry, deleted.id), { kind: 'payment', id: deleted.id, found: 'missing', repaired: false });
    assert.deepEqual(found(dry, batch.id), { kind: 'batch', id: batch.id, found: 'lagging', repaired: false });
    assert.equal(dry.payments.repaired + dry.batches.repaired, 0);
    assert.equal((await readVersioned(db, 'payments', deleted.id)) ?? null, null, 'a dry run repairs nothing');

    const first = await verify();
    assert.deepEqual(found(first, lagging.id), { kind: 'payment', id: lagging.id, found: 'lagging', repaired: true });
    assert.deepEqual(found(first, deleted.id), { kind: 'payment', id: deleted.id, found: 'missing', repaired: true });
    assert.deepEqual(found(first, batch.id), { kind: 'batch', id: batch.id, found: 'lagging', repaired: true });
    assert.ok(first.payments.repaired >= 2 && first.batches.repaired >= 1, JSON.stringify(first));
    assert.ok(first.payments.checked >= 4, 'the two payments and the batch items are checked');

    // The records answer the API again as the workflows do.
    for (const payment of [lagging, deleted]) {
      const answer = await stack.api<PaymentResource>('GET', `/v1/payments/${payment.id}`, undefined, OPERATOR_KEY);
      assert.deepEqual(answer.body, payment);
    }
    const batchRecord = await readVersioned<BatchProgress>(db, 'batches', batch.id);
    assert.deepEqual(batchRecord?.resource, batch);
    const batchAnswer = await stack.api<BatchProgress>(
      'GET',
      `/v1/payout-batches/${batch.id}`,
      undefined,
      OPERATOR_KEY,
    );
    assert.deepEqual(batchAnswer.body, batch);

    const second = await verify();
    assert.deepEqual(second.differences, []);
    assert.equal(second.payments.equal, second.payments.checked);
    assert.equal(second.batches.equal, second.batches.checked);
    assert.ok(second.payments.checked >= 4 && second.batches.checked >= 1);
  });

  it('prints a table, and says what is missing without DATABASE_URL', async () => {
    const run = await ops(['records', 'verify', '--dry-run', '--newer-than', sinceStart()], {
      DATABASE_URL: testEnvironment().databaseUrl,
      TASK_QUEUE: stack.taskQueue,
    });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^KIND\s+CHECKED\s+EQUAL\s+LAGGING\s+MISSING\s+REPAIRED\s+UNREADABLE\n/);
    assert.match(run.stdout, /^payments\s+\d+\s+\d+\s+0\s+0\s+0\s+0$/m);
    assert.match(run.stdout, /dry run: nothing repaired/);

    const without = await ops(['records', 'verify'], { DATABASE_URL: '' });
    assert.equal(without.code, 2);
    assert.match(without.stderr, /DATABASE_URL is not set/);
  });

  it('answers a batch without a record from its workflow, and verify records it', async () => {
    await db.query('DELETE FROM batches WHERE id = $1', [batch.id]);
    const answer = await stack.api<BatchProgress>('GET', `/v1/payout-batches/${batch.id}`, undefined, OPERATOR_KEY);
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, batch);
    const report = await verify();
    assert.deepEqual(found(report, batch.id), { kind: 'batch', id: batch.id, found: 'missing', repaired: true });
    assert.deepEqual((await readVersioned<BatchProgress>(db, 'batches', batch.id))?.resource, batch);
  });

  it('a repair supersedes the record it read but never a later write of the workflow', async () => {
    const id = lagging.id;
    const read = await readVersioned<PaymentResource>(db, 'payments', id);
    assert.ok(read);
    const older = { ...lagging, status: 'pending' as const };
    // The workflow wrote since the read: the repair stands down.
    await db.query('UPDATE payments SET revision = revision + 1 WHERE id = $1', [id]);
    assert.equal(await repairPaymentRecord(db, { resource: older, merchantId: 'acme' }, read), false);
    const current = await readVersioned<PaymentResource>(db, 'payments', id);
    assert.ok(current);
    assert.equal(current.resource.status, 'succeeded');
    // Over the version it read it wins; the workflow's next write wins over it, even one at the same clock.
    assert.equal(await repairPaymentRecord(db, { resource: older, merchantId: 'acme' }, current), true);
    const repaired = await readVersioned<PaymentResource>(db, 'payments', id);
    assert.equal(repaired?.resource.status, 'pending');
    assert.equal(repaired?.revision, current.revision + 1);
    await upsertPaymentRecord(db, {
      resource: lagging,
      merchantId: 'acme',
      revision: current.revision + 2,
      recordedAt: current.recordedAt,
    });
    assert.equal((await readVersioned<PaymentResource>(db, 'payments', id))?.resource.status, 'succeeded');
  });
});
