import assert from 'node:assert/strict';
import { eventually } from '../src/local/eventually';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, it } from 'node:test';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Payload } from '@temporalio/common';
import type { BatchProgress, ItemSettled } from '../src/domain/batch-model';
import type { BatchCarry } from '../src/domain/batch-progress';
import { isSigned } from '../src/domain/signed';
import type { Signed } from '../src/domain/signed';
import type { PaymentResource } from '../src/domain/payment-model';
import { itemSettledSignal } from '../src/workflows/definitions';
import { batchBody, waitForBatch } from './support/batch-helpers';
import { uniqueReference } from './support/request-builders';
import { OPERATOR_KEY, startStack, connectTestClient } from './support/test-stack';
import type { SandboxRecord, Stack } from './support/test-stack';
import { startWorkerProcess } from '../src/local/worker-process';

const ITEMS = 400;
const SCENARIOS = ['00', '11', '22', '33', '88'] as const;
const MAX_RUN_EVENTS = 500;

let stack: Stack;
let client: Client;
let worker: ChildProcess | undefined;
before(async () => {
  stack = await startStack({
    withoutWorker: true,
    env: {
      BATCH_CONCURRENCY: '60',
      BATCH_RUN_MAX_EVENTS: String(MAX_RUN_EVENTS),
      // Eight pages: a restart and a kill each land mid-batch with pages still to read.
      BATCH_PAGE_SIZE: '50',
      BATCH_ITEM_CHECK_INTERVAL: '20s',
      LATE_CALLBACK_WINDOW: '1s',
      // Two in five of its items fail on purpose: the automatic halt would stop it (test/batch-halt.test.ts).
      BATCH_HALT_FAILURE_SHARE: '1',
    },
  });
  client = await connectTestClient();
});
after(async () => {
  worker?.kill('SIGKILL');
  await client?.connection.close();
  await stack?.close();
});

async function stopWorker(signal: NodeJS.Signals): Promise<void> {
  const stopping = worker;
  if (!stopping) return;
  const exited = new Promise((r) => stopping.once('exit', r));
  stopping.kill(signal);
  await exited;
  worker = undefined;
}

