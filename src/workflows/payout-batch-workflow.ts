import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ApplicationFailure,
  CancellationScope,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  setWorkflowOptions,
  sleep,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { BatchActivities } from '../activities/batch-activities';
import { itemResultRefusal } from '../domain/batch-model';
import type {
  BatchControl,
  BatchInput,
  BatchItem,
  BatchProgress,
  ItemSettled,
  PaymentResult,
} from '../domain/batch-model';
import { SeenNonces } from '../domain/signed';
import type { Signed } from '../domain/signed';
import { toMinorUnits } from '../domain/money';
import { PAYMENT_TASK_TIMEOUT, batchItemInput } from '../domain/payment-model';
import type { BatchCarry } from '../domain/batch-progress';
import { approvalAndStart, waitingDetails } from './batch-approval';
import { BatchState } from './batch-state';
import { BatchHaltGuard } from './batch-halt';
import {
  SearchAttributes,
  batchControlUpdate,
  batchProgressQuery,
  itemSettledSignal,
  paymentSearchAttributes,
} from './definitions';
import { paymentStaticDetails, paymentSummary } from '../domain/web-ui-text';
import { paymentWorkflow } from './payment-workflow';
import { workflowTime } from './time';
import { UNTRUSTED_RESULT, handlerRefusal, here, trustedBatchInput, trustedResult } from './trust';
import { isPatched } from './patches';
import { versioned } from './versioning';
import { Notifier } from './merchant-notifications';
import { batchRecords } from './record-writer';
import type { RecordWriter } from './record-writer';

// Reading a page of items or describing items only reads, so Temporal may retry it (PostgreSQL restarting, say).
const { loadBatchItems, itemOutcomes, notStartedReferences } = proxyActivities<BatchActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 20 },
});

/** A cancellation through Temporal (CLI, Web UI) comes from whoever may act on the namespace: an operator. */
const TEMPORAL_CANCEL: BatchControl = { action: 'cancel', operator: 'temporal' };

interface Page {
  index: number;
  items: BatchItem[];
}

/**
 * A payout batch: runs each item as its own payment workflow, at most `concurrency` at a time, and counts how they
 * end. Continues as new before its history grows long, carrying only counters and the items in flight.
 */
