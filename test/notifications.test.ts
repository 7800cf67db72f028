import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@temporalio/client';
import { eventually } from '../src/local/eventually';
import { parseConfig } from '../src/config/config-loading';
import { cliSchema } from '../src/cli/ops-context';
import { NOTIFICATION_DISPATCHER_WORKFLOW, notificationDispatcherId } from '../src/domain/ids';
import type { NotificationEvent } from '../src/domain/notification';
import type { DeliveryRecord, NotificationOrder } from '../src/domain/notification-delivery';
import type { PaymentResource } from '../src/domain/payment-model';
import { signMessage } from '../src/crypto/signing';
import { parseKeyring } from '../src/crypto/keyring';
import type { ReceivedNotification, ReceiverMode } from '../src/sandbox/merchant-inbox';
import { Worker } from '@temporalio/worker';
import { WORKFLOW_BUNDLE } from '../src/local/build-outputs';
import { connectClient } from '../src/temporal/temporal-client';
import { AppError } from '../src/payments/app-errors';
import { Notifications } from '../src/payments/notification-deliveries';
import { createDataConverter } from '../src/temporal/data-converter';
import { notificationSignal, notificationsQuery } from '../src/workflows/definitions';
import type { BatchProgress } from '../src/domain/batch-model';
import { batchBody } from './support/batch-helpers';
import { ops } from './support/ops-cli-runner';
import { paymentRequest } from './support/request-builders';
import {
  NOTIFIED_MERCHANT_KEY,
  TEST_ENCRYPTION_KEYS,
  TEST_SIGNING_KEYS,
  startStack,
  testEnvironment,
} from './support/test-stack';
import type { Stack } from './support/test-stack';
import { setReceiverMode } from './support/merchant-inbox-server';

let stack: Stack;
let client: Client;
/** Workflows whose histories the last test replays. */
const replayed: string[] = [];
before(async () => {
  stack = await startStack();
  client = await connectClient(
    parseConfig(cliSchema, { TEMPORAL_ADDRESS: testEnvironment().address, ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS }),
  );
});
after(async () => {
  await client?.connection.close();
  await stack?.close();
});

const setMode = (mode: ReceiverMode) => setReceiverMode(stack, mode);

/** What the sandbox's merchant received about one payment (or batch), in arrival order. */
async function received(subject: string): Promise<ReceivedNotification[]> {
  const all = await stack.sandboxGet<ReceivedNotification[]>('/merchant/notifications');
  return all.filter((n) => subjectOf(n) === subject);
}

async function receivedUntil(
  subject: string,
  done: (list: ReceivedNotification[]) => boolean,
  timeoutMs = 20_000,
): Promise<ReceivedNotification[]> {
  return eventually(
    async () => {
      const list = await received(subject);
      assert.ok(done(list), `got ${JSON.stringify(list.map(summary))}`);
      return list;
    },
    { timeoutMs, intervalMs: 200, what: `notifications about ${subject} received (${done.toString()})` },
  );
}

const subjectOf = (n: ReceivedNotification) => String((n.event as NotificationEvent).data?.object?.id);
const summary = (n: ReceivedNotification) => `${n.type} ${n.event_id} ${n.answered}`;
const delivered = (list: ReceivedNotification[], type: string) =>
  list.some((n) => n.type === type && n.answered === 200);

/**
 * A run's history once its first workflow task completed. A run continued as new in quick succession starts after a
 * backoff Temporal adds, and a history of its start event alone is one the SDK's replay waits on forever.
 */
async function ranItsCode(workflowId: string, runId?: string) {
  const handle = client.workflow.getHandle(workflowId, runId);
  return eventually(
    async () => {
      const history = await handle.fetchHistory();
      assert.ok(history.events?.some((e) => e.workflowTaskCompletedEventAttributes));
      return history;
    },
    { timeoutMs: 15_000, what: `${workflowId} run ${runId ?? '(latest)'} running a workflow task` },
  );
}

async function pay(type: 'card_payment' | 'mobile_money_debit', scenario: string): Promise<PaymentResource> {
  const response = await stack.api('POST', '/v1/payments', paymentRequest(type, scenario), NOTIFIED_MERCHANT_KEY);
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body;
}

