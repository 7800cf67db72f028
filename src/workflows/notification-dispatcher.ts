import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  TemporalFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  metricMeter,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { NotificationActivities } from '../activities/notification-activities';
import { sdkCounterName, WorkerMetrics } from '../domain/metric-names';
import { DeliveryFailureTypes } from '../domain/notification-delivery';
import type { AttemptFailure, NotificationReplay } from '../domain/notification-delivery';
import { messageRefusal } from '../domain/signed';
import type { Signed } from '../domain/signed';
import { notificationSignal, notificationsQuery, replayNotificationUpdate } from './definitions';
import { DispatcherState } from './dispatcher-state';
import type { DeliveryEnd, DispatchEntry, DispatcherCarry } from './dispatcher-state';
import { workflowTime } from './time';

/** Deliveries in flight at once per merchant; the rest wait in their subject's queue. */
const CONCURRENCY = 20;
/** A run continues as new before its history grows past this (or when Temporal suggests it). */
const MAX_RUN_EVENTS = 4000;
const MIN_RUN_EVENTS = 200;

export interface DispatcherInput {
  /** For the Web UI only: each event is sent to the merchant it names (signed), whoever started this workflow. */
  merchantId: string;
  /** Only from the run this one continues (ignored in a run started from outside). */
  carry?: DispatcherCarry;
  /** Tests: continue as new sooner. */
  maxRunEvents?: number;
}

/**
 * Delivers one merchant's notifications: each subject's (payment's, batch's) events in order, different subjects in
 * parallel. Each delivery is one activity whose Temporal retry policy is the backoff (its retries add no history).
 * Acts only on events the worker signed for it. Runs for as long as the merchant has notifications, continuing as
 * new with what is not yet delivered.
 */
export async function notificationDispatcherWorkflow(input: DispatcherInput): Promise<void> {
  const info = workflowInfo();
  const self = info.workflowId;
  const state = new DispatcherState(info.continuedFromExecutionRunId ? input.carry : undefined);
  const maxRunEvents = Math.max(input.maxRunEvents ?? MAX_RUN_EVENTS, 10);

  setHandler(notificationSignal, (message) => {
    const refusal = messageRefusal(message, 'notification', self);
    if (refusal) {
      // A forged `payment.succeeded` would be a forged settlement to the merchant: it goes nowhere.
      ended('refused', 'unknown');
      log.warn('notification refused', { dispatcher: self, refusal });
      return;
    }
    state.enqueue(message.body, workflowTime());
  });
  setHandler(notificationsQuery, () => state.records());
  setHandler(
    replayNotificationUpdate,
    (message) => {
      const replay = message.body;
      const record = state.replay(replay.eventId);
      log.info('notification replayed', { eventId: replay.eventId, operator: replay.operator });
      return record!;
    },
    {
      validator: (message) => {
        const refusal =
          messageRefusal(message, 'notification-replay', self) ??
          state.replayRefusal((message as Signed<NotificationReplay>).body.eventId);
        if (refusal) throw ApplicationFailure.nonRetryable(refusal, 'NotReplayable');
      },
    },
  );

  const running = new Map<string, { scope: CancellationScope; done: Promise<void> }>();
  const runIsLong = () => {
    const now = workflowInfo();
    // A run that has barely started continues only at its bound: a large carry alone must not make it loop.
    return now.historyLength >= maxRunEvents || (now.continueAsNewSuggested && now.historyLength >= MIN_RUN_EVENTS);
  };
  for (;;) {
    await condition(() => state.canStart(CONCURRENCY) || runIsLong());
    if (runIsLong()) break;
    for (const entry of state.start(CONCURRENCY, workflowTime())) {
      const id = entry.record.event_id;
      const scope = new CancellationScope();
      const done = scope
        .run(() => deliver(entry))
        .then((end) => {
          const record = state.finish(id, end, workflowTime());
          if (record) ended(record.status, record.type);
        })
        .catch(() => state.interrupted(id))
        .finally(() => {
          running.delete(id);
          showState(state);
        });
      running.set(id, { scope, done });
    }
    showState(state);
  }
  // Deliveries in flight are cut off and start again in the next run (at least once: the merchant dedupes by id).
  for (const { scope } of running.values()) scope.cancel();
  await Promise.all([...running.values()].map((r) => r.done));
  await condition(allHandlersFinished);
  await continueAsNew<typeof notificationDispatcherWorkflow>({ ...input, carry: state.carry() });
}

/** One event's delivery, retried with the backoff of the worker that queued it until its window closes. */
async function deliver(entry: DispatchEntry): Promise<DeliveryEnd> {
  const { record, order } = entry;
  if (!order) return { status: 'failed', attempts: 0, error: 'the event is no longer kept' };
  const { retry } = order;
  const deadline = Date.parse(record.first_attempt_at ?? workflowTime().toISOString()) + retry.forMs;
  const { deliverNotification } = proxyActivities<NotificationActivities>({
    startToCloseTimeout: retry.attemptTimeoutMs,
    scheduleToCloseTimeout: Math.max(deadline - workflowTime().getTime(), retry.attemptTimeoutMs),
    retry: { initialInterval: retry.initialMs, backoffCoefficient: 2, maximumInterval: retry.maxIntervalMs },
    cancellationType: ActivityCancellationType.TRY_CANCEL,
  });
  try {
    const receipt = await deliverNotification.executeWithOptions(
      {
        activityId: `${record.event_id}/${record.replays}/${workflowInfo().runId.slice(0, 8)}`,
        summary: `${record.type} ${record.event_id} (${record.subject})`,
      },
      [{ merchantId: order.event.merchant_id, event: order.event }],
    );
    return { status: 'delivered', attempts: receipt.attempt };
  } catch (err) {
    if (CancellationScope.current().consideredCancelled) throw err;
    const last = lastAttempt(err);
    const stopped = last?.type === DeliveryFailureTypes.gone || last?.type === DeliveryFailureTypes.unconfigured;
    const error = last ? `${last.type}: ${last.message}` : err instanceof Error ? err.message : 'failed';
    return { status: stopped ? 'stopped' : 'failed', attempts: last?.attempt, error };
  }
}

/** The last attempt's failure in an activity failure's cause chain (a timeout wraps the last attempt's failure). */
function lastAttempt(err: unknown): { type: string; message: string; attempt: number | undefined } | undefined {
  for (let cause: unknown = err; cause instanceof TemporalFailure || cause instanceof Error;) {
    if (cause instanceof ApplicationFailure && cause.type) {
      const details = cause.details?.[0] as AttemptFailure | undefined;
      return { type: cause.type, message: cause.message, attempt: details?.attempt };
    }
    cause = (cause as Error).cause;
  }
  return undefined;
}

/** Counts how an event ended: delivered, failed, stopped, or refused (not signed for this dispatcher, never sent). */
function ended(outcome: string, type: string): void {
  metricMeter
    .createCounter(sdkCounterName(WorkerMetrics.notificationDeliveries), '', 'notifications by how they ended')
    .add(1, { outcome, type });
  if (outcome !== 'refused') log.info('notification delivery ended', { outcome, type });
}

function showState(state: DispatcherState): void {
  setCurrentDetails(`${state.open} notifications waiting or being sent`);
}
