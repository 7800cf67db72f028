import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { PaymentActivities, StatusCheckInput } from '../src/activities/payment-activities';
import { returnedPayment } from '../src/domain/batch-model';
import type { RecordActivities } from '../src/activities/record-activities';
import type { PaymentRecord } from '../src/records/record-writes';
import { FailureTypes } from '../src/domain/payment-model';
import type { PaymentInput, ProviderAck, StatusCheck } from '../src/domain/payment-model';
import { callbackSignal, paymentQuery, resolveUpdate } from '../src/workflows/definitions';
import { PAYMENT_WORKFLOW } from '../src/domain/ids';
import type { paymentWorkflow } from '../src/workflows';
import { registerSearchAttributes } from '../src/temporal/search-attributes';
import { storedRequest } from './support/request-builders';
import { installTestRuntime } from './support/test-runtime';
import { WORKFLOW_BUNDLE } from '../src/local/build-outputs';
import { parseKeyring } from '../src/crypto/keyring';
import { signMessage } from '../src/crypto/signing';
import type { SigningOptions } from '../src/crypto/signing';
import { signedResult } from '../src/activities/signed-results';
import type { ResultKind, Signed } from '../src/domain/signed';
import type { ProviderCallback } from '../src/domain/payment-model';

// Time-out → reconciliation → review → resolve, on the time-skipping test server: hours pass in no time.

const MINUTE = 60_000;
let env: TestWorkflowEnvironment;

before(async () => {
  const path = process.env.TEMPORAL_TEST_SERVER_PATH;
  assert.ok(path, 'run through `npm test`');
  await installTestRuntime();
  env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
  await registerSearchAttributes(env.connection, env.namespace ?? 'default');
});
after(() => env?.teardown());

// The worker's codec verifies signatures (tested with the real worker elsewhere); here the workflow's own checks run.
const KEYS = parseKeyring(`t1:${Buffer.alloc(32, 5).toString('base64')}`);

/** A start message signed at the test server's time (which the earlier tests have moved hours ahead). */
async function input(id: string) {
  const payment: PaymentInput = {
    paymentId: id,
    merchantId: 'acme',
    request: storedRequest('mobile_money_debit', '00', id),
    createdAt: new Date().toISOString(),
    timing: {
      callbackTimeoutMs: 5 * MINUTE,
      reconcileForMs: 60 * MINUTE,
      reconcileIntervalMs: 30_000,
    },
  };
  return signMessage(KEYS, 'payment', id, payment, { ...scope(), now: new Date(await env.currentTimeMs()) });
}

/** The task queue of the test's worker (withWorker), which the messages are signed for. */
let currentQueue = '';
// The test server's clock runs far ahead of the wall clock (decades, as time-skipping tests add up): messages signed
// now stay valid for a thousand years.
const scope = (): SigningOptions => ({
  namespace: 'default',
  taskQueue: currentQueue,
  ttlMs: 1000 * 365 * 24 * 60 * MINUTE,
});

/** A fake activity's result, signed as a worker signs it for the activity that asked (`resultId`: a local one). */
// Signed at the test server's time, which the workflow compares the expiry with.
const answer = async <T>(kind: ResultKind, body: T, resultId?: string) =>
  signedResult(KEYS, kind, body, resultId, new Date(await env.currentTimeMs()));

const callback = (id: string, fields: Partial<ProviderCallback>) =>
  signMessage(
    KEYS,
    'callback',
    id,
    {
      state: 'succeeded',
      transactionId: '42',
      statusCode: '1',
      message: 'paid',
      amount: 12.5,
      ...fields,
    } satisfies ProviderCallback,
    scope(),
  );
const resolution = (id: string, outcome: 'succeeded' | 'failed', note: string, operator?: string) =>
  signMessage(KEYS, 'resolution', id, { outcome, note, operator }, scope());

