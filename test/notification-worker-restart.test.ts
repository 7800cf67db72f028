import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, it } from 'node:test';
import { eventually } from '../src/local/eventually';
import type { NotificationEvent } from '../src/domain/notification';
import type { ReceivedNotification, ReceiverMode } from '../src/sandbox/merchant-inbox';
import { startWorkerProcess } from '../src/local/worker-process';
import { paymentRequest } from './support/request-builders';
import { NOTIFIED_MERCHANT_KEY, startStack } from './support/test-stack';
import type { Stack } from './support/test-stack';
import { setReceiverMode } from './support/merchant-inbox-server';

let stack: Stack;
let worker: ChildProcess | undefined;
before(async () => {
  stack = await startStack({ withoutWorker: true });
});
after(async () => {
  worker?.kill('SIGKILL');
  await stack?.close();
});

const setMode = (mode: ReceiverMode) => setReceiverMode(stack, mode);

/** Creates `count` mobile-money payments for the notified merchant; answers their ids. */
async function notifiedPayments(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const body = paymentRequest('mobile_money_debit', '00');
    const response = await stack.api('POST', '/v1/payments', body, NOTIFIED_MERCHANT_KEY);
    assert.equal(response.status, 201);
    ids.push(response.body.id);
  }
  return ids;
}

async function inbox(): Promise<ReceivedNotification[]> {
  return stack.sandboxGet<ReceivedNotification[]>('/merchant/notifications');
}

const subjectOf = (n: ReceivedNotification) => String((n.event as NotificationEvent).data?.object?.id);

async function until(
  check: (list: ReceivedNotification[]) => boolean,
  timeoutMs: number,
): Promise<ReceivedNotification[]> {
  return eventually(
    async () => {
      const list = await inbox();
      assert.ok(check(list), `inbox: ${JSON.stringify(list.map((n) => [subjectOf(n), n.type, n.answered]))}`);
      return list;
    },
    { timeoutMs, what: `the merchant's inbox ${check.toString()}` },
  );
}

it('a worker killed mid-delivery loses no notification: each arrives once the worker is back, under its first id', async () => {
  worker = await startWorkerProcess(stack.workerEnv);
  // The merchant holds every notification past the sender's timeout: deliveries stay in flight.
  await setMode({ mode: 'timeout' });
  const before = await notifiedPayments(3);
  const held = await until((list) => before.every((id) => list.some((n) => subjectOf(n) === id)), 20_000);

  worker.kill('SIGKILL');
  await new Promise((r) => worker?.once('exit', r));
  // Payments made while no worker runs are notified too, once one does.
  const during = await notifiedPayments(2);
  await setMode({ mode: 'ok' });
  worker = await startWorkerProcess(stack.workerEnv);

  const all = [...before, ...during];
  const list = await until(
    (l) =>
      all.every((id) => l.some((n) => subjectOf(n) === id && n.type === 'payment.succeeded' && n.answered === 200)),
    40_000,
  );
  for (const id of before) {
    const heldId = held.find((n) => subjectOf(n) === id)?.event_id;
    const deliveredIds = new Set(list.filter((n) => subjectOf(n) === id && n.answered === 200).map((n) => n.event_id));
    assert.deepEqual([...deliveredIds], [heldId], `payment ${id}: the held event is the one delivered`);
  }
  assert.ok(list.every((n) => n.verified));
});
