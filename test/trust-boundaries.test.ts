import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { request } from 'undici';
import { eventually } from '../src/local/eventually';
import { SearchAttributes } from '../src/workflows/definitions';
import { PAYMENT_WORKFLOW } from '../src/domain/ids';
import { defaultPayloadConverter } from '@temporalio/common';
import { parseKeyring } from '../src/crypto/keyring';
import { signMessage } from '../src/crypto/signing';
import type { PaymentInput, PaymentResource } from '../src/domain/payment-model';
import type { Signed } from '../src/domain/signed';
import { EncryptionCodec } from '../src/temporal/codec';
import { temporalBinary } from '../src/local/binaries';
import { paymentRequest } from './support/request-builders';
import {
  OPERATOR_KEY,
  startStack,
  TEST_ENCRYPTION_KEYS,
  TEST_SIGNING_KEYS,
  testEnvironment,
} from './support/test-stack';
import type { Stack } from './support/test-stack';

// Attacks from outside the code: whoever reaches Temporal (the `temporal` CLI, a raw client) or a callback URL
// must not settle a payment or move money. Each attack is checked against the sandbox's ledger.

type Event = temporal.api.history.v1.IHistoryEvent;
const { WorkflowExecutionStatus } = temporal.api.enums.v1;
let stack: Stack;
let raw: Client;
let connection: Connection;

before(async () => {
  stack = await startStack();
  connection = await Connection.connect({ address: testEnvironment().address });
  // No codec: this client sends and reads exactly what an attacker with network access to Temporal would.
  raw = new Client({ connection });
});
after(async () => {
  await connection?.close();
  await stack?.close();
});

