import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { BatchProgress } from '../src/domain/batch-model';
import { openDatabase } from '../src/records/database';
import type { Database } from '../src/records/database';
import { batchBody, waitForBatch } from './support/batch-helpers';
import { uniqueReference } from './support/request-builders';
import { startStack, testEnvironment, connectTestClient } from './support/test-stack';
import type { Stack } from './support/test-stack';

// A batch read from PostgreSQL a page (BATCH_PAGE_SIZE) at a time, four pages with a short last one, over more than
// one run: every item has its row in batch_items, in upload order, and its payment's record, settled as its sandbox
// scenario says. Each item costs the batch three events (its child's start, started, its report): 540 outrun the 500
// a run may hold however the workflow tasks fall (132 items did not, once, on a loaded machine). The 400-item batch
// with a restart and a kill is payout-batch-scale.test.ts's.
const PAGE_SIZE = 50;
const ITEMS = 3 * PAGE_SIZE + 30;
const SCENARIOS = ['00', '00', '00', '11'] as const;
const MAX_RUN_EVENTS = 500;

let stack: Stack;
let db: Database;
before(async () => {
  stack = await startStack({
    env: {
      BATCH_CONCURRENCY: '200',
      BATCH_PAGE_SIZE: String(PAGE_SIZE),
      BATCH_RUN_MAX_EVENTS: String(MAX_RUN_EVENTS),
      LATE_CALLBACK_WINDOW: '1s',
      // One in four of its items fails on purpose: the automatic halt would stop it (test/batch-halt.test.ts).
      BATCH_HALT_FAILURE_SHARE: '1',
    },
  });
  db = openDatabase(testEnvironment().databaseUrl);
});
after(async () => {
  await db?.end();
  await stack?.close();
});

interface ItemRow {
  position: number;
  payment_id: string;
  reference: string;
  amount: string;
  item_payment_id: string;
  item_batch_id: string;
  status: string | null;
  payment_batch_id: string | null;
  payment_amount: string | null;
}

it(`a ${ITEMS}-item batch: every item's row in batch_items, and its payment settled and recorded`, async () => {
  const body = batchBody(uniqueReference('items'), ITEMS, SCENARIOS);
  const started = Date.now();
  const created = await stack.api<BatchProgress>('POST', '/v1/payout-batches', body);
  assert.equal(created.status, 201, JSON.stringify(created.body).slice(0, 500));
  const id = created.body.id;

  // Stored before the batch started: the items' rows are there whatever the workflow has done yet.
  const { rows: stored } = await db.query<{ n: string }>('SELECT count(*) AS n FROM batch_items WHERE batch_id = $1', [
    id,
  ]);
  assert.equal(Number(stored[0]?.n), ITEMS);

  const batch = await waitForBatch(stack, id, (b) => b.status === 'completed', 600_000);
  process.stdout.write(`# ${ITEMS} items in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  const failing = ITEMS / SCENARIOS.length;
  assert.equal(batch.items.succeeded.count, ITEMS - failing);
  assert.equal(batch.items.failed.count, failing);

  const { rows } = await db.query<ItemRow>(
    `SELECT i.position, i.payment_id, i.reference, i.amount::text AS amount,
            i.item -> 'body' ->> 'paymentId' AS item_payment_id, i.item -> 'body' ->> 'batchId' AS item_batch_id,
            p.status, p.batch_id AS payment_batch_id, p.amount::text AS payment_amount
     FROM batch_items i LEFT JOIN payments p ON p.id = i.payment_id
     WHERE i.batch_id = $1 ORDER BY i.position`,
    [id],
  );
  assert.equal(rows.length, ITEMS);
  const wrong = rows.filter((row, position) => {
    const sent = body.items[position];
    const paymentId = `payment-acme-${body.reference}~${sent?.reference}`;
    const status = SCENARIOS[position % SCENARIOS.length] === '11' ? 'failed' : 'succeeded';
    return (
      row.position !== position ||
      row.reference !== sent?.reference ||
      Number(row.amount) !== sent.amount ||
      row.payment_id !== paymentId ||
      row.item_payment_id !== paymentId ||
      row.item_batch_id !== id ||
      row.status !== status ||
      row.payment_batch_id !== id ||
      Number(row.payment_amount) !== sent.amount
    );
  });
  assert.deepEqual(wrong.slice(0, 5), [], `${wrong.length} items whose row or payment is not as uploaded`);

  // Its items were read across runs: each run went on from the item the one before it stopped at.
  const client = await connectTestClient();
  try {
    const runs: string[] = [];
    for await (const run of client.workflow.list({ query: `WorkflowId = "${id}"` })) runs.push(run.runId);
    assert.ok(runs.length > 1, `the batch continued as new (${runs.length} runs)`);
    // Its record writes are activities: a local one would hold a task open while the items' reports pile up
    // (patch batch-record-by-activity).
    const events = (await client.workflow.getHandle(id, runs[0]).fetchHistory()).events ?? [];
    const writes = events.filter(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'recordBatch',
    );
    const markers = events.filter((event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity');
    assert.ok(writes.length > 0, 'the batch wrote its record');
    assert.equal(markers.length, 0, 'no local activity in the batch');
  } finally {
    await client.connection.close();
  }
});

it('the same body again answers the batch it started, and stores no second copy of its items', async () => {
  const body = batchBody(uniqueReference('again'), 3);
  const first = await stack.api<BatchProgress>('POST', '/v1/payout-batches', body);
  assert.equal(first.status, 201);
  const again = await stack.api<BatchProgress>('POST', '/v1/payout-batches', body);
  assert.equal(again.status, 200);
  assert.equal(again.body.id, first.body.id);
  const other = await stack.api('POST', '/v1/payout-batches', batchBody(body.reference, 4));
  assert.equal(other.status, 409);
  const { rows } = await db.query<{ position: number }>(
    'SELECT position FROM batch_items WHERE batch_id = $1 ORDER BY position',
    [first.body.id],
  );
  assert.deepEqual(
    rows.map((row) => row.position),
    [0, 1, 2],
  );
  await waitForBatch(stack, first.body.id, (b) => b.status === 'completed');
});
