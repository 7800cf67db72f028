import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@temporalio/client';
import type { BatchProgress } from '../src/domain/batch-model';
import type { PaymentResource } from '../src/domain/payment-model';
import { waitUntil } from '../src/local/wait-until';
import { freePort } from '../src/local/free-port';
import { startRedisServer } from '../src/local/redis-server';
import { createClient } from 'redis';
import { batchItemPaymentId } from '../src/domain/ids';
import { batchBody, waitForBatch } from './support/batch-helpers';
import { ops, opsJsonUntil } from './support/ops-cli-runner';
import { scrape, total } from './support/prometheus';
import { paymentRequest, uniqueReference } from './support/request-builders';
import { OPERATOR_KEY, startStack, connectTestClient } from './support/test-stack';
import type { Stack } from './support/test-stack';

// What an operator can do to a workflow in the Web UI or with `temporal workflow …`, tried on waiting payments and
// batches: Request Cancellation loses nothing, Terminate leaves a payment in review (never `pending`), and a Reset
// never sends a payment twice.

let temporal: Client;
const stacks: Stack[] = [];
before(async () => {
  // The operator's view: the same client the CLI uses (it decodes the encrypted memo and payloads).
  temporal = await connectTestClient();
});
after(async () => {
  for (const stack of stacks) await stack.close();
  await temporal?.connection.close();
});

/** The events of a workflow's history, as Temporal stores them. */
async function historyEvents(workflowId: string) {
  const { history } = await temporal.workflowService.getWorkflowExecutionHistory({
    namespace: 'default',
    execution: { workflowId },
  });
  return history?.events ?? [];
}

/** The event types of a history, for failure messages. */
async function eventTypes(workflowId: string): Promise<string> {
  return (await historyEvents(workflowId)).map((e) => e.eventType).join(', ');
}

/** How the workflow closed (`COMPLETED`, …), once it has: its last steps may run after its status turned. */
async function closedStatus(workflowId: string): Promise<string> {
  return waitUntil(
    async () => {
      const { name } = (await temporal.workflow.getHandle(workflowId).describe()).status;
      return name === 'RUNNING' ? undefined : name;
    },
    {
      timeoutMs: 20_000,
      timedOut: async () => new Error(`${workflowId} still running after 20 s: ${await eventTypes(workflowId)}`),
    },
  );
}

async function stackWith(options: Parameters<typeof startStack>[0]): Promise<Stack> {
  const stack = await startStack(options);
  stacks.push(stack);
  return stack;
}

/** Resets a payment's workflow to its first workflow task, and answers the payment once its new run has initiated. */
async function resetBeforeInitiation(stack: Stack, paymentId: string, reason: string): Promise<PaymentResource> {
  const firstTask = (await historyEvents(paymentId)).find((e) => e.workflowTaskCompletedEventAttributes);
  assert.ok(firstTask?.eventId);
  const { runId } = await temporal.workflow.getHandle(paymentId).describe();
  await temporal.workflowService.resetWorkflowExecution({
    namespace: 'default',
    workflowExecution: { workflowId: paymentId, runId },
    workflowTaskFinishEventId: firstTask.eventId,
    requestId: randomUUID(),
    reason,
  });
  return waitUntil(
    async () => {
      const shown = (await stack.api('GET', `/v1/payments/${paymentId}`)).body;
      return shown.events.some((e) => e.type === 'initiation_unknown') ? shown : undefined;
    },
    { timeoutMs: 20_000, timedOut: () => new Error('the reset run did not reach its initiation') },
  );
}

async function created(stack: Stack, body: unknown): Promise<PaymentResource> {
  const response = await stack.api('POST', '/v1/payments', body);
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body;
}

