import { status } from '@grpc/grpc-js';
import { isGrpcServiceError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { callbackSignal, SearchAttributes } from '../../src/workflows/definitions';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;
const FINAL = new Set(['succeeded', 'failed', 'needs_review']);

/** The PaymentStatus an event records (its upsert of the search attribute), if it records one. */
function recordedStatus(event: HistoryEvent): string | undefined {
  const field =
    event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.[
      SearchAttributes.status.name
    ];
  if (!field?.data) return undefined;
  const value: unknown = JSON.parse(Buffer.from(field.data).toString());
  return typeof value === 'string' ? value : undefined;
}

/** How long a payment of the bench may take to close before the bench reads it anyway (and finds what held it). */
const CLOSE_WAIT_MS = 120_000;

/**
 * Waits until the payment's workflow closes, as the twin's `result()` waits for the twin's: one long poll on its history
 * for the close event alone (no polling load on the worker). Following every new event instead cost Temporal, its
 * database and the bench a long poll per batch of events, up to four per payment against the twin's one (docs/performance.md).
 * A run still open after CLOSE_WAIT_MS (in review, say) is left for the caller's GET to show.
 */
export async function waitForClose(client: Client, workflowId: string): Promise<void> {
  const request = {
    namespace: client.options.namespace,
    execution: { workflowId },
    skipArchival: true,
    waitNewEvent: true,
    historyEventFilterType: temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT,
    nextPageToken: undefined as Uint8Array | undefined,
  };
  const deadline = Date.now() + CLOSE_WAIT_MS;
  while (Date.now() < deadline) {
    const response = await client
      .withDeadline(deadline, () => client.workflowService.getWorkflowExecutionHistory(request))
      .catch((err: unknown) => {
        if (!(isGrpcServiceError(err) && err.code === status.DEADLINE_EXCEEDED)) throw err;
      });
    if (!response || (response.history?.events?.length ?? 0) > 0) return;
    request.nextPageToken = response.nextPageToken ?? undefined;
  }
}

/** A signal → the event that ended its wait, split at the first workflow task a worker took after the signal. */
export interface SignalSpan {
  /** The signal event's time (ms since the epoch, the Temporal server's clock). */
  signalledAt: number;
  /** Signal event → the recording event. */
  totalMs: number;
  /** Signal event → a worker started the next workflow task: the wait for a worker (dispatch, a busy worker). */
  queueMs: number;
  /** That workflow task's start → the recording event: the worker's time, until the task completed. */
  workMs: number;
}

type HistoryEvents = temporal.api.history.v1.IHistoryEvent[];

function signalSpan(
  events: HistoryEvents,
  isSignal: (event: HistoryEvent) => boolean,
  isEnd: (event: HistoryEvent) => boolean,
): SignalSpan | undefined {
  let signalled: number | undefined;
  let started: number | undefined;
  for (const event of events) {
    const at = optionalTsToMs(event.eventTime);
    if (signalled === undefined && isSignal(event)) signalled = at;
    else if (signalled !== undefined && started === undefined) {
      if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) started = at;
    }
    if (isEnd(event)) {
      if (signalled === undefined || started === undefined || at === undefined) return undefined;
      return { signalledAt: signalled, totalMs: at - signalled, queueMs: started - signalled, workMs: at - started };
    }
  }
  return undefined;
}

/**
 * Callback → final status inside the workflow's own history: from the callback's signal event to the event that
 * recorded the final status (the upsert of PaymentStatus, written when the workflow task that handled the callback
 * completed). Undefined when the history holds no such pair.
 */
export async function callbackToFinal(client: Client, workflowId: string): Promise<SignalSpan | undefined> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return signalSpan(
    history.events ?? [],
    (event) => event.workflowExecutionSignaledEventAttributes?.signalName === callbackSignal.name,
    (event) => FINAL.has(recordedStatus(event) ?? ''),
  );
}

/** The twin's signal → its completion, from its history (the twin's counterpart of callback → final status). */
export async function signalToCompletion(client: Client, workflowId: string): Promise<SignalSpan | undefined> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return signalSpan(
    history.events ?? [],
    (event) => Boolean(event.workflowExecutionSignaledEventAttributes),
    (event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
  );
}

const TASK_EVENTS = new Set([
  EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
  EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
  EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
  EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
  EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
]);

/** A run's history once no workflow task is pending (as a replayer meets it); fails after 30 s of a pending task. */
export async function idleHistory(
  client: Client,
  workflowId: string,
  runId?: string,
): Promise<temporal.api.history.v1.IHistory> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const lastTask = (history.events ?? []).filter((e) => e.eventType && TASK_EVENTS.has(e.eventType)).at(-1);
    if (!lastTask || lastTask.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) return history;
    if (Date.now() > deadline) throw new Error(`${workflowId} kept a workflow task pending for 30 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * How many events a workflow's history holds once no workflow task is pending: a twin's to its completion, a
 * payment's to its late-callback timer (the window's close adds 5: timer fired, one workflow task, completed).
 */
export async function idleEventCount(client: Client, workflowId: string): Promise<number> {
  return (await idleHistory(client, workflowId)).events?.length ?? 0;
}
