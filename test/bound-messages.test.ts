import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createRecordActivities } from '../src/activities/record-activities';
import { parseKeyring } from '../src/crypto/keyring';
import { signMessage } from '../src/crypto/signing';
import type { BatchProgress } from '../src/domain/batch-model';
import type { PaymentResource } from '../src/domain/payment-model';
import { eventually } from '../src/local/eventually';
import { openDatabase } from '../src/records/database';
import { EncryptionCodec } from '../src/temporal/codec';
import { createDataConverter } from '../src/temporal/data-converter';
import { batchBody } from './support/batch-helpers';
import { paymentRequest, uniqueReference } from './support/request-builders';
import {
  OPERATOR_KEY,
  TEST_ENCRYPTION_KEYS,
  TEST_SIGNING_KEYS,
  startStack,
  testDatabaseUrl,
  testEnvironment,
} from './support/test-stack';
import type { Stack } from './support/test-stack';

// Attacks from outside the code on what a workflow acts on (docs/security.md, "Trust boundaries and their tests"):
// whoever reaches Temporal's frontend can answer activity tasks, signal and update; none of it settles or moves money.

type Event = temporal.api.history.v1.IHistoryEvent;
type Payloads = temporal.api.common.v1.IPayloads;
const { UpdateWorkflowExecutionLifecycleStage } = temporal.api.enums.v1;
const NAMESPACE = 'default';
const codec = new EncryptionCodec(parseKeyring(TEST_ENCRYPTION_KEYS));
let connection: Connection;

before(async () => {
  connection = await Connection.connect({ address: testEnvironment().address });
});
after(async () => connection?.close());

async function history(workflowId: string): Promise<Event[]> {
  const { history: found } = await connection.workflowService.getWorkflowExecutionHistory({
    namespace: NAMESPACE,
    execution: { workflowId },
  });
  return found?.events ?? [];
}

/** Encrypted with the real key, as `/codec/encode` makes it for an operator: encrypted is not signed. */
async function encrypted(value: unknown): Promise<Payloads> {
  return { payloads: await codec.encode([defaultPayloadConverter.toPayload(value)]) };
}

async function signal(workflowId: string, signalName: string, input: Payloads): Promise<void> {
  await connection.workflowService.signalWorkflowExecution({
    namespace: NAMESPACE,
    workflowExecution: { workflowId },
    signalName,
    input,
    identity: 'attacker',
  });
}

/** Sends an Update as a raw client; answers the failure message, or undefined when it was applied. */
async function update(workflowId: string, name: string, args: Payloads): Promise<string | undefined> {
  const { outcome } = await connection.workflowService.updateWorkflowExecution({
    namespace: NAMESPACE,
    workflowExecution: { workflowId },
    request: {
      meta: { updateId: `attacker-${Date.now()}-${Math.random()}`, identity: 'attacker' },
      input: { name, args },
    },
    waitPolicy: {
      lifecycleStage: UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED,
    },
  });
  const failure = outcome?.failure;
  if (!failure) return undefined;
  // The failure converter keeps the message in an encrypted payload.
  if (!failure.encodedAttributes) return failure.message ?? 'failed';
  const [plain] = await codec.decode([failure.encodedAttributes]);
  return defaultPayloadConverter.fromPayload<{ message: string }>(plain!).message;
}

async function paymentOf(stack: Stack, id: string): Promise<PaymentResource> {
  const response = await stack.api('GET', `/v1/payments/${id}`, undefined, OPERATOR_KEY);
  assert.equal(response.status, 200);
  return response.body;
}

async function batchOf(stack: Stack, id: string): Promise<BatchProgress> {
  const response = await stack.api<BatchProgress>('GET', `/v1/payout-batches/${id}`, undefined, OPERATOR_KEY);
  assert.equal(response.status, 200);
  return response.body;
}