/** The status query's fakes: as an activity (reconciliation) and as a callback's confirmation, which records nothing. */
function statusQuery(
  ask: (q: StatusCheckInput) => Promise<Signed<StatusCheck | null>>,
): Pick<PaymentActivities, 'checkPaymentStatus' | 'confirmCallback'> {
  return {
    checkPaymentStatus: ask,
    confirmCallback: async (q) =>
      answer('confirmation-result', { check: (await ask(q)).body, recorded: false, report: null }, q.resultId),
  };
}

const ack: ProviderAck = { transactionId: '42', statusCode: '2', message: 'pending', redirectUrl: null };

async function withWorker<T>(
  activities: PaymentActivities & Partial<RecordActivities>,
  fn: (taskQueue: string) => Promise<T>,
): Promise<T> {
  const taskQueue = `ts-${Math.random().toString(36).slice(2)}`;
  currentQueue = taskQueue;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: WORKFLOW_BUNDLE },
    activities,
  });
  return worker.runUntil(fn(taskQueue));
}

describe('payment workflow (time-skipping)', () => {
  it('no callback: times out, reconciles for RECONCILE_FOR, goes to review, and an operator resolves it', async () => {
    const checks: StatusCheckInput[] = [];
    const activities: PaymentActivities = {
      initiatePayment: (_order, id) => answer('initiation-result', ack, id),
      ...statusQuery((q) => {
        checks.push(q);
        return answer<StatusCheck>(
          'status-result',
          {
            state: 'pending',
            transactionId: '42',
            statusCode: '2',
            message: 'pending',
          },
          q.resultId,
        );
      }),
    };
    await withWorker(activities, async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof paymentWorkflow>(PAYMENT_WORKFLOW, {
        taskQueue,
        workflowId: 'ts-review',
        args: [await input('ts-review')],
      });
      const early = await handle.query(paymentQuery);
      assert.ok(['initiating', 'pending'].includes(early.status));
      await assert.rejects(
        handle.executeUpdate(resolveUpdate, { args: [resolution('ts-review', 'succeeded', 'too early')] }),
        WorkflowUpdateFailedError,
      );
      // Sleeping 2 hours on the time-skipping server lets every timer of the workflow fire.
      await env.sleep(2 * 60 * MINUTE);
      const inReview = await handle.query(paymentQuery);
      assert.equal(inReview.status, 'needs_review');
      const events = inReview.events.map((e) => e.type);
      assert.ok(events.includes('timed_out'));
      assert.ok(checks.length >= 5, `backoff polled ${checks.length} times in an hour`);
      assert.ok(checks.length <= 20, `backoff polled ${checks.length} times: too often`);
      assert.equal(checks[0]?.transactionId, '42');
      const resolved = await handle.executeUpdate(resolveUpdate, {
        args: [resolution('ts-review', 'succeeded', 'seen on the provider portal', 'ops')],
      });
      assert.equal(resolved.status, 'succeeded');
      const result = returnedPayment(await handle.result());
      assert.equal(result.status, 'succeeded');
      assert.ok(result.events.some((e) => e.type === 'resolved' && e.message?.includes('ops')));
    });
  });

  it('a late genuine callback settles a payment in review', async () => {
    const activities: PaymentActivities = {
      initiatePayment: (_order, id) => answer('initiation-result', ack, id),
      ...statusQuery((q) => answer('status-result', null, q.resultId)),
    };
    await withWorker(activities, async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof paymentWorkflow>(PAYMENT_WORKFLOW, {
        taskQueue,
        workflowId: 'ts-late',
        args: [await input('ts-late')],
      });
      await env.sleep(2 * 60 * MINUTE);
      assert.equal((await handle.query(paymentQuery)).status, 'needs_review');
      await handle.signal(
        callbackSignal,
        callback('ts-late', { state: 'failed', statusCode: '0', message: 'expired' }),
      );
      const result = returnedPayment(await handle.result());
      assert.equal(result.status, 'failed');
      assert.equal(result.failure?.message, 'expired');
    });
  });

  it('an unknown outcome at initiation is not retried; reconciliation settles it', async () => {
    let initiations = 0;
    const activities: PaymentActivities = {
      initiatePayment: () => {
        initiations++;
        return Promise.reject(
          ApplicationFailure.create({ type: FailureTypes.unknown, message: 'socket reset', nonRetryable: true }),
        );
      },
      ...statusQuery((q) =>
        answer<StatusCheck>(
          'status-result',
          {
            state: 'succeeded',
            transactionId: '77',
            statusCode: '1',
            message: 'paid',
          },
          q.resultId,
        ),
      ),
    };
    await withWorker(activities, async (taskQueue) => {
      const result = returnedPayment(
        await env.client.workflow.execute<typeof paymentWorkflow>(PAYMENT_WORKFLOW, {
          taskQueue,
          workflowId: 'ts-unknown',
          args: [await input('ts-unknown')],
        }),
      );
      assert.equal(result.status, 'succeeded');
      assert.equal(initiations, 1);
      assert.equal(result.provider.transaction_id, '77');
    });
  });

  it('callbacks settle only what the provider acknowledged; doubtful ones wait for the status query', async () => {
    const checks: StatusCheckInput[] = [];
    let providerSays: StatusCheck['state'] = 'pending';
    const activities: PaymentActivities = {
      initiatePayment: (_order, id) => answer('initiation-result', ack, id),
      ...statusQuery((q) => {
        checks.push(q);
        return answer<StatusCheck>(
          'status-result',
          {
            state: providerSays,
            transactionId: '42',
            statusCode: null,
            message: null,
          },
          q.resultId,
        );
      }),
    };
    await withWorker(activities, async (taskQueue) => {
      const id = 'ts-confirm';
      const handle = await env.client.workflow.start<typeof paymentWorkflow>(PAYMENT_WORKFLOW, {
        taskQueue,
        workflowId: id,
        args: [await input(id)],
      });
      await env.sleep(1000);
      // Another transaction, another amount, another payment's signature, no signature at all: all refused.
      await handle.signal(callbackSignal, callback(id, { transactionId: '99' }));
      await handle.signal(callbackSignal, callback(id, { amount: 1000 }));
      await handle.signal(callbackSignal, callback('ts-other', {}));
      // An unsigned value, as a forger without the keys would send it.
      const unsigned = { state: 'succeeded', transactionId: '42', statusCode: '1', message: 'x', amount: 12.5 };
      await handle.signal(callbackSignal, unsigned as never);
      // A success without an amount is checked with the provider, which says it is still pending.
      await handle.signal(callbackSignal, callback(id, { amount: null }));
      await env.sleep(1000);
      const pending = await handle.query(paymentQuery);
      assert.equal(pending.status, 'pending');
      assert.equal(checks.length, 1, 'one status query confirmed the callback without an amount');
      assert.deepEqual(
        pending.events.filter((e) => e.type === 'callback_rejected').map((e) => e.message),
        [
          'transaction 99 is not the acknowledged 42; ignored',
          "amount 1000 does not match the payment's 12.5; ignored",
          'a callback refused: it was signed for ts-other, not ts-confirm',
          'a callback refused: it is not signed by the server',
          'the status query says pending; ignored',
        ],
      );
      // Once the provider agrees, the same kind of callback settles the payment.
      providerSays = 'succeeded';
      await handle.signal(callbackSignal, callback(id, { amount: null }));
      const result = returnedPayment(await handle.result());
      assert.equal(result.status, 'succeeded');
      assert.ok(result.events.some((e) => e.type === 'callback_confirmed'));
    });
  });

  it("a callback's confirmation records the settlement when the answer agrees: no record write after it", async () => {
    for (const providerSays of ['succeeded', 'failed'] as const) {
      const settlements: PaymentRecord[] = [];
      const writes: PaymentRecord[] = [];
      const activities: PaymentActivities & Pick<RecordActivities, 'recordPayment'> = {
        initiatePayment: (_order, id) => answer('initiation-result', ack, id),
        checkPaymentStatus: (q) => answer('status-result', null, q.resultId),
        confirmCallback: (q) => {
          if (q.settlement) settlements.push(q.settlement);
          const check: StatusCheck = { state: providerSays, transactionId: '42', statusCode: null, message: null };
          const recorded = providerSays === 'succeeded';
          return answer('confirmation-result', { check, recorded, report: null }, q.resultId);
        },
        recordPayment: (record) => {
          writes.push(record);
          return Promise.resolve(null);
        },
      };
      await withWorker(activities, async (taskQueue) => {
        const id = `ts-settles-${providerSays}`;
        const handle = await env.client.workflow.start<typeof paymentWorkflow>(PAYMENT_WORKFLOW, {
          taskQueue,
          workflowId: id,
          args: [await input(id)],
        });
        await env.sleep(1000);
        await handle.signal(callbackSignal, callback(id, {}));
        const result = returnedPayment(await handle.result());
        const [settlement] = settlements;
        assert.equal(settlements.length, 1, 'one confirmation, handed the settlement if it agrees');
        assert.equal(settlement?.resource.status, 'succeeded');
        const last = writes.at(-1);
        if (providerSays === 'succeeded') {
          assert.deepEqual(settlement?.resource, result, 'the settlement written is the payment as it ended');
          assert.ok(last && last.revision < settlement.revision, 'no record write after the confirmation');
        } else {
          assert.equal(result.status, 'failed', 'the status query settles by its own answer');
          assert.ok(last && settlement && last.revision > settlement.revision, 'written after the confirmation');
          assert.deepEqual(last.resource, result);
        }
      });
    }
  });

  it('a status answer about another transaction or another amount settles nothing', async () => {
    const answers: StatusCheck[] = [
      { state: 'succeeded', transactionId: '99', statusCode: '1', message: 'paid' },
      { state: 'succeeded', transactionId: '42', statusCode: '1', message: 'paid', amount: 1000 },
    ];
    let asked = 0;
    const activities: PaymentActivities = {
      initiatePayment: (_order, id) => answer('initiation-result', ack, id),
      ...statusQuery((q) => answer('status-result', answers[asked++ % answers.length] ?? null, q.resultId)),
    };
    await withWorker(activities, async (taskQueue) => {
      const id = 'ts-mismatch';
      const handle = await env.client.workflow.start<typeof paymentWorkflow>(PAYMENT_WORKFLOW, {
        taskQueue,
        workflowId: id,
        args: [await input(id)],
      });
      await env.sleep(2 * 60 * MINUTE);
      const now = await handle.query(paymentQuery);
      assert.equal(now.status, 'needs_review');
      assert.ok(!now.events.some((e) => e.type === 'succeeded'));
      const messages = now.events.filter((e) => e.type === 'status_checked').map((e) => e.message ?? '');
      assert.ok(messages.some((m) => m.endsWith('transaction 99 is not the acknowledged 42; ignored')));
      assert.ok(messages.some((m) => m.endsWith("amount 1000 does not match the payment's 12.5; ignored")));
      await handle.terminate('test done');
    });
  });

  it('a start message that is not signed for this workflow fails it before initiation', async () => {
    let initiations = 0;
    const activities: PaymentActivities = {
      initiatePayment: (_order, id) => {
        initiations++;
        return answer('initiation-result', ack, id);
      },
      ...statusQuery((q) => answer('status-result', null, q.resultId)),
    };
    await withWorker(activities, async (taskQueue) => {
      const copied = await input('ts-original');
      const starts = [
        ['ts-copied', copied, /signed for ts-original, not ts-copied/],
        ['ts-plain', copied.body, /not signed by the server/],
        ['ts-original', { ...copied, kind: 'batch-item' }, /which did not start it/],
      ] as const;
      for (const [workflowId, arg, reason] of starts) {
        const handle = await env.client.workflow.start(PAYMENT_WORKFLOW, { taskQueue, workflowId, args: [arg] });
        await assert.rejects(handle.result(), (err: Error) => {
          const cause = (err as { cause?: ApplicationFailure }).cause;
          assert.equal(cause?.type, FailureTypes.untrusted);
          assert.match(cause?.message ?? '', reason);
          return true;
        });
      }
      assert.equal(initiations, 0, 'nothing initiated');
    });
  });
});