/** How many initiation requests the sandbox received per payment id. */
async function requestsPerPayment(): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const entry of await stack.sandboxGet<SandboxRecord[]>('/sandbox/requests')) {
    const match = /\/v1\/callbacks\/([^/]+)\//.exec(entry.body?.callback_url ?? '');
    if (!match?.[1]) continue;
    const id = decodeURIComponent(match[1]);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** The items whose payment is not final, with their events: what a batch that does not complete waits for. */
async function unsettledItems(body: ReturnType<typeof batchBody>): Promise<string> {
  const lines: string[] = [];
  const ids = body.items.map((item) => `payment-acme-${body.reference}~${item.reference}`);
  for (let i = 0; i < ids.length; i += 20) {
    await Promise.all(
      ids.slice(i, i + 20).map(async (itemId) => {
        const answer = await stack.api<PaymentResource>('GET', `/v1/payments/${itemId}`, undefined, OPERATOR_KEY);
        if (answer.status === 200 && ['succeeded', 'failed', 'needs_review'].includes(answer.body.status)) return;
        const events = answer.status === 200 ? answer.body.events.map((e) => `${e.at} ${e.type}`).join(', ') : '';
        lines.push(`${itemId}: ${answer.status} ${answer.body.status ?? ''} ${events}`);
      }),
    );
  }
  if (lines.length) return `items not final:\n${lines.join('\n')}`;
  return `every item is final: the batch lost reports\n${(await reportTrail(`batch-acme-${body.reference}`)).text}`;
}

/**
 * Each batch run's reports, accounted for: the items in flight it continued with must be those it started with, plus
 * those it started, less those that reported to it. A report a run received and did not carry is lost there.
 */
async function reportTrail(
  batchId: string,
): Promise<{ matched: number; byResult: number; lost: number; text: string; carriedNonces: number }> {
  const converter = client.options.loadedDataConverter;
  const decoded = async (payloads: Payload[] | null | undefined): Promise<unknown[]> => {
    let plain = payloads ?? [];
    for (const codec of [...converter.payloadCodecs].reverse()) plain = await codec.decode(plain);
    return plain.map((p) => converter.payloadConverter.fromPayload(p));
  };
  const lines: string[] = [];
  let lost = 0;
  let matched = 0;
  let byResult = 0;
  let carriedNonces = 0;
  const runs: string[] = [];
  for await (const run of client.workflow.list({ query: `WorkflowId = "${batchId}"` })) runs.push(run.runId);
  for (const runId of runs) {
    const events = (await client.workflow.getHandle(batchId, runId).fetchHistory()).events ?? [];
    const carried = async (payloads: Payload[] | null | undefined) =>
      ((await decoded(payloads))[1] as BatchCarry | undefined)?.inFlight ?? {};
    const inFlight = new Set(
      Object.keys(await carried(events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads)),
    );
    const reportedAt = new Map<string, number>();
    for (const [index, e] of events.entries()) {
      const child = e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
      if (child) inFlight.add(child);
      // Reports arrive signed, by signal or as an item's result: the report is the message's body.
      const signal = e.workflowExecutionSignaledEventAttributes;
      const payloads =
        signal?.signalName === itemSettledSignal.name
          ? signal.input?.payloads
          : e.childWorkflowExecutionCompletedEventAttributes?.result?.payloads;
      const [report] = await decoded(payloads);
      if (isSigned(report)) {
        const { paymentId } = (report as Signed<ItemSettled>).body;
        if (inFlight.delete(paymentId)) reportedAt.set(paymentId, index);
        if (!signal) byResult += 1;
      }
    }
    const last = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes;
    matched += reportedAt.size;
    const summary = `run ${runId}: ${events.length} events, ${reportedAt.size} reports`;
    if (!last) {
      lines.push(`${summary}, still running with ${inFlight.size} in flight by its events`);
      continue;
    }
    const nextNonces = ((await decoded(last.input?.payloads))[1] as { nonces?: Record<string, string> } | undefined)
      ?.nonces;
    carriedNonces = Math.max(carriedNonces, Object.keys(nextNonces ?? {}).length);
    const next = new Set(Object.keys(await carried(last.input?.payloads)));
    const dropped = [...next].filter((id) => reportedAt.has(id));
    lost += dropped.length;
    lines.push(`${summary}, reports it did not carry: ${dropped.length}`);
    for (const id of dropped) {
      const at = reportedAt.get(id)!;
      const around = events
        .slice(Math.max(0, at - 8))
        .map((e, k) => `${Math.max(0, at - 8) + k + 1} ${temporal.api.enums.v1.EventType[e.eventType ?? 0]}`);
      lines.push(`  ${id} reported at event ${at + 1}; from 8 events before to the end: ${around.join(', ')}`);
    }
  }
  return { matched, byResult, lost, text: lines.join('\n'), carriedNonces };
}

// Beside the other files (scripts/test.ts), on a loaded machine: about a minute alone, more when they are busy.
it(
  `a ${ITEMS}-item batch survives a crash and a restart, initiating every item exactly once`,
  { timeout: 600_000 },
  async () => {
    worker = await startWorkerProcess(stack.workerEnv);
    // Launched as every launcher does, with two malloc arenas: its memory stays flat through the batch.
    assert.match(readFileSync(`/proc/${worker.pid}/environ`, 'utf8'), /(^|\0)MALLOC_ARENA_MAX=2\0/);
    const body = batchBody(uniqueReference('scale'), ITEMS, SCENARIOS);
    const created = await stack.api<BatchProgress>('POST', '/v1/payout-batches', body);
    assert.equal(created.status, 201, JSON.stringify(created.body).slice(0, 500));
    const id = created.body.id;
    const done = (b: BatchProgress) => b.total.count - b.items.not_started.count - b.items.in_flight.count;

    // A graceful restart at full speed, as a deploy does.
    await waitForBatch(stack, id, (b) => done(b) >= 100, 180_000);
    await stopWorker('SIGTERM');
    worker = await startWorkerProcess(stack.workerEnv);

    // A crash: pause, let the initiations settle, and kill the worker while items wait for callbacks.
    await waitForBatch(stack, id, (b) => done(b) >= 220, 180_000);
    // As a client does with a 503 ("try again"): right after the restart, on a loaded machine, the batch's workflow
    // task may wait behind its items' longer than the server's 30 s for an Update.
    await eventually(
      async () => assert.equal((await stack.api('POST', `/v1/payout-batches/${id}/pause`)).status, 200),
      { timeoutMs: 90_000, intervalMs: 1000, what: 'the batch paused' },
    );
    // Until no started item is still initiating (its record says so once the provider's answer is in), and the
    // provider's request count is still: a kill mid-initiation would rightly make the next run reconcile instead.
    let sent = -1;
    for (let now = (await requestsPerPayment()).size; now !== sent; now = (await requestsPerPayment()).size) {
      sent = now;
      await eventually(
        async () => {
          const initiating = await stack.api<{ data: unknown[] }>(
            'GET',
            `/v1/payout-batches/${id}/items?status=initiating&limit=1`,
          );
          assert.deepEqual(initiating.body.data, []);
        },
        { timeoutMs: 60_000, intervalMs: 250, what: 'no item of the paused batch still initiating' },
      );
      await new Promise((r) => setTimeout(r, 1000));
    }
    await stopWorker('SIGKILL');
    await new Promise((r) => setTimeout(r, 2000));
    worker = await startWorkerProcess(stack.workerEnv);
    assert.equal((await stack.api('POST', `/v1/payout-batches/${id}/resume`)).status, 200);

    const batch = await waitForBatch(stack, id, (b) => b.status === 'completed', 300_000).catch(
      async (err: unknown) => {
        throw new Error(`${String(err).slice(0, 300)}\n${await unsettledItems(body)}`);
      },
    );
    const perScenario = ITEMS / SCENARIOS.length;
    assert.deepEqual(
      {
        succeeded: batch.items.succeeded.count,
        failed: batch.items.failed.count,
        needs_review: batch.items.needs_review.count,
      },
      { succeeded: 2 * perScenario, failed: 2 * perScenario, needs_review: perScenario },
      'default and 22 succeed, 11 and 88 fail, 33 goes to review',
    );
    assert.equal(batch.needs_review.length, perScenario);

    const requests = await requestsPerPayment();
    const itemIds = body.items.map((item) => `payment-acme-${body.reference}~${item.reference}`);
    const counts = itemIds.map((itemId) => requests.get(itemId) ?? 0);
    assert.deepEqual(
      counts.filter((n) => n !== 1),
      [],
      'every item was initiated upstream exactly once',
    );
    const ledger = await stack.sandboxGet<SandboxRecord[]>('/sandbox/transactions');
    const prefix = encodeURIComponent(`payment-acme-${body.reference}~`);
    const transactions = ledger.filter((t) => t.callback_url?.includes(prefix));
    assert.equal(transactions.length, ITEMS - perScenario, 'one transaction per item; scenario 88 creates none');
    assert.equal(new Set(transactions.map((t) => t.callback_url)).size, transactions.length, 'no duplicates');

    // Continue-as-new keeps every run short, whatever the batch size.
    const runs: string[] = [];
    for await (const run of client.workflow.list({ query: `WorkflowId = "${id}"` })) runs.push(run.runId);
    assert.ok(runs.length > 1, `the batch continued as new (${runs.length} runs)`);
    for (const runId of runs) {
      const history = await client.workflow.getHandle(id, runId).fetchHistory();
      const events = history.events?.length ?? 0;
      assert.ok(events < 2 * MAX_RUN_EVENTS, `run ${runId} has ${events} events`);
    }
    const items = await client.workflow.count(`BatchId = "${id}" AND WorkflowType = "paymentWorkflow"`);
    assert.equal(items.count, ITEMS, 'every item is findable by the batch search attribute');
    // A report that never arrived is the item check's to find (BATCH_ITEM_CHECK_INTERVAL); the output tells.
    const trail = await reportTrail(id);
    process.stdout.write(
      `# ${ITEMS} items, ${runs.length} batch runs; reports received for an item in flight ${trail.matched} (${trail.byResult} as its result), not carried by their run ${trail.lost} (the next run asks after them); at most ${trail.carriedNonces} nonces carried\n`,
    );
    if (trail.lost > 0) process.stdout.write(`# ${trail.text.split('\n').join('\n# ')}\n`);
    // Items return their outcome to the run that started them (patch batch-item-outcome-by-result).
    assert.ok(trail.byResult > 0, 'no item returned its outcome as its result');
    // An outcome report's nonce is not carried (the tally refuses a repeat): no run hands on one per item.
    assert.ok(trail.carriedNonces < 20, `a continued run carried ${trail.carriedNonces} nonces`);
  },
);
