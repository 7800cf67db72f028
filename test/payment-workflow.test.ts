import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { PaymentActivities, StatusCheckInput } from '../src/activities/payment-activities';
import { FailureTypes } from '../src/domain/payment';
import type { PaymentInput, ProviderAck, StatusCheck } from '../src/domain/payment';
import { PAYMENT_WORKFLOW, callbackSignal, paymentQuery, resolveUpdate } from '../src/workflows/definitions';
import type { paymentWorkflow } from '../src/workflows';
import { registerSearchAttributes } from '../src/temporal/search-attributes';
import { storedRequest } from './support/requests';
import { installTestRuntime } from './support/runtime';
import { WORKFLOW_BUNDLE } from '../src/config';

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

function input(id: string): PaymentInput {
  return {
    paymentId: id,
    merchantId: 'acme',
    request: storedRequest('mobile_money_debit', '00', id),
    callbackUrl: 'http://localhost/cb',
    createdAt: new Date().toISOString(),
    timing: {
      callbackTimeoutMs: 5 * MINUTE,
      reconcileForMs: 60 * MINUTE,
      reconcileIntervalMs: 30_000,
      lateCallbackWindowMs: MINUTE,
    },
  };
}

const ack: ProviderAck = { transactionId: '42', statusCode: '2', message: 'pending', redirectUrl: null };

async function withWorker<T>(activities: PaymentActivities, fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = `ts-${Math.random().toString(36).slice(2)}`;
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
      initiatePayment: () => Promise.resolve(ack),
      checkPaymentStatus: (q) => {
        checks.push(q);
        return Promise.resolve<StatusCheck>({
          state: 'pending',
          transactionId: '42',
          statusCode: '2',
          message: 'pending',
        });
      },
    };
    await withWorker(activities, async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof paymentWorkflow>(PAYMENT_WORKFLOW, {
        taskQueue,
        workflowId: 'ts-review',
        args: [input('ts-review')],
      });
      const early = await handle.query(paymentQuery);
      assert.ok(['initiating', 'pending'].includes(early.status));
      await assert.rejects(
        handle.executeUpdate(resolveUpdate, { args: [{ outcome: 'succeeded', note: 'too early' }] }),
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
        args: [{ outcome: 'succeeded', note: 'seen on the provider portal', operator: 'ops' }],
      });
      assert.equal(resolved.status, 'succeeded');
      const result = await handle.result();
      assert.equal(result.status, 'succeeded');
      assert.ok(result.events.some((e) => e.type === 'resolved' && e.message?.includes('ops')));
    });
  });

  it('a late genuine callback settles a payment in review', async () => {
    const activities: PaymentActivities = {
      initiatePayment: () => Promise.resolve(ack),
      checkPaymentStatus: () => Promise.resolve(null),
    };
    await withWorker(activities, async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof paymentWorkflow>(PAYMENT_WORKFLOW, {
        taskQueue,
        workflowId: 'ts-late',
        args: [input('ts-late')],
      });
      await env.sleep(2 * 60 * MINUTE);
      assert.equal((await handle.query(paymentQuery)).status, 'needs_review');
      await handle.signal(callbackSignal, {
        state: 'failed',
        transactionId: '42',
        statusCode: '0',
        message: 'expired',
        amount: 12.5,
      });
      const result = await handle.result();
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
      checkPaymentStatus: () =>
        Promise.resolve<StatusCheck>({ state: 'succeeded', transactionId: '77', statusCode: '1', message: 'paid' }),
    };
    await withWorker(activities, async (taskQueue) => {
      const result = await env.client.workflow.execute<typeof paymentWorkflow>(PAYMENT_WORKFLOW, {
        taskQueue,
        workflowId: 'ts-unknown',
        args: [input('ts-unknown')],
      });
      assert.equal(result.status, 'succeeded');
      assert.equal(initiations, 1);
      assert.equal(result.provider.transaction_id, '77');
    });
  });
});