describe('a payment waiting for its callback', () => {
  let stack: Stack;
  before(async () => {
    stack = await stackWith({ sandbox: { callbackDelayMs: 3000 }, env: { CALLBACK_TIMEOUT_MOBILE_MONEY: '20s' } });
  });

  it('Request Cancellation: recorded, and the payment still settles by its callback; the workflow completes', async () => {
    const payment = await created(stack, paymentRequest('mobile_money_debit', '00'));
    await stack.waitForStatus(payment.id, ['pending']);
    await temporal.workflow.getHandle(payment.id).cancel();
    const settled = await stack.waitForStatus(payment.id, ['succeeded', 'failed', 'needs_review'], 30_000);
    assert.equal(settled.status, 'succeeded', JSON.stringify(settled.events));
    assert.ok(
      settled.events.some((e) => e.type === 'cancel_requested'),
      JSON.stringify(settled.events),
    );
    assert.equal(await closedStatus(payment.id), 'COMPLETED', 'not CANCELLED: the cancellation did not end it');
  });

  it('Terminate: the payment shows needs_review in the API, `ops stuck` and the review gauge', async () => {
    // Scenario 33: the provider never calls back.
    const payment = await created(stack, paymentRequest('mobile_money_debit', '33'));
    await stack.waitForStatus(payment.id, ['pending']);
    await temporal.workflow.getHandle(payment.id).terminate('tried by an operator');
    const shown = await stack.api('GET', `/v1/payments/${payment.id}`);
    assert.equal(shown.body.status, 'needs_review');
    assert.match(shown.body.events.at(-1)?.message ?? '', /terminated before the payment had an outcome/);

    const stuck = await opsJsonUntil<{ id: string; status: string }[]>(['stuck'], (rows) =>
      rows.some((row) => row.id === payment.id),
    );
    assert.equal(stuck.find((row) => row.id === payment.id)?.status, 'needs_review');
    // Visibility catches up with the termination within moments.
    await waitUntil(
      async () => {
        const listed = await stack.api<{ data: { id: string; status: string }[] }>(
          'GET',
          '/v1/payments?status=needs_review',
        );
        return listed.body.data.some((row) => row.id === payment.id && row.status === 'needs_review') || undefined;
      },
      { timeoutMs: 15_000, timedOut: () => new Error('not listed as needs_review') },
    );
    const pendingOnes = await stack.api<{ data: { id: string }[] }>('GET', '/v1/payments?status=pending');
    assert.ok(!pendingOnes.body.data.some((row) => row.id === payment.id), 'never listed as pending');
    const gauge = total(await scrape(stack.metricsUrl), 'payments_in_review');
    assert.ok(gauge >= 1, `the review gauge counts it (${gauge})`);
  });

  it('Reset to before the initiation: the new run does not send the payment again', async () => {
    const payment = await created(stack, paymentRequest('mobile_money_debit', '33'));
    await stack.waitForStatus(payment.id, ['pending']);
    const after = await resetBeforeInitiation(stack, payment.id, 'tried by an operator');
    assert.match(after.events.find((e) => e.type === 'initiation_unknown')?.message ?? '', /not sent again/);
    assert.equal((await stack.upstreamRequests(payment.id)).length, 1, 'one initiation request upstream');
  });
});

describe('a payment whose vault was flushed', () => {
  it('Reset to before the initiation after the vault (Redis) lost everything: nothing is sent twice', async () => {
    // A vault of its own: flushing the shared one would take other tests' card data.
    const redis = await startRedisServer(await freePort());
    try {
      const stack = await stackWith({ env: { VAULT_URL: redis.url } });
      const payment = await created(stack, paymentRequest('bank_credit', '00'));
      await stack.waitForStatus(payment.id, ['succeeded']);
      const vault = createClient({ url: redis.url });
      await vault.connect();
      await vault.flushAll();
      await vault.quit();
      const after = await resetBeforeInitiation(stack, payment.id, 'tried by an operator after a vault flush');
      assert.match(after.events.find((e) => e.type === 'initiation_unknown')?.message ?? '', /not sent again/);
      // Reconciliation finds the one transaction the provider has.
      const settled = await stack.waitForStatus(payment.id, ['succeeded', 'failed', 'needs_review'], 30_000);
      assert.equal(settled.status, 'succeeded');
      assert.equal((await stack.upstreamRequests(payment.id)).length, 1, 'one initiation request upstream');
    } finally {
      await redis.stop();
    }
  });
});

