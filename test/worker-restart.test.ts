import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, it } from 'node:test';
import type { PaymentResource } from '../src/domain/payment-model';
import { startStack } from './support/test-stack';
import type { Stack } from './support/test-stack';
import { paymentRequest } from './support/request-builders';
import { startWorkerProcess } from '../src/local/worker-process';

let stack: Stack;
let worker: ChildProcess | undefined;
before(async () => {
  // Slow callbacks, so that they arrive while the worker is down.
  stack = await startStack({ withoutWorker: true, sandbox: { callbackDelayMs: 4000 } });
});
after(async () => {
  worker?.kill('SIGKILL');
  await stack?.close();
});

it('killing the worker while payments wait for callbacks loses none of them', async () => {
  worker = await startWorkerProcess(stack.workerEnv);
  const requests = [
    paymentRequest('mobile_money_debit', '00'),
    paymentRequest('card_payment', '00'),
    paymentRequest('bank_credit', '00'),
    paymentRequest('mobile_money_debit', '22'),
    paymentRequest('bank_credit', '11'),
  ];
  const created: PaymentResource[] = [];
  for (const body of requests) {
    const response = await stack.api('POST', '/v1/payments', body);
    assert.equal(response.status, 201);
    created.push(response.body);
  }
  for (const payment of created) await stack.waitForStatus(payment.id, ['pending']);

  worker.kill('SIGKILL');
  await new Promise((r) => worker?.once('exit', r));
  // The callbacks land as signals while no worker runs.
  await new Promise((r) => setTimeout(r, 6000));

  worker = await startWorkerProcess(stack.workerEnv);
  const expected = ['succeeded', 'succeeded', 'succeeded', 'succeeded', 'failed'];
  const settled = await Promise.all(
    created.map((payment) => stack.waitForStatus(payment.id, ['succeeded', 'failed', 'needs_review'], 40_000)),
  );
  assert.deepEqual(
    settled.map((p) => p.status),
    expected,
  );
  for (const payment of created) {
    assert.equal(
      (await stack.upstreamTransactions(payment.id)).length,
      1,
      `exactly one upstream transaction for ${payment.id}`,
    );
  }
});
