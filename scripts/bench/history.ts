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

/**
 * Waits, by long-polling the payment's history (no polling load on the worker), until its workflow records a final
 * status; resolves to that status. The upsert comes in the same workflow-task completion after which the payment's
 * query (GET) answers with it.
 */
export async function waitForFinalStatus(client: Client, workflowId: string): Promise<string> {
  let nextPageToken: Uint8Array | undefined;
  for (;;) {
    const response = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId },
      waitNewEvent: true,
      nextPageToken,
    });
    for (const event of response.history?.events ?? []) {
      const status = recordedStatus(event);
      if (status && FINAL.has(status)) return status;
      if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED) return 'closed';
    }
    if (!response.nextPageToken?.length) return 'closed';
    nextPageToken = response.nextPageToken;
  }
}

/**
 * Callback → final status inside the workflow's own history: from the callback's signal event to the event that
 * recorded the final status (the upsert of PaymentStatus, written when the workflow task that handled the callback
 * completed). Undefined when the history holds no such pair.
 */
export async function callbackToFinalMs(client: Client, workflowId: string): Promise<number | undefined> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  let signalled: number | undefined;
  for (const event of history.events ?? []) {
    const at = optionalTsToMs(event.eventTime);
    if (event.workflowExecutionSignaledEventAttributes?.signalName === callbackSignal.name) signalled ??= at;
    const status = recordedStatus(event);
    if (status && FINAL.has(status)) {
      return signalled !== undefined && at !== undefined ? at - signalled : undefined;
    }
  }
  return undefined;
}

/** The twin's signal → its completion, from its history (the twin's counterpart of callback → final status). */
export async function signalToCompletionMs(client: Client, workflowId: string): Promise<number | undefined> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  let signalled: number | undefined;
  for (const event of history.events ?? []) {
    const at = optionalTsToMs(event.eventTime);
    if (event.workflowExecutionSignaledEventAttributes) signalled ??= at;
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED) {
      return signalled !== undefined && at !== undefined ? at - signalled : undefined;
    }
  }
  return undefined;
}
