import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { PaymentActivities } from '../src/activities/payment-activities';
import { returnedPayment } from '../src/domain/batch-model';
import type { RecordActivities } from '../src/activities/record-activities';
import { signedResult } from '../src/activities/signed-results';
import { parseKeyring } from '../src/crypto/keyring';
import { signMessage } from '../src/crypto/signing';
import { PAYMENT_WORKFLOW } from '../src/domain/ids';
import type { PaymentInput, ProviderAck, ProviderCallback, StatusCheck } from '../src/domain/payment-model';
import { eventually } from '../src/local/eventually';
import { WORKFLOW_BUNDLE } from '../src/local/build-outputs';
import type { PaymentRecord } from '../src/records/record-writes';
import { callbackSignal, paymentQuery } from '../src/workflows/definitions';
import type { paymentWorkflow } from '../src/workflows';
import { storedRequest } from './support/request-builders';
import { testEnvironment } from './support/test-stack';
import { installTestRuntime } from './support/test-runtime';

// A callback's confirmation writes the record of the settlement the workflow worked out before it asked
// (PaymentStatusEffects.settlement). Here a second callback comes while that confirmation runs, as it can when the
// status query takes most of the task time-out and the task is completed as a heartbeat: the payment changed since it
// was forked, so the workflow applies the answer itself, writes after the activity's write, and tells the merchant of
// the outcome once (the settlement's event id).

const KEYS = parseKeyring(`c1:${Buffer.alloc(32, 7).toString('base64')}`);
const ack: ProviderAck = { transactionId: '42', statusCode: '2', message: 'pending', redirectUrl: null };
let client: Client;
let nativeConnection: NativeConnection;

before(async () => {
  await installTestRuntime();
  const { address } = testEnvironment();
  nativeConnection = await NativeConnection.connect({ address });
  client = new Client({ connection: await Connection.connect({ address }) });
});
after(async () => {
  await client?.connection.close();
  await nativeConnection?.close();
});

describe("a callback's confirmation and the settlement it records", () => {
  it('a callback during the confirmation: the workflow applies the answer, writes last, and notifies once', async () => {
    const taskQueue = `confirmation-${Date.now().toString(36)}`;
    const scope = { namespace: 'default', taskQueue };
    const paymentId = `payment-acme-${taskQueue}`;
    const settlements: PaymentRecord[] = [];
    const writes: PaymentRecord[] = [];
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const activities: PaymentActivities & Pick<RecordActivities, 'recordPayment'> = {
      initiatePayment: (_order, id) => Promise.resolve(signedResult(KEYS, 'initiation-result', ack, id)),
      checkPaymentStatus: (q) => Promise.resolve(signedResult(KEYS, 'status-result', null, q.resultId)),
      confirmCallback: async (q) => {
        if (q.settlement) {
          settlements.push(q.settlement);
          writes.push(q.settlement);
        }
        await released;
        const check: StatusCheck = { state: 'succeeded', transactionId: '42', statusCode: '1', message: 'paid' };
        const body = { check, recorded: q.settlement !== undefined, report: null };
        return signedResult(KEYS, 'confirmation-result', body, q.resultId);
      },
      recordPayment: (record) => {
        writes.push(record);
        return Promise.resolve(null);
      },
    };
    const worker = await Worker.create({
      connection: nativeConnection,
      taskQueue,
      workflowBundle: { codePath: WORKFLOW_BUNDLE },
      activities,
    });
    const callback = (fields: Partial<ProviderCallback>) =>
      signMessage(
        KEYS,
        'callback',
        paymentId,
        { state: 'succeeded', transactionId: '42', statusCode: '1', message: 'paid', amount: 12.5, ...fields },
        scope,
      );
    await worker.runUntil(async () => {
      const input: PaymentInput = {
        paymentId,
        merchantId: 'acme',
        request: storedRequest('mobile_money_debit', '00', paymentId),
        createdAt: new Date().toISOString(),
        timing: { callbackTimeoutMs: 60_000, reconcileForMs: 60_000, reconcileIntervalMs: 30_000 },
      };
      const handle = await client.workflow.start<typeof paymentWorkflow>(PAYMENT_WORKFLOW, {
        taskQueue,
        workflowId: paymentId,
        // The confirmation outlasts 80 % of it: the task is completed as a heartbeat, and the next brings the signal.
        workflowTaskTimeout: '2s',
        args: [signMessage(KEYS, 'payment', paymentId, input, scope)],
      });
      await eventually(async () => (await handle.query(paymentQuery)).status === 'pending', {
        timeoutMs: 10_000,
        what: 'the payment pending',
      });
      await handle.signal(callbackSignal, callback({}));
      await eventually(() => settlements.length === 1, { timeoutMs: 10_000, what: 'the confirmation asked' });
      await handle.signal(callbackSignal, callback({ state: 'failed', statusCode: '0', message: 'declined' }));
      await eventually(async () => (await handle.query(paymentQuery)).events.some((e) => e.outcome === 'failed'), {
        timeoutMs: 10_000,
        what: 'the second callback heard while the confirmation runs',
      });
      release();
      const result = returnedPayment(await handle.result());
      const [settlement] = settlements;
      assert.ok(settlement);
      assert.equal(result.status, 'succeeded', 'the confirmed callback settles');
      assert.ok(result.events.some((e) => e.type === 'callback_contradicting' && e.outcome === 'failed'));
      const last = writes.at(-1);
      assert.ok(last && last.revision > settlement.revision, 'written after the confirmation');
      assert.deepEqual(last.resource, result, 'the record ends as the payment');
      const told = settlement.events?.find((event) => event.type === 'payment.succeeded');
      const queued = result.events.filter(
        (e) => e.type === 'notification_queued' && e.message?.startsWith('payment.succeeded'),
      );
      assert.ok(told);
      assert.deepEqual(
        queued.map((e) => e.message),
        [`payment.succeeded ${told.id}`],
        'one payment.succeeded, under the id the settlement queued',
      );
    });
  });
});