export async function payoutBatchWorkflow(message: Signed<BatchInput>, carry?: BatchCarry): Promise<BatchProgress> {
  const input = trustedBatchInput(message);
  const state = new BatchState(input, carry, workflowTime());
  // Reports and controls act once each, across continue-as-new: a copy sent again is refused by its nonce.
  const nonces = new SeenNonces(carry?.nonces);
  const records = batchRecords(input, carry?.recorded ?? 0);
  const notifier = new Notifier(input.merchantId, records);
  const halts = new BatchHaltGuard(input, state);
  let toldStep = progressStep(state.progress());
  setHandler(batchProgressQuery, () => state.progress());
  const counted = (report: ItemSettled) => {
    // Too many failures, or a run of provider-wide errors: the batch pauses itself until an operator acts.
    if (halts.reported(report, state.settled(report))) {
      publish(state, records);
      notifier.emit('batch.halted', state.progress());
    }
    showProgress(state);
    // Progress is told about ten times per batch (every 10 % of its items, at least 10 items apart), never per item.
    const progress = state.progress();
    const step = progressStep(progress);
    if (step > toldStep && itemsDone(progress) < progress.total.count) {
      toldStep = step;
      records.record(progress);
      notifier.emit('batch.progress', progress);
    }
  };
  // A report counts only signed by the worker that recorded the item's outcome, for this batch, once.
  setHandler(itemSettledSignal, (report) => {
    const refusal = handlerRefusal(report, 'batch-item-report', nonces);
    if (refusal) return log.warn('an item report was refused', { refusal });
    // The tally counts an item's outcome once whatever its nonce; only a report it cannot refuse again (a provider-wide
    // error on an item still in flight, which the halt watch counts) is remembered. Every nonce is kept an hour and
    // carried across continue-as-new: one per item made a 100,000-item batch's carried state outgrow a payload.
    if (report.body.status === 'in_flight' || !isPatched('batch-outcome-reports-by-tally')) {
      nonces.remember(report, workflowTime());
    }
    counted(report.body);
  });
  // An item started with `outcome: 'result'` returns its signed outcome: counted like its report would be.
  const resulted = (paymentId: string, result: PaymentResult) => {
    const refusal = itemResultRefusal(result, paymentId, here());
    if (refusal) return log.warn("an item's result was refused; the item check will ask after it", { refusal });
    counted((result as Signed<ItemSettled>).body);
  };
  setHandler(
    batchControlUpdate,
    async (control) => {
      // Two copies can pass the validator before either is handled: only the first acts.
      if (!nonces.refusal(control) && !state.refusal(control.body)) {
        nonces.remember(control, workflowTime());
        state.apply(control.body);
        halts.controlled(control.body);
      }
      publish(state, records);
      await records.written(records.latest);
      return state.progress();
    },
    {
      validator: (control) => {
        const refusal =
          handlerRefusal(control, 'batch-control', nonces) ?? state.refusal((control as Signed<BatchControl>).body);
        if (refusal) throw ApplicationFailure.nonRetryable(refusal, 'NotAllowed');
      },
    },
  );
  publish(state, records);
  void CancellationScope.nonCancellable(() => askAfterQuietItems(state, input.itemCheckMs, counted));

  // A cancellation in Temporal (CLI, Web UI) is the batch's own cancel: no new items, those started run to the end.
  void CancellationScope.current().cancelRequested.catch(() => {
    if (state.refusal(TEMPORAL_CANCEL)) return;
    state.apply(TEMPORAL_CANCEL);
    publish(state, records);
  });
  // A scheduled batch, or one that needs approvals, waits here first; rejected or expired, it ends here, nothing sent.
  const phase = { input, state, nonces, notifier, records, publish: () => publish(state, records), firstRun: !carry };
  return await CancellationScope.nonCancellable(() =>
    approvalAndStart(phase, () => runItems(message, { input, state, notifier, records, nonces, resulted })),
  );
}

/**
 * Asks Temporal after items in flight whose report may never arrive: at once in a continued run, then every interval
 * after those in flight at the last look and still. Their payments report themselves; this finds only a report that
 * was lost or an item whose workflow ended without one.
 */
async function askAfterQuietItems(
  state: BatchState,
  everyMs: number,
  counted: (report: ItemSettled) => void,
): Promise<void> {
  const askAfter = async (ids: string[]) => {
    try {
      const reports = await trustedResult('item-outcomes', (activityId) =>
        itemOutcomes.executeWithOptions({ summary: `ask after ${ids.length} quiet items`, activityId }, [ids]),
      );
      if (reports.length > 0) log.warn('items counted without their report', { items: reports });
      reports.forEach(counted);
    } catch {
      // Asked again at the next interval.
    }
  };
  // Reports that reach a run while its continue-as-new is refused for them can be missing from what it carries
  // (seen with the TypeScript SDK 1.24: the refused run's state is sent again as it was).
  if (workflowInfo().continuedFromExecutionRunId && state.inFlightIds.length > 0) {
    const carried = new Set(state.inFlightIds);
    const stillCarried = () => state.inFlightIds.filter((id) => carried.has(id));
    await askAfter(stillCarried());
    // An item that returns its outcome returns it to the run that started it, which has ended: asked after until counted.
    if (isPatched('batch-item-outcome-by-result')) void askAfterCarried(stillCarried, askAfter, everyMs);
  }
  let seen = new Set<string>();
  for (;;) {
    // No timer while nothing is in flight: a paused batch's history stays still.
    await condition(() => state.inFlightIds.length > 0);
    await sleep(everyMs, { summary: 'ask after items that have not reported' });
    const quiet = state.inFlightIds.filter((id) => seen.has(id));
    seen = new Set(state.inFlightIds);
    if (quiet.length > 0) await askAfter(quiet);
  }
}

