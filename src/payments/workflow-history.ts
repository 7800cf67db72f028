import type { Client } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { callbackSignal } from '../workflows/definitions';
import { decodePayload } from '../temporal/data-converter';

/** One step of a workflow's Temporal history, in an operator's words. */
export interface HistoryStep {
  at: string;
  step: string;
}

const EventType = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The marker the SDK records for a local activity's result. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

const SIGNALS: Record<string, string> = { [callbackSignal.name]: 'provider callback received' };

const CLOSED: Partial<Record<temporal.api.enums.v1.EventType, string>> = {
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED]: 'workflow completed',
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED]: 'workflow failed',
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED]: 'workflow terminated',
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED]: 'workflow canceled',
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT]: 'workflow timed out',
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW]: 'workflow continued as new',
};

/**
 * The workflow's history as readable steps: activities, local activities and timers by their summaries, signals,
 * updates and the end.
 * Workflow-task bookkeeping is left out.
 */
export async function readableHistory(client: Client, workflowId: string): Promise<HistoryStep[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const labels = new Map<string, string>();
  const steps: HistoryStep[] = [];
  for (const event of history.events ?? []) {
    const summary = await decodePayload<string>(client.options.loadedDataConverter, event.userMetadata?.summary);
    const step = describe(event, summary, labels);
    const at = optionalTsToMs(event.eventTime);
    if (step) steps.push({ at: at === undefined ? '' : new Date(at).toISOString(), step });
  }
  return steps;
}

function describe(event: HistoryEvent, summary: string | undefined, labels: Map<string, string>): string | undefined {
  const label = (id: unknown) => labels.get(String(id)) ?? 'step';
  const failure = (message: string | null | undefined) => (message ? `: ${message}` : '');
  switch (event.eventType) {
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
      return 'workflow started';
    case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
      const name = summary ?? event.activityTaskScheduledEventAttributes?.activityType?.name ?? 'activity';
      labels.set(String(event.eventId), name);
      return `${name}: started`;
    }
    case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
      return `${label(event.activityTaskCompletedEventAttributes?.scheduledEventId)}: done`;
    case EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: {
      const attrs = event.activityTaskFailedEventAttributes;
      return `${label(attrs?.scheduledEventId)}: failed${failure(attrs?.failure?.message)}`;
    }
    case EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
      return `${label(event.activityTaskTimedOutEventAttributes?.scheduledEventId)}: timed out`;
    case EventType.EVENT_TYPE_MARKER_RECORDED: {
      // A local activity (the initiation, a confirmation, a record write) is one marker, once it has run.
      const attrs = event.markerRecordedEventAttributes;
      if (attrs?.markerName !== LOCAL_ACTIVITY_MARKER) return undefined;
      const name = summary ?? 'local activity';
      return attrs.failure ? `${name}: failed${failure(attrs.failure.message)}` : `${name}: done`;
    }
    case EventType.EVENT_TYPE_TIMER_STARTED: {
      const attrs = event.timerStartedEventAttributes;
      const name = summary ?? 'timer';
      labels.set(`timer:${attrs?.timerId}`, name);
      return `${name}: started`;
    }
    case EventType.EVENT_TYPE_TIMER_FIRED:
      return `${label(`timer:${event.timerFiredEventAttributes?.timerId}`)}: time is up`;
    case EventType.EVENT_TYPE_TIMER_CANCELED:
      return `${label(`timer:${event.timerCanceledEventAttributes?.timerId}`)}: ended early`;
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED: {
      const name = event.workflowExecutionSignaledEventAttributes?.signalName ?? '';
      return SIGNALS[name] ?? `signal ${name} received`;
    }
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED: {
      const attrs = event.workflowExecutionUpdateAcceptedEventAttributes;
      const name = attrs?.acceptedRequest?.input?.name ?? 'update';
      labels.set(`update:${attrs?.protocolInstanceId}`, name);
      return `update ${name} accepted`;
    }
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED: {
      const attrs = event.workflowExecutionUpdateCompletedEventAttributes;
      const name = labels.get(`update:${attrs?.meta?.updateId}`) ?? 'update';
      return `update ${name} ${attrs?.outcome?.failure ? `failed${failure(attrs.outcome.failure.message)}` : 'done'}`;
    }
    default:
      return event.eventType != null ? CLOSED[event.eventType] : undefined;
  }
}
