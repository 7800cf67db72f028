import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BatchProgress } from '../src/domain/batch-model';
import type { EventResource } from '../src/domain/notification-delivery';
import type { PaymentResource } from '../src/domain/payment-model';
import { eventually } from '../src/local/eventually';
import { batchBody, waitForBatch } from './support/batch-helpers';
import { ops } from './support/ops-cli-runner';
import { uniqueReference } from './support/request-builders';
import { OPERATOR_KEY, startStack } from './support/test-stack';
import type { Stack } from './support/test-stack';

interface ErrorBody {
  error: { code: string; message: string };
}

let stack: Stack;
before(async () => {
  stack = await startStack({
    env: {
      BATCH_CONCURRENCY: '3',
      BATCH_HALT_WINDOW: '6',
      BATCH_HALT_FAILURE_SHARE: '0.5',
      BATCH_HALT_PROVIDER_ERRORS: '3',
    },
  });
});
after(async () => {
  await stack?.close();
});

/** The batch's `batch.halted` events, as its merchant reads them. */
async function haltedEvents(batchId: string): Promise<EventResource[]> {
  const page = await stack.api<{ data: EventResource[] }>('GET', `/v1/events?batch=${batchId}&type=batch.halted`);
  assert.equal(page.status, 200);
  return page.body.data;
}

async function createBatch(body: ReturnType<typeof batchBody>): Promise<string> {
  const created = await stack.api<BatchProgress>('POST', '/v1/payout-batches', body);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.halt, null);
  return created.body.id;
}