/** How long a continued run waits before it first asks again after the items it carried; then twice as long each time. */
const CARRIED_ITEM_CHECK_MS = 1000;

/** Asks after the items a continued run carried in flight, waiting longer each time, until each is counted. */
async function askAfterCarried(
  carried: () => string[],
  askAfter: (ids: string[]) => Promise<void>,
  everyMs: number,
): Promise<void> {
  for (let wait = CARRIED_ITEM_CHECK_MS; carried().length > 0; wait = Math.min(2 * wait, everyMs)) {
    await sleep(wait, { summary: 'ask after items an earlier run started' });
    const ids = carried();
    if (ids.length > 0) await askAfter(ids);
  }
}

interface BatchRun {
  input: BatchInput;
  state: BatchState;
  notifier: Notifier;
  records: RecordWriter<BatchProgress>;
  nonces: SeenNonces;
  /** Counts an item's result, once checked. */
  resulted: (paymentId: string, result: PaymentResult) => void;
}

/** Starts the items as slots free up, continuing as new when the run grows long, and ends with the tally. */
async function runItems(message: Signed<BatchInput>, run: BatchRun): Promise<BatchProgress> {
  const { input, state, notifier, records, nonces } = run;
  let page: Page | undefined;
  while (!state.drained) {
    if (runIsLong(input)) {
      await condition(allHandlersFinished);
      await records.drained();
      const carried = { ...state.carry(), recorded: records.latest, nonces: nonces.entries() };
      return await continueAsNew<typeof payoutBatchWorkflow>(message, carried);
    }
    if (state.nextIndex < input.itemCount && state.status !== 'cancelling') {
      page = await pageHolding(input, state.nextIndex, page);
    }
    // Read the slots only now: a pause or cancel may have arrived while the page loaded.
    const free = state.freeSlots;
    if (free === 0 || !page) {
      // With the item check's timers, a batch that waits long grows its history: it continues as new here too.
      await condition(() => state.freeSlots > 0 || state.drained || runIsLong(input));
      continue;
    }
    const offset = state.nextIndex - page.index * input.pageSize;
    const items = page.items.slice(offset, offset + free);
    await Promise.all(items.map((item) => startItem(run, item)));
  }

  const notStarted = await referencesFrom(input, state.nextIndex);
  state.finish(workflowTime(), notStarted);
  publish(state, records);
  notifier.emit('batch.completed', state.progress());
  await condition(allHandlersFinished);
  await records.drained();
  return state.progress();
}

// Auto-upgrade: a batch runs for days and moves to each new build, so from 1.0 on its changes go behind a patch
// (src/workflows/patches.ts).
setWorkflowOptions(versioned('AUTO_UPGRADE'), payoutBatchWorkflow);

function runIsLong(input: BatchInput): boolean {
  const info = workflowInfo();
  return info.historyLength >= input.maxRunEvents || info.continueAsNewSuggested;
}

/** The page of items holding position `index`: the one in hand, or the next read from the records. */
async function pageHolding(input: BatchInput, index: number, current: Page | undefined): Promise<Page> {
  const pageIndex = Math.floor(index / input.pageSize);
  if (current?.index === pageIndex) return current;
  const items = await loadItems(input, pageIndex, `load items page ${pageIndex + 1}`);
  return { index: pageIndex, items };
}

/** How many never-started references a cancelled batch lists. */
const NOT_STARTED_LISTED = 1000;

/** How often the batch asks again for a page whose answer was not signed for it before it gives up. */
const UNTRUSTED_PAGE_TRIES = 5;

