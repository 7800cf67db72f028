import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { PaymentResource } from '../src/domain/payment-model';
import { paymentRequest, uniqueReference } from './support/request-builders';
import { startStack, testEnvironment } from './support/test-stack';
import type { Stack } from './support/test-stack';

// POST /v1/payments starts the workflow and waits for its initiation step in one Update-with-Start: the history shows
// the start and the `initiation` update together, and no query is polled.

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

async function historyOf(paymentId: string): Promise<HistoryEvent[]> {
  const client = new Client({ connection: await Connection.connect({ address: testEnvironment().address }) });
  try {
    return (await client.workflow.getHandle(paymentId).fetchHistory()).events ?? [];
  } finally {
    await client.connection.close();
  }
}

const updatesNamed = (events: HistoryEvent[], name: string) =>
  events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === name);

describe('Update-with-Start for payment creation', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.close();
  });

  it('answers with the initiation step done, from an update sent with the start', async () => {
    const card = paymentRequest('card_payment', '00');
    const created = await stack.api('POST', '/v1/payments', card);
    assert.equal(created.status, 201);
    assert.equal(created.body.status, 'pending', 'the answer comes after the initiation step');
    assert.ok(created.body.next_action, 'with the 3-D Secure redirect');

    const events = await historyOf(created.body.id);
    assert.equal(events.filter((e) => e.workflowExecutionStartedEventAttributes).length, 1);
    const accepted = updatesNamed(events, 'initiation');
    assert.equal(accepted.length, 1, 'one initiation update, sent with the start');
    const completed = events.filter((e) => e.workflowExecutionUpdateCompletedEventAttributes);
    assert.equal(completed.length, 1, 'and answered');
  });

  it('the same body again is the same payment (200); another body with the reference is a 409', async () => {
    const body = paymentRequest('mobile_money_debit', '00', uniqueReference('uws'));
    const first = await stack.api('POST', '/v1/payments', body);
    const again = await stack.api('POST', '/v1/payments', body);
    assert.equal(first.status, 201);
    assert.equal(again.status, 200);
    assert.equal(again.body.id, first.body.id);
    assert.notEqual(again.body.status, 'initiating', 'the repeat also waits for the initiation step');
    const other = await stack.api<{ error: { code: string } }>('POST', '/v1/payments', { ...body, amount: 99 });
    assert.equal(other.status, 409);
    assert.equal(other.body.error.code, 'conflict');
    const events = await historyOf(first.body.id);
    assert.equal(events.filter((e) => e.workflowExecutionStartedEventAttributes).length, 1, 'started once');
  });
});

describe('Update-with-Start when the initiation step is not over in INITIATION_WAIT', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ withoutWorker: true, env: { INITIATION_WAIT: '400ms' } });
  });
  after(async () => {
    await stack?.close();
  });

  it('answers `initiating` after the wait, and the workflow is there; a repeat answers the same payment', async () => {
    const body = paymentRequest('bank_credit', '00');
    const started = Date.now();
    const created = await stack.api<PaymentResource>('POST', '/v1/payments', body);
    const elapsed = Date.now() - started;
    assert.equal(created.status, 201);
    assert.equal(created.body.status, 'initiating', 'no worker has taken the first step');
    assert.ok(elapsed >= 400, `answered after the wait (${elapsed} ms)`);
    const again = await stack.api<PaymentResource>('POST', '/v1/payments', body);
    assert.equal(again.status, 200);
    assert.equal(again.body.id, created.body.id);
    const events = await historyOf(created.body.id);
    assert.equal(events.filter((e) => e.workflowExecutionStartedEventAttributes).length, 1);
  });
});

describe('Update-with-Start when nothing could be started', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ withoutWorker: true, env: { TEMPORAL_NAMESPACE: 'no-such-namespace' } });
  });
  after(async () => {
    await stack?.close();
  });

  it('answers 503 (retry with the same reference), not a payment that does not exist', async () => {
    const created = await stack.api<{ error: { code: string; message: string } }>(
      'POST',
      '/v1/payments',
      paymentRequest('mobile_money_debit', '00'),
    );
    assert.equal(created.status, 503, JSON.stringify(created.body));
    assert.equal(created.body.error.code, 'unavailable');
    // Not "it did not start": Temporal might still start it, and the retry is what tells.
    assert.match(created.body.error.message, /did not confirm the start; send the same request again/);
  });
});
