import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { PAYMENT_TYPES } from '../src/domain/requests';
import { historyCost } from '../scripts/bench/history-cost';
import type { CostEvent, HistoryCost } from '../scripts/bench/history-cost';
import { runTwin } from '../scripts/bench/twin-run';
import type { TwinActivities } from '../scripts/bench/twin-workflow';
import { installTestRuntime } from './support/test-runtime';

// A payment's cost in Temporal against the twin's, the least a payment-like workflow can be (docs/performance.md#cost-
// per-payment): the replay corpus's payments, and a twin recorded here on the test's dev server.

const CURRENT = join(__dirname, 'histories', 'current');
/** A payment whose callback comes after its acknowledgement may cost at most this many events more than the twin. */
const EVENTS_OVER_TWIN = 2;

/** The events of the one corpus history whose file name ends with `suffix`. */
function corpusEvents(suffix: string): CostEvent[] {
  const files = readdirSync(CURRENT).filter((file) => file.startsWith('payment-') && file.endsWith(suffix));
  assert.equal(files.length, 1, `one *${suffix} history in test/histories/current: ${files.join(', ')}`);
  return (JSON.parse(readFileSync(join(CURRENT, files[0] ?? ''), 'utf8')) as { events: CostEvent[] }).events;
}

/** The corpus's history of `type` in scenario `label` (`00-success`), as history JSON. */
function corpusCost(type: string, label: string): HistoryCost {
  return historyCost(corpusEvents(`.${type}.${label}.json`));
}

let twin: HistoryCost;

before(async () => {
  const address = process.env.TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('TEST_TEMPORAL_ADDRESS is not set: run through scripts/test.ts');
  await installTestRuntime();
  const taskQueue = `twin-cost-${Date.now().toString(36)}`;
  const nativeConnection = await NativeConnection.connect({ address });
  const activities: TwinActivities = { noop: () => Promise.resolve() };
  const worker = await Worker.create({
    connection: nativeConnection,
    taskQueue,
    workflowsPath: require.resolve('../scripts/bench/twin-workflow'),
    activities,
  });
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection });
    const workflowId = await worker.runUntil(runTwin(client, taskQueue, taskQueue));
    // The client's proto objects (event types as numbers), where the corpus gives JSON (event types as names).
    twin = historyCost((await client.workflow.getHandle(workflowId).fetchHistory()).events ?? []);
  } finally {
    await connection.close();
    await nativeConnection.close();
  }
});

describe('cost per payment', () => {
  it("counts the twin's known shape exactly: the accounting itself", () => {
    assert.deepEqual(twin, {
      events: 17,
      workflowTasks: 3,
      activations: 3,
      activityTasks: 1,
      localActivities: 0,
      timers: 0,
      signals: 1,
      updates: 1,
      searchAttributeUpserts: 0,
      // Its start, its Update, its activity, its signal.
      actions: 4,
    });
  });

  it('counts billable actions by the Temporal Cloud rule: markers once per workflow task, retries, exempt upserts', () => {
    const completed = (nonfirst = 0): CostEvent => ({
      eventType: 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED',
      workflowTaskCompletedEventAttributes: { meteringMetadata: { nonfirstLocalActivityExecutionAttempts: nonfirst } },
    });
    const marker: CostEvent = {
      eventType: 'EVENT_TYPE_MARKER_RECORDED',
      markerRecordedEventAttributes: { markerName: 'core_local_activity' },
    };
    const upsert = (name: string): CostEvent => ({
      eventType: 'EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES',
      upsertWorkflowSearchAttributesEventAttributes: { searchAttributes: { indexedFields: { [name]: {} } } },
    });
    const cost = historyCost([
      { eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED' }, // 1
      completed(),
      marker, // 1: the task's markers together
      marker,
      upsert('TemporalChangeVersion'), // exempt
      upsert('PaymentStatus'), // 1
      { eventType: 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED' }, // 1
      { eventType: 'EVENT_TYPE_ACTIVITY_TASK_STARTED', activityTaskStartedEventAttributes: { attempt: 3 } }, // 2 retries
      completed(2), // 2 local-activity retries
      marker, // 1: another task's
      { eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW' }, // counted in the new run
    ]);
    assert.equal(cost.actions, 1 + 1 + 1 + 1 + 2 + 2 + 1);
    assert.equal(cost.localActivities, 3);
    assert.equal(cost.workflowTasks, 2);
    assert.equal(cost.activations, 2 + 3);
  });

  for (const type of PAYMENT_TYPES) {
    it(`${type}, callback after the acknowledgement: at most the twin's events + ${EVENTS_OVER_TWIN}`, () => {
      const cost = corpusCost(type, '00-success');
      assert.equal(cost.signals, 1, 'one callback');
      assert.equal(cost.updates, 1, 'one initiation Update');
      assert.ok(
        cost.events <= twin.events + EVENTS_OVER_TWIN,
        `${type} 00-success: ${cost.events} events, the twin ${twin.events}: ${JSON.stringify(cost)}`,
      );
    });
  }

  it('a batch item whose callback comes after its acknowledgement returns its outcome: no signal, fewer events', () => {
    // The payroll's first item: a bank credit in scenario 00 (test/capture-histories.ts).
    const events = corpusEvents('.payroll~item-00001.json');
    const signalled = events.filter((e) => e.eventType === 'EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED');
    assert.equal(signalled.length, 0, 'no report signal to its batch');
    const item = historyCost(events);
    const single = corpusCost('bank_credit', '00-success');
    assert.ok(item.events < single.events, `the item ${item.events} events, a single credit ${single.events}`);
    assert.equal(item.workflowTasks, 2, 'its outcome recorded in the task that closes it');
  });
});