/** A page's items, as a worker read and signed them for this very activity: the batch pays nothing else. */
async function loadItems(input: BatchInput, pageIndex: number, summary: string): Promise<BatchItem[]> {
  const from = pageIndex * input.pageSize;
  for (let attempt = 1; ; attempt++) {
    try {
      const items = await trustedResult('batch-items', (activityId) =>
        loadBatchItems.executeWithOptions({ summary, activityId }, [input.batchId, from, input.pageSize]),
      );
      // Every page but the last is full: a short page means the records lack items this batch was started with.
      const expected = Math.min(input.pageSize, input.itemCount - from);
      if (items.length !== expected) {
        throw ApplicationFailure.nonRetryable(
          `items page ${pageIndex + 1} holds ${items.length} items, not ${expected}`,
          'BadBatch',
        );
      }
      return items;
    } catch (err) {
      if (!(err instanceof ApplicationFailure && err.type === UNTRUSTED_RESULT) || attempt >= UNTRUSTED_PAGE_TRIES) {
        throw err;
      }
      log.warn('an items page answer was refused; asking again', { page: pageIndex + 1, reason: err.message });
      await sleep(1000 * attempt, { summary: 'ask again for an items page' });
    }
  }
}

/** An item whose workflow failed or was terminated has no outcome to count: the item check finds it. */
function ignoreFailure(): void {}

async function startItem({ input, state, resulted }: BatchRun, item: BatchItem): Promise<void> {
  const { paymentId, request } = item.body;
  const payment = batchItemInput(item.body, workflowTime());
  state.started(paymentId, toMinorUnits(request.amount));
  const byResult = isPatched('batch-item-outcome-by-result');
  try {
    // The item goes as the server signed it; the payment checks that signature and that this batch started it.
    const child = await startChild(paymentWorkflow, {
      workflowId: paymentId,
      args: byResult ? [item, { outcome: 'result' }] : [item],
      // Payments outlive the run that started them: continue-as-new and a cancelled batch must leave them running.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      ...(isPatched('item-task-timeout') ? { workflowTaskTimeout: PAYMENT_TASK_TIMEOUT } : {}),
      staticSummary: paymentSummary(request),
      staticDetails: paymentStaticDetails(input.merchantId, request, payment.createdAt),
      typedSearchAttributes: paymentSearchAttributes(payment),
    });
    // Only this run hears the result: an item still in flight when the batch continues as new is asked after.
    if (byResult) void child.result().then((result) => resulted(paymentId, result), ignoreFailure);
  } catch (err) {
    // Already started means an earlier attempt got there: that payment reports to this batch like any other.
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    // Nothing was sent upstream, so the item has certainly not moved money.
    state.settled({ paymentId, status: 'failed' });
  }
}

/**
 * The references a cancel kept from starting, the first NOT_STARTED_LISTED of them (a 100,000-item batch's would
 * outgrow the history; `report.csv` lists every item).
 */
async function referencesFrom(input: BatchInput, index: number): Promise<string[]> {
  if (index >= input.itemCount) return [];
  return await notStartedReferences.executeWithOptions({ summary: 'list items never started' }, [
    input.batchId,
    index,
    NOT_STARTED_LISTED,
  ]);
}

/** A status change: recorded in PostgreSQL, shown in Temporal's visibility and the Web UI. */
function publish(state: BatchState, records: RecordWriter<BatchProgress>): void {
  records.record(state.progress());
  upsertSearchAttributes([{ key: SearchAttributes.batchStatus, value: state.status }]);
  showProgress(state);
}

function itemsDone({ total, items }: BatchProgress): number {
  return total.count - items.not_started.count - items.in_flight.count;
}

/** How many tenths of the batch's items are done, in steps of at least 10 items. */
function progressStep(progress: BatchProgress): number {
  return Math.floor(itemsDone(progress) / Math.max(10, Math.ceil(progress.total.count / 10)));
}

function showProgress(state: BatchState): void {
  const progress = state.progress();
  const { status, total, items } = progress;
  const done = itemsDone(progress);
  setCurrentDetails(
    `status: ${status} · ${done}/${total.count} items done · ${items.needs_review.count} in review${waitingDetails(progress)}`,
  );
}