describe('automatic halt', () => {
  it('pauses a batch whose items fail past the share, notifies batch.halted, and only an operator resumes it', async () => {
    // Scenario 11: the provider takes each item and then fails it, an item failure, quickly.
    const id = await createBatch(batchBody(uniqueReference('fail'), 30, ['11']));
    // An operator watches it from the start (not a terminal: a line per change), until it closes.
    const watching = ops(['batch', 'watch', id, '--interval', '200ms']);
    const halted = await waitForBatch(stack, id, (b) => b.status === 'paused', 30_000);
    assert.equal(halted.paused_by, 'system');
    assert.equal(halted.halt?.reason, 'failure_share');
    assert.match(halted.halt?.message ?? '', /of the latest 6 settled items failed \(more than 50 %\)/);
    assert.ok(halted.items.not_started.count > 0, 'it stopped before the end');
    assert.ok(
      (halted.pace?.items_per_second ?? 0) > 0,
      `its pace, from its items' records: ${JSON.stringify(halted.pace)}`,
    );

    const events = await eventually(
      async () => {
        const list = await haltedEvents(id);
        assert.equal(list.length, 1);
        return list;
      },
      { timeoutMs: 10_000, what: 'the batch.halted event' },
    );
    const told = events[0]?.data.object as BatchProgress;
    assert.equal(told.status, 'paused');
    assert.equal(told.halt?.reason, 'failure_share');

    // In flight at the halt, items still settle; nothing more starts.
    const drained = await waitForBatch(stack, id, (b) => b.items.in_flight.count === 0, 30_000);
    await new Promise((r) => setTimeout(r, 1000));
    const still = await stack.api<BatchProgress>('GET', `/v1/payout-batches/${id}`);
    assert.equal(still.body.items.not_started.count, drained.items.not_started.count, 'a halted batch starts nothing');

    const merchantResume = await stack.api<ErrorBody>('POST', `/v1/payout-batches/${id}/resume`);
    assert.equal(merchantResume.status, 409);
    assert.match(merchantResume.body.error.message, /paused by an operator \(system\).*only an operator can resume it/);
    assert.equal((await stack.api<BatchProgress>('GET', `/v1/payout-batches/${id}`)).body.status, 'paused');

    const resumed = await stack.api<BatchProgress>('POST', `/v1/payout-batches/${id}/resume`, undefined, OPERATOR_KEY);
    assert.equal(resumed.status, 200);
    assert.equal(resumed.body.status, 'running');
    assert.equal(resumed.body.paused_by, null);
    // The watch starts over: the batch runs until a fresh window of its items fails past the share again.
    const again = await waitForBatch(
      stack,
      id,
      (b) => b.status === 'paused' && b.items.not_started.count < drained.items.not_started.count,
      30_000,
    );
    assert.equal(again.paused_by, 'system');
    const cancelled = await stack.api<BatchProgress>(
      'POST',
      `/v1/payout-batches/${id}/cancel`,
      undefined,
      OPERATOR_KEY,
    );
    assert.equal(cancelled.status, 200);
    const closed = await waitForBatch(stack, id, (b) => b.status === 'cancelled', 30_000);
    assert.equal(closed.halt?.reason, 'failure_share', 'the latest halt stays on the record');

    const watched = await watching;
    assert.equal(watched.code, 0, watched.stderr);
    const lines = watched.stdout.split('\n');
    assert.ok(
      lines.some((l) =>
        /^\[[#.]{30}\] \d+\/30 .*\| in flight \d+ · succeeded 0 · failed \d+ · review 0 · not started \d+/.test(l),
      ),
      watched.stdout,
    );
    assert.ok(
      lines.some((l) => /paused {2}\| .*halted: \d+ of the latest 6 settled items failed/.test(l)),
      'a line says why it halted',
    );
    assert.ok(
      lines.some((l) => /[\d.]+\/s {2}~\d+s left/.test(l)),
      'a line with a pace and the time left',
    );
    assert.match(watched.stdout, /\] \d+\/30 .*cancelled/, 'the last line shows it closed');
    assert.match(watched.stdout, /^total +30 +\d+/m, 'then its summary');
  });

  it('halts on a provider outage (5xx from the sandbox) before the items in flight settle', async () => {
    // Scenario 44: the provider answers HTTP 500 to each initiation; the items wait, their outcome unknown.
    const body = batchBody(uniqueReference('outage'), 20, ['44']);
    const id = await createBatch(body);
    const halted = await waitForBatch(stack, id, (b) => b.status === 'paused', 30_000);
    assert.equal(halted.paused_by, 'system');
    assert.equal(halted.halt?.reason, 'provider_errors');
    assert.match(halted.halt?.message ?? '', /3 items in a row met a provider-wide error/);
    assert.equal(halted.items.not_started.count, 17, 'only the first three started');

    const first = `payment-acme-${body.reference}~${body.items[0]?.reference ?? ''}`;
    const payment = await stack.api<PaymentResource>('GET', `/v1/payments/${encodeURIComponent(first)}`);
    assert.equal(payment.status, 200);
    const unknown = payment.body.events.find((e) => e.type === 'initiation_unknown');
    assert.equal(unknown?.status_code, 'http_500', 'the initiation event names the provider-wide status');
    await eventually(async () => assert.equal((await haltedEvents(id)).length, 1), {
      timeoutMs: 10_000,
      what: 'the batch.halted event',
    });

    const held = await stack.api<BatchProgress>('POST', `/v1/payout-batches/${id}/cancel`, undefined, OPERATOR_KEY);
    assert.equal(held.status, 200);
    await waitForBatch(stack, id, (b) => b.status === 'cancelled', 60_000);
  });

  it('runs a batch with a few failures to the end', async () => {
    const id = await createBatch(batchBody(uniqueReference('mostly'), 12, ['00', '00', '00', '11']));
    const done = await waitForBatch(stack, id, (b) => b.status === 'completed', 60_000);
    assert.deepEqual([done.items.succeeded.count, done.items.failed.count], [9, 3]);
    assert.equal(done.halt, null);
    assert.equal(done.pace, undefined, 'a closed batch has no pace');
    assert.equal((await haltedEvents(id)).length, 0);
  });
});