describe('a payment whose initiation no worker has started', () => {
  it('Request Cancellation fails it cleanly: nothing sent, failure `cancelled`', async () => {
    const idle = await stackWith({ withoutWorker: true, env: { INITIATION_WAIT: '2s' } });
    const payment = await created(idle, paymentRequest('bank_credit', '00'));
    assert.equal(payment.status, 'initiating');
    await temporal.workflow.getHandle(payment.id).cancel();
    // A worker on the same task queue now takes the workflow, cancellation and all.
    const working = await stackWith({ taskQueue: idle.taskQueue });
    const settled = await working.waitForStatus(payment.id, ['failed', 'succeeded', 'needs_review'], 30_000);
    assert.equal(settled.status, 'failed');
    assert.equal(settled.failure?.code, 'cancelled');
    assert.equal((await idle.upstreamRequests(payment.id)).length, 0, 'nothing reached the provider');
    assert.equal((await working.upstreamRequests(payment.id)).length, 0, 'nothing reached the provider');
  });

  it('Terminate before any workflow task: needs_review, shown from its start (nothing to query)', async () => {
    const idle = await stackWith({ withoutWorker: true, env: { INITIATION_WAIT: '2s' } });
    const payment = await created(idle, paymentRequest('card_payment', '00'));
    await temporal.workflow.getHandle(payment.id).terminate('tried by an operator');
    const shown = await idle.api('GET', `/v1/payments/${payment.id}`);
    assert.equal(shown.status, 200, JSON.stringify(shown.body));
    assert.equal(shown.body.status, 'needs_review');
    assert.deepEqual(
      [shown.body.reference, shown.body.amount, shown.body.created_at, shown.body.card?.last4],
      [payment.reference, payment.amount, payment.created_at, payment.card?.last4],
    );
    assert.match(shown.body.events.at(-1)?.message ?? '', /terminated before the payment had an outcome/);
    const run = await ops(['show', payment.id, '--json']);
    assert.equal(run.code, 0, run.stderr);
    const inspection = JSON.parse(run.stdout) as { payment: PaymentResource; workflow: { status: string } };
    assert.deepEqual([inspection.payment.status, inspection.workflow.status], ['needs_review', 'TERMINATED']);
  });
});

describe('a payout batch that no worker has started', () => {
  it('Terminate before any workflow task: the batch shows needs_review with its counts, from its start', async () => {
    const idle = await stackWith({ withoutWorker: true });
    const body = batchBody(uniqueReference('ops-idle-batch'), 3);
    const created = await idle.api<BatchProgress>('POST', '/v1/payout-batches', body);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await temporal.workflow.getHandle(created.body.id).terminate('tried by an operator');
    const shown = await idle.api<BatchProgress>('GET', `/v1/payout-batches/${created.body.id}`);
    assert.equal(shown.status, 200, JSON.stringify(shown.body));
    assert.equal(shown.body.status, 'needs_review');
    assert.deepEqual(shown.body.items.not_started, created.body.items.not_started);
    assert.equal(shown.body.items.not_started.count, 3);
  });
});