describe('signed and bound messages', () => {
  let stack: Stack;
  before(async () => (stack = await startStack()));
  after(async () => stack?.close());

  it('a message signed with the real keys for another task queue or namespace is refused', async () => {
    const created = await stack.api('POST', '/v1/payments', paymentRequest('mobile_money_debit', '33'));
    const payment = await stack.waitForStatus(created.body.id, ['pending']);
    const keys = parseKeyring(TEST_SIGNING_KEYS);
    const success = {
      state: 'succeeded',
      transactionId: payment.provider.transaction_id,
      statusCode: '1',
      message: 'paid',
      amount: 12.5,
    };
    for (const scope of [
      { namespace: NAMESPACE, taskQueue: 'another-environment' },
      { namespace: 'staging', taskQueue: stack.taskQueue },
    ]) {
      const message = signMessage(keys, 'callback', payment.id, success, scope);
      await signal(payment.id, 'providerCallback', await encrypted(message));
    }
    const now = await eventually(
      async () => {
        const found = await paymentOf(stack, payment.id);
        assert.equal(found.events.filter((e) => e.type === 'callback_rejected').length, 2);
        return found;
      },
      { timeoutMs: 10_000, what: 'two refused callbacks' },
    );
    assert.equal(now.status, 'pending');
    assert.deepEqual(
      now.events.filter((e) => e.type === 'callback_rejected').map((e) => e.message),
      [
        'a callback refused: it was signed for task queue another-environment',
        'a callback refused: it was signed for namespace staging',
      ],
    );
  });

  it("a copied resume is refused after an operator's pause; forged item reports change no count", async () => {
    const created = await stack.api<BatchProgress>(
      'POST',
      '/v1/payout-batches',
      batchBody(uniqueReference('replay'), 30, ['33']),
    );
    assert.ok([200, 201, 202].includes(created.status), `POST answered ${created.status}`);
    const batchId = created.body.id;
    const control = async (action: string) => {
      const response = await stack.api<BatchProgress>(
        'POST',
        `/v1/payout-batches/${batchId}/${action}`,
        undefined,
        OPERATOR_KEY,
      );
      assert.equal(response.status, 200, `${action} answered ${response.status}`);
      return response.body;
    };
    await control('pause');
    await control('resume');
    assert.equal((await control('pause')).status, 'paused');

    // The resume as it stands in the batch's history, sent again by a raw client.
    const accepted = (await history(batchId))
      .map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input)
      .filter((input) => input?.name === 'batchControl');
    assert.equal(accepted.length, 3, 'pause, resume, pause');
    const refusal = await update(batchId, 'batchControl', accepted[1]!.args!);
    assert.match(refusal ?? '', /already received/);
    assert.equal((await batchOf(stack, batchId)).status, 'paused', 'still paused');

    // Forged reports of an item in flight: unsigned, and the batch's own control message passed off as one.
    const before = await batchOf(stack, batchId);
    assert.ok(before.items.in_flight.count > 0, 'items in flight');
    const inFlight = (await history(batchId)).find((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)
      ?.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
    assert.ok(inFlight);
    await signal(batchId, 'batchItemSettled', await encrypted({ paymentId: inFlight, status: 'succeeded' }));
    await signal(batchId, 'batchItemSettled', accepted[1]!.args!);
    await eventually(
      async () => {
        const signals = (await history(batchId)).filter((e) => e.workflowExecutionSignaledEventAttributes);
        assert.ok(signals.length >= 2);
      },
      { timeoutMs: 5000, what: 'the forged reports in the history' },
    );
    await new Promise((r) => setTimeout(r, 500));
    const after = await batchOf(stack, batchId);
    assert.equal(after.items.succeeded.count, 0, 'no item counted as succeeded');
    assert.equal(after.items.in_flight.count, before.items.in_flight.count, 'every item still in flight');
  });
});

type ActivityTask = temporal.api.workflowservice.v1.IPollActivityTaskQueueResponse;

/**
 * A payment on a task queue whose activity tasks only an attacker (a raw client) takes, answering each with `answer`;
 * resolves once the payment is in review, with the activity types the attacker answered.
 */