async function history(workflowId: string): Promise<Event[]> {
  return (await raw.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
}

/** Whether the workflow runs, and its PaymentStatus search attribute, read without any codec. */
async function inspect(workflowId: string): Promise<{ running: boolean; status: unknown }> {
  const { workflowExecutionInfo: info } = await connection.workflowService.describeWorkflowExecution({
    namespace: 'default',
    execution: { workflowId },
  });
  const status = info?.searchAttributes?.indexedFields?.[SearchAttributes.status.name]?.data;
  return {
    running: info?.status === WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING,
    status: status ? JSON.parse(Buffer.from(status).toString()) : undefined,
  };
}

async function ledgerSize(): Promise<number> {
  return (await stack.sandboxGet<unknown[]>('/sandbox/transactions')).length;
}

/** Waits until the history has an event matching the check; the events so far. */
async function untilEvent(workflowId: string, check: (e: Event) => boolean, timeoutMs = 15_000): Promise<Event[]> {
  return eventually(
    async () => {
      const events = await history(workflowId);
      assert.ok(events.some(check), `no such event in ${workflowId}'s history`);
      return events;
    },
    { timeoutMs, intervalMs: 200, what: `an event ${check.toString()} in ${workflowId}'s history` },
  );
}

const temporalCli = (args: string[]) =>
  promisify(execFile)(temporalBinary('temporal'), [...args, '--address', testEnvironment().address]);

/** A payment that stays pending at the provider (scenario 33) and waits for its callback for an hour. */
async function waitingPayment(type: 'mobile_money_debit' | 'bank_credit' = 'mobile_money_debit') {
  const created = await stack.api('POST', '/v1/payments', paymentRequest(type, '33'));
  assert.equal(created.status, 201);
  return stack.waitForStatus(created.body.id, ['pending']);
}

async function paymentNow(id: string): Promise<PaymentResource> {
  const response = await stack.api('GET', `/v1/payments/${id}`, undefined, OPERATOR_KEY);
  assert.equal(response.status, 200);
  return response.body;
}

/** The payment once it has recorded `count` rejected callbacks (or after 10 s, for the assertions to explain). */
async function afterRejections(id: string, count: number): Promise<PaymentResource> {
  const rejected = (payment: PaymentResource) => payment.events.filter((e) => e.type === 'callback_rejected');
  return eventually(
    async () => {
      const now = await paymentNow(id);
      assert.ok(rejected(now).length >= count);
      return now;
    },
    { timeoutMs: 10_000, intervalMs: 200, what: `${count} rejected callbacks of ${id}` },
  ).catch(() => paymentNow(id));
}

describe('trust boundaries', () => {
  it('a plain-JSON signal sent with the temporal CLI is refused by the codec and settles nothing', async () => {
    const payment = await waitingPayment();
    await temporalCli([
      'workflow',
      'signal',
      '--workflow-id',
      payment.id,
      '--name',
      'providerCallback',
      '--input',
      JSON.stringify({ state: 'succeeded', transactionId: null, statusCode: '1', message: 'forged', amount: null }),
    ]);
    const events = await untilEvent(payment.id, (e) => Boolean(e.workflowTaskFailedEventAttributes));
    // The task fails (its reason, encrypted like every failure message, is in the worker's log) and keeps failing.
    const signalled = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes);
    const failed = events.findIndex((e) => e.workflowTaskFailedEventAttributes);
    assert.ok(signalled >= 0 && failed > signalled, 'the task after the forged signal failed');
    assert.ok(!events.slice(signalled).some((e) => e.workflowTaskCompletedEventAttributes), 'and never completed');
    assert.equal((await inspect(payment.id)).status, 'pending', 'not settled');
  });

  it('a plain-JSON start of a bank credit to an attacker moves no money', async () => {
    const before = await ledgerSize();
    const workflowId = `payment-acme-forged-${Date.now()}`;
    const request = { ...paymentRequest('bank_credit', '00', 'forged'), account_number: '9999999900' };
    const input = { paymentId: workflowId, merchantId: 'acme', request, createdAt: new Date().toISOString() };
    await temporalCli([
      'workflow',
      'start',
      '--type',
      PAYMENT_WORKFLOW,
      '--task-queue',
      stack.taskQueue,
      '--workflow-id',
      workflowId,
      '--input',
      JSON.stringify(input),
    ]);
    const events = await untilEvent(workflowId, (e) => Boolean(e.workflowTaskFailedEventAttributes));
    assert.ok(!events.some((e) => e.activityTaskScheduledEventAttributes), 'no activity was scheduled');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await ledgerSize(), before, 'the sandbox ledger is unchanged');
    await raw.workflow.getHandle(workflowId).terminate('test cleanup');
  });

  it('a genuine start copied from another payment fails before initiation; nothing is sent', async () => {
    const original = await waitingPayment('bank_credit');
    const started = (await history(original.id))[0]?.workflowExecutionStartedEventAttributes;
    assert.ok(started?.input?.payloads?.length, 'the original start input');
    const before = await ledgerSize();
    const workflowId = `payment-acme-copy-${Date.now()}`;
    await connection.workflowService.startWorkflowExecution({
      namespace: 'default',
      workflowId,
      workflowType: { name: PAYMENT_WORKFLOW },
      taskQueue: { name: stack.taskQueue },
      input: started.input,
      requestId: workflowId,
    });
    const events = await untilEvent(workflowId, (e) => Boolean(e.workflowExecutionFailedEventAttributes));
    assert.ok(!events.some((e) => e.activityTaskScheduledEventAttributes), 'no activity was scheduled');
    const failed = events.find((e) => e.workflowExecutionFailedEventAttributes)?.workflowExecutionFailedEventAttributes;
    assert.equal(failed?.failure?.applicationFailureInfo?.type, 'UntrustedInput');
    assert.equal(await ledgerSize(), before, 'the sandbox ledger is unchanged');
  });

  it("another payment's genuine callback, copied into this one, is recorded as refused", async () => {
    const settled = await stack.api('POST', '/v1/payments', paymentRequest('mobile_money_debit', '00'));
    const done = await stack.waitForStatus(settled.body.id, ['succeeded']);
    const signal = (await history(done.id)).find((e) => e.workflowExecutionSignaledEventAttributes);
    const copied = signal?.workflowExecutionSignaledEventAttributes?.input;
    assert.ok(copied?.payloads?.length, 'a genuine success callback');
    const victim = await waitingPayment();
    await connection.workflowService.signalWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: victim.id },
      signalName: 'providerCallback',
      input: copied,
      identity: 'attacker',
    });
    const now = await afterRejections(victim.id, 1);
    assert.equal(now.status, 'pending');
    assert.match(
      now.events.find((e) => e.type === 'callback_rejected')?.message ?? '',
      new RegExp(`signed for ${done.id}, not ${victim.id}`),
    );
  });

  it('payloads encrypted with the real key but unsigned or tampered (as /codec/encode makes them) are refused', async () => {
    const codec = new EncryptionCodec(parseKeyring(TEST_ENCRYPTION_KEYS));
    const encrypt = async (value: unknown) => ({
      payloads: await codec.encode([defaultPayloadConverter.toPayload(value)]),
    });
    const victim = await waitingPayment();
    const forgedCallback = {
      state: 'succeeded',
      transactionId: victim.provider.transaction_id,
      statusCode: '1',
      message: 'x',
      amount: 12.5,
    };
    const signal = async (value: unknown) =>
      connection.workflowService.signalWorkflowExecution({
        namespace: 'default',
        workflowExecution: { workflowId: victim.id },
        signalName: 'providerCallback',
        input: await encrypt(value),
        identity: 'attacker',
      });
    await signal(forgedCallback);
    const genuine = signMessage(parseKeyring(TEST_SIGNING_KEYS), 'callback', victim.id, forgedCallback, {
      namespace: 'default',
      taskQueue: stack.taskQueue,
    });
    await signal({ ...genuine, body: { ...forgedCallback, message: 'tampered' }, signature: genuine.signature });
    const now = await afterRejections(victim.id, 2);
    assert.equal(now.status, 'pending');
    assert.deepEqual(
      now.events.filter((e) => e.type === 'callback_rejected').map((e) => e.message),
      [
        'a callback refused: it is not signed by the server',
        'a callback refused: its signature does not verify (bad signature)',
      ],
    );

    // A tampered start (another account on a genuinely signed bank credit) fails before initiation.
    const original = await waitingPayment('bank_credit');
    const started = (await history(original.id))[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    assert.ok(started);
    const [plain] = await codec.decode([started]);
    const message = defaultPayloadConverter.fromPayload<Signed<PaymentInput>>(plain!);
    const workflowId = `payment-acme-tampered-${Date.now()}`;
    const tampered = { ...message, workflowId, body: { ...message.body, paymentId: workflowId } };
    const before = await ledgerSize();
    await connection.workflowService.startWorkflowExecution({
      namespace: 'default',
      workflowId,
      workflowType: { name: PAYMENT_WORKFLOW },
      taskQueue: { name: stack.taskQueue },
      input: await encrypt(tampered),
      requestId: workflowId,
    });
    const events = await untilEvent(workflowId, (e) => Boolean(e.workflowExecutionFailedEventAttributes));
    assert.ok(!events.some((e) => e.activityTaskScheduledEventAttributes), 'no activity was scheduled');
    assert.equal(await ledgerSize(), before, 'the sandbox ledger is unchanged');
  });

  it('a callback through the genuine URL settles only with the acknowledged transaction and a confirmed amount', async () => {
    const payment = await waitingPayment();
    const callbackUrl = (await stack.upstreamTransactions(payment.id))[0]?.callback_url;
    assert.ok(callbackUrl);
    const send = async (query: string) => {
      const response = await request(`${callbackUrl}?${query}`, { method: 'POST' });
      await response.body.dump();
      return response.statusCode;
    };
    assert.equal(await send('status=1&message=paid&amount=12.5&transaction_id=999999'), 200);
    // Scenario 33 stays pending at the provider: the status query does not confirm a success without an amount.
    assert.equal(await send(`status=1&message=paid&transaction_id=${payment.provider.transaction_id}`), 200);
    const now = await afterRejections(payment.id, 2);
    assert.equal(now.status, 'pending');
    assert.deepEqual(
      now.events.filter((e) => e.type === 'callback_rejected').map((e) => e.message),
      [
        `transaction 999999 is not the acknowledged ${payment.provider.transaction_id}; ignored`,
        'the status query says pending; ignored',
      ],
    );
  });

  it('a callback after its payment closed is recorded on the record for LATE_CALLBACK_WINDOW, then its URL expires', async () => {
    const created = await stack.api('POST', '/v1/payments', paymentRequest('mobile_money_debit', '11'));
    const payment = await stack.waitForStatus(created.body.id, ['failed']);
    const callbackUrl = (await stack.upstreamTransactions(payment.id))[0]?.callback_url;
    assert.ok(callbackUrl);
    // The workflow closes as soon as the payment has its outcome: no timer, no cached workflow for late callbacks.
    await eventually(async () => assert.equal((await inspect(payment.id)).running, false), {
      timeoutMs: 20_000,
      what: 'the workflow closed with its outcome',
    });
    const lateSuccess = () =>
      request(`${callbackUrl}?status=1&amount=12.5&transaction_id=${payment.provider.transaction_id}`, {
        method: 'POST',
      });
    const late = await lateSuccess();
    assert.equal(late.statusCode, 200, await late.body.text());
    const recorded = await stack.api<PaymentResource>('GET', `/v1/payments/${payment.id}`);
    assert.equal(recorded.body.status, 'failed', 'the first outcome stands');
    const types = recorded.body.events.map((e) => e.type);
    assert.ok(types.includes('callback_contradicting'), types.join());
    assert.ok(
      recorded.body.events.some(
        (e) => e.type === 'notification_queued' && /^payment\.late_callback /.test(e.message ?? ''),
      ),
      'the merchant hears of it',
    );
    // The test stack's window is 5 s after the workflow closed.
    await new Promise((resolve) => setTimeout(resolve, 5_500));
    const expired = await lateSuccess();
    assert.equal(expired.statusCode, 410);
    assert.equal(((await expired.body.json()) as { error: { code: string } }).error.code, 'callback_expired');
  });
});