describe('merchant notifications', () => {
  it("arrive signed and in order, with the payment as GET shows it, and are recorded in the payment's events", async () => {
    await setMode({ mode: 'ok' });
    const payment = await pay('card_payment', '00');
    replayed.push(payment.id);
    const list = await receivedUntil(payment.id, (l) => delivered(l, 'payment.succeeded'));
    assert.deepEqual(
      list.map((n) => [n.type, n.answered, n.verified]),
      [
        ['payment.action_required', 200, true],
        ['payment.succeeded', 200, true],
      ],
    );
    const [required, succeeded] = list.map((n) => n.event as NotificationEvent);
    assert.equal(required!.data.object.status, 'pending');
    assert.deepEqual(required!.data.object.next_action, payment.next_action);
    assert.equal(succeeded!.data.object.status, 'succeeded');
    assert.equal(succeeded!.merchant_id, stack.notifiedMerchant);
    assert.ok(required!.created_at <= succeeded!.created_at);
    assert.notEqual(required!.id, succeeded!.id);
    assert.deepEqual(
      list.map((n) => n.idempotency_key),
      list.map((n) => n.event_id),
    );

    const shown = await stack.waitForStatus(payment.id, ['succeeded']);
    const queued = await eventually(
      async () => {
        const current = await stack.api('GET', `/v1/payments/${payment.id}`, undefined, NOTIFIED_MERCHANT_KEY);
        const messages = current.body.events.filter((e) => e.type === 'notification_queued').map((e) => e.message);
        assert.ok(messages.length >= 2, `queued: ${JSON.stringify(messages)}`);
        return messages.map((message) => message ?? '');
      },
      { timeoutMs: 10_000, intervalMs: 200, what: `two notifications queued for ${payment.id}` },
    );
    assert.deepEqual(queued, [`payment.action_required ${required!.id}`, `payment.succeeded ${succeeded!.id}`]);
    assert.equal(shown.status, 'succeeded');
  });

  it('reach a receiver that fails for a while once it recovers, each event under one id, still in order', async () => {
    await setMode({ mode: 'fail', status: 500, times: 3 });
    const payment = await pay('card_payment', '00');
    const list = await receivedUntil(payment.id, (l) => delivered(l, 'payment.succeeded'));
    assert.deepEqual(
      list.map((n) => [n.type, n.answered]),
      [
        ['payment.action_required', 500],
        ['payment.action_required', 500],
        ['payment.action_required', 500],
        ['payment.action_required', 200],
        ['payment.succeeded', 200],
      ],
    );
    assert.equal(new Set(list.slice(0, 4).map((n) => n.event_id)).size, 1, 'one event id for every attempt');
    assert.ok(list.every((n) => n.verified));
  });

  it('stop at 410 (no retry), show as stopped to operators, and go out again when replayed', async () => {
    await setMode({ mode: 'gone', times: 1 });
    const payment = await pay('mobile_money_debit', '00');
    const first = await receivedUntil(payment.id, (l) => l.length >= 1);
    assert.deepEqual(
      first.map((n) => [n.type, n.answered]),
      [['payment.succeeded', 410]],
    );
    const eventId = first[0]!.event_id!;

    const handle = client.workflow.getHandle(notificationDispatcherId(stack.notifiedMerchant));
    const recordOf = async () => (await handle.query(notificationsQuery)).find((r) => r.event_id === eventId);
    await eventually(async () => assert.equal((await recordOf())?.status, 'stopped'), {
      timeoutMs: 10_000,
      intervalMs: 100,
      what: 'the event marked stopped',
    });
    const merchant = ['--merchant', stack.notifiedMerchant];
    const listed = await ops(['notifications', 'list', ...merchant, '--status', 'stopped', '--json']);
    assert.equal(listed.code, 0, listed.stderr);
    const stopped = (JSON.parse(listed.stdout) as DeliveryRecord[]).filter((d) => d.event_id === eventId);
    assert.deepEqual(
      stopped.map((d) => [d.status, d.attempts]),
      [['stopped', 1]],
    );
    assert.match(stopped[0]?.last_error ?? '', /http_410/);

    const replay = await ops(['notifications', 'replay', eventId, ...merchant, '--by', 'ada.ops']);
    assert.equal(replay.code, 0, replay.stderr);
    // The 410 was not retried: the replay's is the only other attempt.
    const list = await receivedUntil(payment.id, (l) => l.length >= 2);
    assert.deepEqual(
      list.map((n) => [n.event_id, n.answered]),
      [
        [eventId, 410],
        [eventId, 200],
      ],
    );
    assert.equal((await recordOf())?.replays, 1);
    const notifications = new Notifications(client, { signingKeys: parseKeyring(TEST_SIGNING_KEYS) });
    await assert.rejects(
      notifications.replay(eventId, { merchantId: stack.notifiedMerchant }),
      (err) => err instanceof AppError && err.kind === 'conflict' && /only failed or stopped/.test(err.message),
    );
  });

  it("tell a batch's progress a few times (not per item) and its completion; each item tells its own outcome", async () => {
    await setMode({ mode: 'ok' });
    const body = batchBody(`notified-${Date.now().toString(36)}`, 20);
    const created = await stack.api<BatchProgress>('POST', '/v1/payout-batches', body, NOTIFIED_MERCHANT_KEY);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    replayed.push(created.body.id);
    const list = await receivedUntil(created.body.id, (l) => delivered(l, 'batch.completed'));
    assert.deepEqual(
      list.map((n) => n.type),
      ['batch.progress', 'batch.completed'],
    );
    const [progress, completed] = list.map(
      (n) => (n.event as NotificationEvent).data.object as unknown as BatchProgress,
    );
    assert.equal(progress!.items.in_flight.count + progress!.items.not_started.count, 10);
    assert.equal(completed!.status, 'completed');
    assert.equal(completed!.items.succeeded.count, 20);
    const all = await stack.sandboxGet<ReceivedNotification[]>('/merchant/notifications');
    const items = all.filter((n) => subjectOf(n).startsWith(`${created.body.id.replace(/^batch-/, 'payment-')}~`));
    assert.equal(items.filter((n) => n.type === 'payment.succeeded' && n.answered === 200).length, 20);
  });

  it('drop an event handed to the dispatcher without a valid signature (a forged settlement)', async () => {
    const dispatcherId = notificationDispatcherId(stack.notifiedMerchant);
    const event: NotificationEvent = {
      id: 'evt_forged0123456789',
      type: 'payment.succeeded',
      created_at: new Date().toISOString(),
      merchant_id: stack.notifiedMerchant,
      // Forged: only what a forger needs to claim a success.
      data: { object: { id: 'payment-forged', status: 'succeeded' } as unknown as NotificationEvent['data']['object'] },
    };
    const order: NotificationOrder = {
      event,
      subject: 'payment-forged',
      retry: { initialMs: 200, maxIntervalMs: 1000, forMs: 5000, attemptTimeoutMs: 5000 },
    };
    const wrongKey = parseKeyring(`sign-1:${Buffer.alloc(32, 3).toString('base64')}`);
    const handle = client.workflow.getHandle(dispatcherId);
    await handle.signal(notificationSignal, signMessage(wrongKey, 'notification', dispatcherId, order));
    const rightKeyOtherWorkflow = signMessage(parseKeyring(TEST_SIGNING_KEYS), 'notification', 'elsewhere', order);
    await handle.signal(notificationSignal, rightKeyOtherWorkflow);
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(await received('payment-forged'), []);
    const description = await handle.describe();
    assert.equal(description.type, NOTIFICATION_DISPATCHER_WORKFLOW);
  });

  it('keep their queues and records when the dispatcher continues as new with deliveries in flight', async () => {
    const dispatcherId = notificationDispatcherId(stack.notifiedMerchant);
    await client.workflow.getHandle(dispatcherId).terminate('a dispatcher that continues as new sooner');
    const started = await client.workflow.start(NOTIFICATION_DISPATCHER_WORKFLOW, {
      workflowId: dispatcherId,
      taskQueue: stack.taskQueue,
      args: [{ merchantId: stack.notifiedMerchant, maxRunEvents: 15 }],
    });
    await setMode({ mode: 'fail', status: 503 });
    const payments: string[] = [];
    for (let i = 0; i < 3; i++) payments.push((await pay('mobile_money_debit', '00')).id);
    // Three events handed off and failing: the run passes 15 events and continues as new.
    const handle = client.workflow.getHandle(dispatcherId);
    await eventually(async () => assert.notEqual((await handle.describe()).runId, started.firstExecutionRunId), {
      timeoutMs: 20_000,
      what: 'the dispatcher continued as new',
    });
    await setMode({ mode: 'ok' });
    for (const id of payments) {
      const list = await receivedUntil(id, (l) => delivered(l, 'payment.succeeded'));
      assert.equal(new Set(list.map((n) => n.event_id)).size, 1, `payment ${id}: one event id across both runs`);
    }
    const records = await handle.query(notificationsQuery);
    assert.deepEqual(
      payments.map((id) => records.find((r) => r.subject === id)?.status),
      ['delivered', 'delivered', 'delivered'],
    );
  });

  it('leave histories (payment, batch, every dispatcher run) that replay on the workflow code', async () => {
    const dispatcherId = notificationDispatcherId(stack.notifiedMerchant);
    const runs: { workflowId: string; runId?: string }[] = replayed.map((workflowId) => ({ workflowId }));
    for await (const run of client.workflow.list({ query: `WorkflowId = '${dispatcherId}'` })) {
      runs.push({ workflowId: dispatcherId, runId: run.runId });
    }
    assert.ok(runs.length >= replayed.length + 3, 'the dispatcher ran at least three times');
    for (const { workflowId, runId } of runs) {
      const history = await ranItsCode(workflowId, runId);
      // As the worker reads them: signatures checked by its codec (the forged events arrive refused).
      await Worker.runReplayHistory(
        {
          workflowBundle: { codePath: WORKFLOW_BUNDLE },
          dataConverter: createDataConverter(parseKeyring(TEST_ENCRYPTION_KEYS), {
            verifySignatures: parseKeyring(TEST_SIGNING_KEYS),
          }),
        },
        history,
        workflowId,
      );
    }
  });
});
