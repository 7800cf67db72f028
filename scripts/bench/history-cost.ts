// What one workflow run costs, read from its history alone: events, workflow tasks, activations, activity tasks, local
// activities, timers, messages, and billable Temporal Cloud actions (docs/performance.md#cost-per-payment). Pure: the
// bench passes the histories it fetched, test/payment-cost.test.ts the replay corpus's.
import { temporal } from '@temporalio/proto';

const EventType = temporal.api.enums.v1.EventType;
type EventTypeNumber = temporal.api.enums.v1.EventType;

/** An event as the client's proto objects hold it, or as history JSON (eventType a name, numbers as strings). */
export interface CostEvent {
  eventType?: EventTypeNumber | string | null;
  markerRecordedEventAttributes?: { markerName?: string | null } | null;
  activityTaskStartedEventAttributes?: { attempt?: number | null } | null;
  workflowTaskCompletedEventAttributes?: {
    meteringMetadata?: { nonfirstLocalActivityExecutionAttempts?: number | null } | null;
  } | null;
  upsertWorkflowSearchAttributesEventAttributes?: {
    searchAttributes?: { indexedFields?: Record<string, unknown> | null } | null;
  } | null;
  workflowTaskFailedEventAttributes?: {
    cause?: temporal.api.enums.v1.WorkflowTaskFailedCause | string | null;
  } | null;
}

/** What one run cost; each field is a count over its history. */
export interface HistoryCost {
  events: number;
  /** Workflow tasks a worker completed. */
  workflowTasks: number;
  /** Workflow activations the worker ran (an estimate: see `activations` below). */
  activations: number;
  /** Activities scheduled on a task queue (not local). */
  activityTasks: number;
  /** Local activities, by their markers. */
  localActivities: number;
  timers: number;
  signals: number;
  /** Updates accepted. */
  updates: number;
  searchAttributeUpserts: number;
  /** Billable Temporal Cloud actions (an estimate from the history: see `billableActions` below). */
  actions: number;
}

const LOCAL_ACTIVITY_MARKER = 'core_local_activity';
/** The versioning search attribute, exempt from action counts. */
const CHANGE_VERSION = 'TemporalChangeVersion';

/** The event's type as its number, whether it came as a number or, from JSON, as its name. */
function typeOf(event: CostEvent): EventTypeNumber | undefined {
  const type = event.eventType;
  if (typeof type === 'number') return type;
  if (typeof type === 'string') return EventType[type as keyof typeof EventType];
  return undefined;
}

function count(events: readonly CostEvent[], type: EventTypeNumber): number {
  return events.filter((event) => typeOf(event) === type).length;
}

/**
 * Billable actions as Temporal Cloud counts them from a history
 * (https://docs.temporal.io/cloud/actions, "Temporal Cloud Actions"): one each for the workflow's start (also a
 * Continue-As-New's new run, counted in that run's history; a child's start counts once in the parent, at its
 * initiation, and once in the child's own history), a signal received, an Update accepted (Update-with-Start: the
 * start and the Update are one each), an activity scheduled and each of its retries (its started event's attempt − 1),
 * a timer started, a search-attribute upsert (unless it only sets TemporalChangeVersion), a workflow-options update, a
 * reset, a Nexus operation scheduled or cancelled; local activities count once per workflow task that recorded markers,
 * however many, plus their non-first attempts (the task's metering metadata). Queries, heartbeats and rejected Updates
 * leave no event, and are not counted here.
 */
function billableActions(events: readonly CostEvent[]): number {
  let actions = 0;
  let markersSinceTask = false;
  for (const event of events) {
    switch (typeOf(event)) {
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
      case EventType.EVENT_TYPE_TIMER_STARTED:
      case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_OPTIONS_UPDATED:
      case EventType.EVENT_TYPE_NEXUS_OPERATION_SCHEDULED:
      case EventType.EVENT_TYPE_NEXUS_OPERATION_CANCEL_REQUESTED:
        actions += 1;
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
        actions += Math.max((event.activityTaskStartedEventAttributes?.attempt ?? 1) - 1, 0);
        break;
      case EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: {
        const fields = Object.keys(
          event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {},
        );
        if (fields.some((name) => name !== CHANGE_VERSION)) actions += 1;
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED: {
        const cause = event.workflowTaskFailedEventAttributes?.cause;
        const reset = temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW;
        if (cause === reset || cause === 'WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW') actions += 1;
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
        markersSinceTask = false;
        actions += Number(
          event.workflowTaskCompletedEventAttributes?.meteringMetadata?.nonfirstLocalActivityExecutionAttempts ?? 0,
        );
        break;
      case EventType.EVENT_TYPE_MARKER_RECORDED:
        // A task's commands follow its completed event: its markers, together, are one action.
        if (!markersSinceTask) actions += 1;
        markersSinceTask = true;
        break;
      default:
        break;
    }
  }
  return actions;
}

/** What a run cost, from its history's events (proto objects from the client, or history JSON). */
export function historyCost(events: readonly CostEvent[]): HistoryCost {
  const workflowTasks = count(events, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  const localActivities = events.filter(
    (event) =>
      typeOf(event) === EventType.EVENT_TYPE_MARKER_RECORDED &&
      event.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER,
  ).length;
  return {
    events: events.length,
    workflowTasks,
    // The SDK's core hands a workflow task to the workflow code as one activation, then holds the task open while its
    // local activities run and hands each one's result back in an activation of its own (a `resolveActivity` job)
    // before it completes the task. So: one per completed workflow task, plus one per local activity. An estimate:
    // local activities resolved together share one, and evictions and queries (no events) are not counted.
    activations: workflowTasks + localActivities,
    activityTasks: count(events, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
    localActivities,
    timers: count(events, EventType.EVENT_TYPE_TIMER_STARTED),
    signals: count(events, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
    updates: count(events, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED),
    searchAttributeUpserts: count(events, EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES),
    actions: billableActions(events),
  };
}

/** The columns of a cost table, in order, with their headers. */
export const COST_COLUMNS: readonly (readonly [keyof HistoryCost, string])[] = [
  ['events', 'events'],
  ['workflowTasks', 'WFTs'],
  ['activations', 'activations'],
  ['activityTasks', 'activities'],
  ['localActivities', 'local'],
  ['timers', 'timers'],
  ['signals', 'signals'],
  ['updates', 'updates'],
  ['searchAttributeUpserts', 'upserts'],
  ['actions', 'actions'],
];

/** A cost table as lines: one row per named cost, columns padded. */
export function costTable(rows: readonly (readonly [string, HistoryCost])[]): string[] {
  const header = ['scenario', ...COST_COLUMNS.map(([, title]) => title)];
  const cells = rows.map(([name, cost]) => [name, ...COST_COLUMNS.map(([key]) => String(cost[key]))]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]?.length ?? 0)));
  const line = (row: string[]) =>
    row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), ...cells.map(line)];
}