describe('a payout batch', () => {
  let stack: Stack;
  before(async () => {
    // Scenario 33 items wait an hour for their callback: only the batch's item check counts one terminated.
    const env = { BATCH_CONCURRENCY: '1', BATCH_ITEM_CHECK_INTERVAL: '1s', CALLBACK_TIMEOUT_BANK_CREDIT: '1h' };
    stack = await stackWith({ sandbox: { callbackDelayMs: 1500 }, env });
  });

  async function startedBatch(count: number, scenarios?: string[]): Promise<BatchProgress> {
    const body = batchBody(uniqueReference('ops-batch'), count, scenarios);
    const response = await stack.api<BatchProgress>('POST', '/v1/payout-batches', body);
    assert.equal(response.status, 201, JSON.stringify(response.body));
    return waitForBatch(stack, response.body.id, (b) => b.items.in_flight.count > 0);
  }

  it('Request Cancellation is the batch’s own cancel: started items finish, the rest never start', async () => {
    const batch = await startedBatch(6);
    await temporal.workflow.getHandle(batch.id).cancel();
    const done = await waitForBatch(stack, batch.id, (b) => b.status === 'cancelled', 60_000);
    const { succeeded, failed, needs_review, not_started, in_flight } = done.items;
    assert.equal(in_flight.count, 0);
    assert.ok(not_started.count >= 1, 'the items not yet started never start');
    assert.equal(succeeded.count + failed.count + needs_review.count + not_started.count, 6, 'the counts add up');
    // The status reads `cancelled` before the run returns: it still sends the batch's notification.
    assert.equal(await closedStatus(batch.id), 'COMPLETED');
  });

  it('Terminate: the batch shows needs_review, never running', async () => {
    const batch = await startedBatch(4);
    await temporal.workflow.getHandle(batch.id).terminate('tried by an operator');
    const shown = await stack.api<BatchProgress>('GET', `/v1/payout-batches/${batch.id}`, undefined, OPERATOR_KEY);
    assert.equal(shown.body.status, 'needs_review');
  });

  it('Terminate of an item: the batch counts it in review at its next item check, and completes', async () => {
    const batch = await startedBatch(2, ['33', '00']);
    const itemId = batchItemPaymentId('acme', batch.reference, 'item-00001');
    await waitUntil(
      () =>
        temporal.workflow
          .getHandle(itemId)
          .terminate('tried by an operator')
          .then(() => true),
      {
        timeoutMs: 10_000,
        timedOut: (err) => new Error(`could not terminate ${itemId}: ${String(err)}`),
      },
    );
    const done = await waitForBatch(stack, batch.id, (b) => b.status === 'completed', 60_000);
    const { succeeded, failed, needs_review, in_flight } = done.items;
    assert.deepEqual([succeeded.count, failed.count, needs_review.count, in_flight.count], [1, 0, 1, 0]);
    assert.deepEqual(done.needs_review, [itemId]);
    const item = await stack.api<PaymentResource>('GET', `/v1/payments/${itemId}`, undefined, OPERATOR_KEY);
    assert.equal(item.body.status, 'needs_review');
  });
});

describe('a payout batch that continues as new', () => {
  it('counts an item that never reports as soon as the next run starts, with no item check due', async () => {
    // The first run carries a terminated item on; only the continued run's first look can count it (the interval
    // is an hour). The rest succeed by callback, so the run grows past its 500 events within seconds.
    const env = {
      BATCH_CONCURRENCY: '20',
      BATCH_RUN_MAX_EVENTS: '500',
      BATCH_ITEM_CHECK_INTERVAL: '1h',
      CALLBACK_TIMEOUT_BANK_CREDIT: '1h',
      LATE_CALLBACK_WINDOW: '1s',
    };
    const stack = await stackWith({ env });
    const body = batchBody(uniqueReference('ops-continued'), 160, ['33', ...Array<string>(159).fill('00')]);
    const created = await stack.api<BatchProgress>('POST', '/v1/payout-batches', body);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id;
    await waitForBatch(stack, id, (b) => b.items.in_flight.count > 0);
    assert.equal((await stack.api('POST', `/v1/payout-batches/${id}/pause`)).status, 200);
    const itemId = batchItemPaymentId('acme', body.reference, 'item-00001');
    await waitUntil(
      () =>
        temporal.workflow
          .getHandle(itemId)
          .terminate('tried by an operator')
          .then(() => true),
      {
        timeoutMs: 10_000,
        timedOut: (err) => new Error(`could not terminate ${itemId}: ${String(err)}`),
      },
    );
    assert.equal((await stack.api('POST', `/v1/payout-batches/${id}/resume`)).status, 200);

    const done = await waitForBatch(stack, id, (b) => b.status === 'completed', 120_000);
    assert.deepEqual([done.items.succeeded.count, done.items.needs_review.count], [159, 1]);
    assert.deepEqual(done.needs_review, [itemId]);
    const runs: string[] = [];
    for await (const run of temporal.workflow.list({ query: `WorkflowId = "${id}"` })) runs.push(run.runId);
    assert.ok(runs.length > 1, `the batch continued as new (${runs.length} runs)`);
  });
});
