import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { after, before, it } from 'node:test';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { PaymentResource } from '../src/domain/payment-model';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../src/local/free-port';
import { inTransaction, openDatabase } from '../src/records/database';
import { paymentQuery } from '../src/workflows/definitions';
import { startWorkerProcess } from '../src/local/worker-process';
import { waitUntil } from '../src/local/wait-until';
import { paymentRequest } from './support/request-builders';
import { connectTestClient, startStack, testDatabaseUrl } from './support/test-stack';
import type { Stack } from './support/test-stack';

// A worker killed in the middle of an initiation: the payment leaves `initiating` within PAYMENT_TASK_TIMEOUT (its workflow task
// times out, and the next worker's try of the initiation finds it claimed and sends nothing), and what the provider never received fails on its own (`not_sent`) while what it did receive
// settles as the provider says, with one upstream transaction.

let stack: Stack;
let client: Client;
const workers: ChildProcess[] = [];
let blackHole: Server;
const held: Socket[] = [];
let requestsHeld = 0;
const { EventType } = temporal.api.enums.v1;

before(async () => {
  stack = await startStack({ withoutWorker: true });
  client = await connectTestClient();
  // Takes the request and never answers: the request never reaches the provider.
  blackHole = createServer((socket) => {
    held.push(socket);
    socket.once('data', () => requestsHeld++);
  });
  await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
});
after(async () => {
  for (const worker of workers) worker.kill('SIGKILL');
  for (const socket of held) socket.destroy();
  blackHole.close();
  await client?.connection.close();
  await stack?.close();
});

async function killed(worker: ChildProcess): Promise<number> {
  worker.kill('SIGKILL');
  await new Promise((resolve) => worker.once('exit', resolve));
  return Date.now();
}

function eventTime(payment: PaymentResource, type: string): number {
  const event = payment.events.find((e) => e.type === type);
  assert.ok(event, `${payment.id} has a ${type} event: ${JSON.stringify(payment.events)}`);
  return Date.parse(event.at);
}

/** When the payment recorded that its initiation's outcome is unknown. */
async function noticed(paymentId: string): Promise<number> {
  const payment = await waitUntil(
    async () => {
      const response = await stack.api<PaymentResource>('GET', `/v1/payments/${paymentId}`);
      return response.body.events.some((e) => e.type === 'initiation_unknown') ? response.body : undefined;
    },
    { timeoutMs: 30_000, timedOut: () => new Error(`${paymentId} never recorded initiation_unknown`) },
  );
  return eventTime(payment, 'initiation_unknown');
}

it('a worker killed mid-initiation is noticed in seconds; "never sent" fails by itself, "sent" settles', async () => {
  const address = blackHole.address();
  assert.ok(address && typeof address === 'object');
  const hole = `http://127.0.0.1:${address.port}`;
  const lost = await startWorkerProcess({ ...stack.workerEnv, PROVIDER_BASE_URL: hole, PROVIDER_TIMEOUT: '20s' });
  workers.push(lost);
  // A bank credit carries a reference the provider can be asked about (status by reference): it can say "never had it".
  const neverSent = await stack.api('POST', '/v1/payments', paymentRequest('bank_credit', '00'));
  assert.equal(neverSent.status, 201);
  await waitUntil(() => Promise.resolve(requestsHeld === 1 ? true : undefined), {
    timeoutMs: 35_000,
    timedOut: () => new Error('the initiation never reached the black hole'),
  });
  const firstKill = await killed(lost);

  // Scenario 55: the provider creates the transaction and calls back, but answers the initiation only after 8 s.
  const slow = await startWorkerProcess({
    ...stack.workerEnv,
    PROVIDER_TIMEOUT: '20s',
    WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
  });
  workers.push(slow);
  // Measured before the next kill: a workflow task handed to a worker as it dies waits out its 30 s time-out.
  const noticedFirst = (await noticed(neverSent.body.id)) - firstKill;
  const sent = await stack.api('POST', '/v1/payments', paymentRequest('mobile_money_debit', '55'));
  assert.equal(sent.status, 201);
  await waitUntil(async () => ((await stack.upstreamRequests(sent.body.id)).length === 1 ? true : undefined), {
    timeoutMs: 35_000,
    timedOut: () => new Error('the initiation never reached the sandbox'),
  });
  const secondKill = await killed(slow);

  // Its callback came meanwhile: the next worker records it first, and that write waits on a row lock here until 1 s
  // into the task that tries the initiation again (its claim is taken: it answers at once), so the initiation would
  // answer while the write is under way.
  const db = openDatabase(testDatabaseUrl(stack.workerEnv), { max: 1 });
  let locked: () => void = () => undefined;
  const lockTaken = new Promise<void>((resolve) => (locked = resolve));
  const holding = inTransaction(db, async (connection) => {
    await connection.query('SELECT 1 FROM payments WHERE id = $1 FOR UPDATE', [sent.body.id]);
    locked();
    await waitUntil(
      async () => {
        const { events } = await client.workflow.getHandle(sent.body.id).fetchHistory();
        const types = (events ?? []).map((e) => e.eventType);
        const timedOut = types.indexOf(EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT);
        return timedOut >= 0 && types.lastIndexOf(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) > timedOut
          ? true
          : undefined;
      },
      { timeoutMs: 45_000, timedOut: () => new Error('no worker tried the initiation again') },
    );
    await sleep(1000);
  });
  await lockTaken;
  workers.push(
    await startWorkerProcess({ ...stack.workerEnv, WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}` }),
  );
  await holding.finally(() => db.end());
  const [failed, succeeded] = await Promise.all([
    stack.waitForStatus(neverSent.body.id, ['failed', 'succeeded', 'needs_review'], 60_000),
    stack.waitForStatus(sent.body.id, ['failed', 'succeeded', 'needs_review'], 60_000),
  ]);

  const noticedAfter = [noticedFirst, eventTime(succeeded, 'initiation_unknown') - secondKill];
  process.stdout.write(
    `# crash noticed after ${noticedAfter.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(' and ')}\n`,
  );
  for (const ms of noticedAfter)
    assert.ok(ms < 35_000, `noticed ${ms} ms after the kill (workflow task time-out 30 s, PAYMENT_TASK_TIMEOUT)`);

  assert.equal(failed.status, 'failed', JSON.stringify(failed.events));
  assert.equal(failed.failure?.code, 'not_sent');
  assert.equal((await stack.upstreamTransactions(neverSent.body.id)).length, 0, 'the provider never had it');
  assert.ok(!failed.events.some((e) => e.type === 'needs_review'), 'no operator needed');

  assert.equal(succeeded.status, 'succeeded', JSON.stringify(succeeded.events));
  assert.equal((await stack.upstreamTransactions(sent.body.id)).length, 1, 'one upstream transaction');

  // Each record holds what a replay of its workflow does, to the millisecond (a closed workflow's query replays its
  // whole history). Side by side with the write, the "sent" one's initiation answered first, but a replay would
  // answer both at once, at the write's time: its `initiation_unknown` would be 1 s later there than in its record.
  for (const payment of [failed, succeeded]) {
    const replayed = await client.workflow.getHandle(payment.id).query(paymentQuery);
    assert.deepEqual(replayed.events, payment.events, `${payment.id}: replayed against recorded`);
  }
});
