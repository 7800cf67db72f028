import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@temporalio/client';
import { eventually } from '../src/local/eventually';
import { parseConfig } from '../src/config/config-loading';
import { cliSchema } from '../src/cli/ops-context';
import type { NotificationEvent } from '../src/domain/notification';
import type { DeliveryAttempt, DeliveryRecord, EventResource } from '../src/domain/notification-delivery';
import type { PaymentResource } from '../src/domain/payment-model';
import { parseKeyring } from '../src/crypto/keyring';
import type { ReceivedNotification, ReceiverMode } from '../src/sandbox/merchant-inbox';
import { Worker } from '@temporalio/worker';
import type { ReplayWorkerOptions } from '@temporalio/worker';
import { WORKFLOW_BUNDLE } from '../src/local/build-outputs';
import { connectClient } from '../src/temporal/temporal-client';
import { AppError } from '../src/payments/app-errors';
import { Notifications } from '../src/payments/notification-deliveries';
import { createDataConverter } from '../src/temporal/data-converter';
import { openDatabase } from '../src/records/database';
import type { Database } from '../src/records/database';
import type { BatchProgress } from '../src/domain/batch-model';
import { batchBody } from './support/batch-helpers';
import { ops } from './support/ops-cli-runner';
import { paymentRequest } from './support/request-builders';
import {
  MERCHANT_KEY,
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
let database: Database;
/** The CLI's `notifications` commands read the outbox in PostgreSQL. */
const withRecords = { DATABASE_URL: testEnvironment().databaseUrl };

interface EventPage {
  data: EventResource[];
  has_more: boolean;
}
type EventDetail = EventResource & { attempts: DeliveryAttempt[] };
/** Workflows whose histories the last test replays. */
const replayed: string[] = [];
before(async () => {
  stack = await startStack();
  database = openDatabase(testEnvironment().databaseUrl, { max: 2 });
  client = await connectClient(
    parseConfig(cliSchema, { TEMPORAL_ADDRESS: testEnvironment().address, ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS }),
  );
});
after(async () => {
  await client?.connection.close();
  await database?.end();
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
async function ranItsCode(workflowId: string) {
  const handle = client.workflow.getHandle(workflowId);
  return eventually(
    async () => {
      const history = await handle.fetchHistory();
      assert.ok(history.events?.some((e) => e.workflowTaskCompletedEventAttributes));
      return history;
    },
    { timeoutMs: 15_000, what: `${workflowId} running a workflow task` },
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
    // Signed as Standard Webhooks too (the sandbox verified that signature): webhook-id is the event id.
    assert.deepEqual(
      list.map((n) => n.webhook_id),
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

    const merchant = ['--merchant', stack.notifiedMerchant];
    const stopped = await eventually(
      async () => {
        const listed = await ops(['notifications', 'list', ...merchant, '--status', 'stopped', '--json'], withRecords);
        assert.equal(listed.code, 0, listed.stderr);
        const found = (JSON.parse(listed.stdout) as DeliveryRecord[]).filter((d) => d.event_id === eventId);
        assert.equal(found.length, 1, 'the event marked stopped');
        return found;
      },
      { timeoutMs: 10_000, intervalMs: 200, what: 'the event listed as stopped' },
    );
    assert.deepEqual(
      stopped.map((d) => [d.status, d.attempts]),
      [['stopped', 1]],
    );
    assert.equal(stopped[0]?.last_error, 'http_410');

    const replay = await ops(['notifications', 'replay', eventId, ...merchant, '--by', 'ada.ops'], withRecords);
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
    const shown = await eventually(
      async () => {
        const read = await stack.api<EventDetail>('GET', `/v1/events/${eventId}`, undefined, NOTIFIED_MERCHANT_KEY);
        assert.equal(read.body.delivery.status, 'delivered');
        return read.body;
      },
      { timeoutMs: 10_000, intervalMs: 200, what: 'the replayed event delivered' },
    );
    assert.equal(shown.delivery.replays, 1);
    const actions = await ops(['actions', '--subject', payment.id, '--json'], withRecords);
    assert.equal(actions.code, 0, actions.stderr);
    assert.deepEqual(
      (JSON.parse(actions.stdout) as { operator: string; action: string; detail: { event_id: string } }[]).map((x) => [
        x.operator,
        x.action,
        x.detail.event_id,
      ]),
      [['ada.ops', 'notification.replay', eventId]],
    );
    assert.deepEqual(
      shown.attempts.map((a) => [a.attempt, a.status_code, a.error]),
      [
        [1, 410, 'http_410'],
        [2, 200, null],
      ],
    );
    await assert.rejects(
      new Notifications(database).replay(eventId, { operator: 'ada.ops', merchantId: stack.notifiedMerchant }),
      (err) => err instanceof AppError && err.kind === 'conflict' && /only failed or stopped/.test(err.message),
    );
    await assert.rejects(
      new Notifications(database).replay(eventId, { operator: 'ada.ops', merchantId: 'someone-else' }),
      (err) => err instanceof AppError && err.kind === 'not_found',
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

  it('are listed for their merchant over GET /v1/events, newest first, filtered, each with its attempts', async () => {
    await setMode({ mode: 'fail', status: 503 });
    const failing = await pay('mobile_money_debit', '00');
    const waiting = await eventually(
      async () => {
        const page = await stack.api<EventPage>(
          'GET',
          `/v1/events?payment=${failing.id}&delivered=false`,
          undefined,
          NOTIFIED_MERCHANT_KEY,
        );
        assert.equal(page.status, 200, JSON.stringify(page.body));
        assert.ok((page.body.data[0]?.delivery.attempts ?? 0) >= 1, 'attempted at least once');
        // An attempt is counted as it starts and listed (GET /v1/events/{id}) once it has ended.
        assert.notEqual(page.body.data[0]?.delivery.status, 'delivering', 'its attempt has ended');
        return page.body;
      },
      { timeoutMs: 10_000, intervalMs: 200, what: 'an undelivered event listed with its attempts' },
    );
    assert.deepEqual(
      waiting.data.map((e) => [e.type, e.data.object.id, e.delivery.status === 'delivered']),
      [['payment.succeeded', failing.id, false]],
    );
    const detail = await stack.api<EventDetail>(
      'GET',
      `/v1/events/${waiting.data[0]!.id}`,
      undefined,
      NOTIFIED_MERCHANT_KEY,
    );
    assert.equal(detail.status, 200);
    assert.ok(detail.body.attempts.length >= 1);
    assert.ok(detail.body.attempts.every((a) => a.status_code === 503 && a.error === 'http_503'));
    await setMode({ mode: 'ok' });
    await receivedUntil(failing.id, (l) => delivered(l, 'payment.succeeded'));

    // Another payment's events come first (newest first); the cursor pages; a type filter narrows.
    const later = await pay('mobile_money_debit', '00');
    await receivedUntil(later.id, (l) => delivered(l, 'payment.succeeded'));
    const first = await stack.api<EventPage>('GET', '/v1/events?limit=1', undefined, NOTIFIED_MERCHANT_KEY);
    assert.equal(first.body.data[0]?.data.object.id, later.id);
    assert.equal(first.body.has_more, true);
    const next = await stack.api<EventPage>(
      'GET',
      `/v1/events?limit=1&starting_after=${first.body.data[0].id}`,
      undefined,
      NOTIFIED_MERCHANT_KEY,
    );
    assert.equal(next.body.data[0]?.data.object.id, failing.id);
    const succeeded = await stack.api<EventPage>(
      'GET',
      '/v1/events?type=payment.succeeded&limit=100',
      undefined,
      NOTIFIED_MERCHANT_KEY,
    );
    assert.ok(succeeded.body.data.every((e) => e.type === 'payment.succeeded'));

    // Another merchant sees none of them.
    const other = await stack.api<EventPage>('GET', `/v1/events?payment=${failing.id}`, undefined, MERCHANT_KEY);
    assert.deepEqual(other.body.data, []);
    const hidden = await stack.api('GET', `/v1/events/${waiting.data[0]!.id}`, undefined, MERCHANT_KEY);
    assert.equal(hidden.status, 404);
    const both = await stack.api('GET', `/v1/events?payment=${failing.id}&batch=batch-x`, undefined, MERCHANT_KEY);
    assert.equal(both.status, 400);
  });

  it('leave histories (payments, a batch) that replay on the workflow code', async () => {
    for (const workflowId of replayed) {
      const history = await ranItsCode(workflowId);
      // On the task queue it ran on: workflows refuse messages signed for another (see test/replay.test.ts).
      const options: ReplayWorkerOptions = Object.assign(
        {
          workflowBundle: { codePath: WORKFLOW_BUNDLE },
          dataConverter: createDataConverter(parseKeyring(TEST_ENCRYPTION_KEYS), {
            verifySignatures: parseKeyring(TEST_SIGNING_KEYS),
          }),
        },
        { taskQueue: stack.taskQueue },
      );
      await Worker.runReplayHistory(options, history, workflowId);
    }
  });
});