async function attackedPayment(
  taskQueue: string,
  answer: (task: ActivityTask) => Promise<void>,
  skip: (task: ActivityTask) => boolean = () => false,
): Promise<{ victim: PaymentResource; answered: string[]; upstream: number }> {
  // Workflows run by a worker with the record activities alone (its initiation, a local activity, fails as an unknown
  // outcome, so the payment reconciles) that takes no activity task: the attacker takes them.
  const stack = await startStack({ withoutWorker: true, taskQueue });
  const database = openDatabase(testDatabaseUrl());
  const signingKeys = parseKeyring(TEST_SIGNING_KEYS);
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address: testEnvironment().address }),
    namespace: NAMESPACE,
    taskQueue,
    workflowBundle: { codePath: testEnvironment().bundlePath },
    dataConverter: createDataConverter(parseKeyring(TEST_ENCRYPTION_KEYS), { verifySignatures: signingKeys }),
    activities: createRecordActivities(database, signingKeys),
    enableNonLocalActivities: false,
  });
  const running = worker.run();
  let stop = false;
  const answered: string[] = [];
  try {
    const creating = stack.api('POST', '/v1/payments', paymentRequest('mobile_money_debit', '00'));
    void (async () => {
      while (!stop) {
        // A long poll, as a worker's (the frontend wants a deadline on it).
        const task = await connection.withDeadline(Date.now() + 70_000, () =>
          connection.workflowService.pollActivityTaskQueue({
            namespace: NAMESPACE,
            taskQueue: { name: taskQueue },
            identity: 'attacker',
          }),
        );
        if (!task.taskToken?.length || skip(task)) continue;
        const type = task.activityType?.name ?? '';
        answered.push(type);
        await answer(task);
      }
      // The attacker's last long poll ends with the connection.
    })().catch((err: unknown) => answered.push(`error: ${String(err)}`));
    const victimId = (await creating).body.id;
    const victim = await eventually(
      async () => {
        const found = await paymentOf(stack, victimId);
        const types = (await history(victimId)).map((e) => e.eventType).join();
        assert.equal(found.status, 'needs_review', `${types} answered ${answered.join()}`);
        return found;
      },
      { timeoutMs: 30_000, intervalMs: 300, what: 'the victim in review' },
    );
    stop = true;
    return { victim, answered, upstream: (await stack.upstreamTransactions(victimId)).length };
  } finally {
    stop = true;
    worker.shutdown();
    await running;
    await database.end();
    await stack.close();
  }
}

/** A status answer that would settle anything, unsigned (encrypted with the real key). */
const forgedStatus = () =>
  encrypted({ state: 'succeeded', transactionId: 'anything', statusCode: '1', message: 'paid', amount: 12.5 });

describe('activity results bound to their activity', () => {
  it("no raw client can answer the initiation; another payment's genuine status answer, or a forged one, settles nothing", async () => {
    // The donor: a genuine payment left without a callback, whose reconciliation put a genuine (signed, encrypted)
    // status answer in its history.
    const first = await startStack();
    let donorStatus: Payloads | null | undefined;
    let donorId = '';
    try {
      const created = await first.api('POST', '/v1/payments', paymentRequest('mobile_money_debit', '33'));
      donorId = created.body.id;
      donorStatus = await eventually(
        async () => {
          const events = await history(donorId);
          const result = events.find((e) => e.activityTaskCompletedEventAttributes)
            ?.activityTaskCompletedEventAttributes?.result;
          assert.ok(result?.payloads?.length, `a status answer in ${JSON.stringify(events.map((e) => e.eventType))}`);
          return result;
        },
        { timeoutMs: 30_000, intervalMs: 300, what: "the donor's status answer" },
      );
    } finally {
      await first.close();
    }
    const status = await forgedStatus();
    let copies = 0;
    const { victim, answered, upstream } = await attackedPayment(
      first.taskQueue,
      async (task) => {
        // Every other answer is the donor's genuine one, the others forged.
        const copied = copies++ % 2 === 0;
        await connection.workflowService.respondActivityTaskCompleted({
          namespace: NAMESPACE,
          taskToken: task.taskToken,
          identity: 'attacker',
          result: copied ? donorStatus : status,
        });
      },
      (task) => task.workflowExecution?.workflowId === donorId,
    );
    // The initiation is a local activity: it runs inside the worker's workflow task, never as a task on the queue.
    assert.ok(!answered.includes('initiatePayment'), answered.join());
    assert.ok(answered.includes('checkPaymentStatus'), answered.join());
    assert.equal(victim.provider.transaction_id, null, "the donor's transaction was not taken");
    const checks = victim.events.filter((e) => e.type === 'status_checked').map((e) => e.message ?? '');
    assert.ok(
      checks.some((m) => new RegExp(`status-result was refused: it was signed for ${donorId}`).test(m)),
      checks.join(' | '),
    );
    assert.ok(
      checks.length > 0 && checks.every((m) => /was refused: it (was signed for|is not signed by a worker)/.test(m)),
      checks.join(' | '),
    );
    assert.ok(!victim.events.some((e) => e.type === 'succeeded' || e.type === 'failed'), 'never settled');
    assert.equal(upstream, 0, 'nothing reached the provider');
  });
});
