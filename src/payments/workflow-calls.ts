import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { status } from '@grpc/grpc-js';
import {
  ServiceError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  isGrpcServiceError,
} from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { QueryDefinition, UpdateDefinition } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { describeWorkflowId } from '../domain/ids';
import { decodePayload } from '../temporal/data-converter';
import { AppError, temporalCall, translateTemporalError } from './app-errors';

const EventType = temporal.api.enums.v1.EventType;

/**
 * A workflow's state from its query while it runs, or from its result once closed (no worker needed then). A run that
 * closed before any workflow task completed (terminated at once) has no state to query: `fromStart` makes it from
 * the run's start arguments and start time.
 */
export async function queryOrResult<T>(
  client: Client,
  workflowId: string,
  query: QueryDefinition<T>,
  timeoutMs: number,
  fromStart: (args: unknown[], startTime: Date) => T,
): Promise<T> {
  const handle = client.workflow.getHandle(workflowId);
  try {
    return await client.withDeadline(Date.now() + timeoutMs, () => handle.query(query));
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new AppError('not_found', `no ${describeWorkflowId(workflowId)}`);
    const description = await temporalCall(() => handle.describe()).catch(() => undefined);
    if (description?.status.name === 'COMPLETED') return (await handle.result()) as T;
    if (description && description.status.name !== 'RUNNING') {
      const args = await argsOfRunThatNeverRan(client, workflowId, description.runId);
      if (args) return fromStart(args, description.startTime);
    }
    throw new AppError(
      'unavailable',
      `the ${describeWorkflowId(workflowId)} cannot be read right now (no worker answered)`,
    );
  }
}

/** The decoded start arguments of a run that never completed a workflow task; undefined once one did. */
async function argsOfRunThatNeverRan(
  client: Client,
  workflowId: string,
  runId: string,
): Promise<unknown[] | undefined> {
  const { events } = await temporalCall(() => client.workflow.getHandle(workflowId, runId).fetchHistory());
  if (!events || events.some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)) return undefined;
  const payloads = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  return Promise.all(payloads.map((p) => decodePayload(client.options.loadedDataConverter, p)));
}

/** Statuses of a workflow that ended without returning, as the client names them: as visibility queries name them. */
export const ENDED_WITHOUT_RESULT: Readonly<Record<string, string>> = {
  TERMINATED: 'Terminated',
  CANCELLED: 'Canceled',
  TIMED_OUT: 'TimedOut',
  FAILED: 'Failed',
};

/** How a closed workflow ended without a result (`terminated`, …) and when; undefined while it runs or once it completed. */
export async function endedWithoutResult(
  client: Client,
  workflowId: string,
): Promise<{ how: string; at: string } | undefined> {
  const description = await temporalCall(() => client.workflow.getHandle(workflowId).describe());
  const status = description.status.name;
  if (!(status in ENDED_WITHOUT_RESULT)) return undefined;
  return { how: status.toLowerCase().replace('_', ' '), at: (description.closeTime ?? new Date()).toISOString() };
}

/** How long an Update is re-sent while the workflow cannot take it, e.g. while its worker restarts. */
const UPDATE_RETRY_BUDGET_MS = 30_000;

/** Runs an Update; a refusal by its validator and a closed workflow become `conflict`, a missing one `not_found`. */
export async function executeUpdate<T, A>(
  client: Client,
  workflowId: string,
  update: UpdateDefinition<T, [A]>,
  arg: A,
  closedMessage: string,
): Promise<T> {
  const handle = client.workflow.getHandle(workflowId);
  // One id for every attempt: Temporal applies an Update id once, however often it is sent.
  const updateId = randomUUID();
  try {
    return await retryWhileNotReady(
      () => handle.executeUpdate(update, { args: [arg], updateId }),
      UPDATE_RETRY_BUDGET_MS,
    );
  } catch (err) {
    if (workflowNotReady(err)) {
      throw new AppError(
        'unavailable',
        `the ${describeWorkflowId(workflowId)} cannot take the request right now; try again`,
      );
    }
    if (err instanceof WorkflowUpdateFailedError) {
      throw new AppError('conflict', err.cause?.message ?? closedMessage);
    }
    if (err instanceof WorkflowNotFoundError) {
      const exists = await temporalCall(() => handle.describe()).then(
        () => true,
        (e: unknown) => {
          if (e instanceof WorkflowNotFoundError) return false;
          throw e;
        },
      );
      throw exists
        ? new AppError('conflict', closedMessage)
        : new AppError('not_found', `no ${describeWorkflowId(workflowId)}`);
    }
    throw translateTemporalError(err);
  }
}

/** Re-runs `call` with backoff while Temporal answers that the workflow cannot take an Update yet, up to `budgetMs`. */
export async function retryWhileNotReady<T>(
  call: () => Promise<T>,
  budgetMs: number,
  wait: (ms: number) => Promise<unknown> = sleep,
): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (let delayMs = 250; ; delayMs = Math.min(delayMs * 2, 2000)) {
    try {
      return await call();
    } catch (err) {
      if (!workflowNotReady(err) || Date.now() + delayMs > deadline) throw err;
      await wait(delayMs);
    }
  }
}

// FAILED_PRECONDITION: a workflow task failed or timed out (a killed worker) and Temporal dropped the Update
// unapplied. UNAVAILABLE (Temporal down, or an Update aborted for a retry) is already retried by the client's
// gRPC interceptor and stays a quick 503.
function workflowNotReady(err: unknown): boolean {
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  const cause = err instanceof ServiceError ? err.cause : err;
  return isGrpcServiceError(cause) && cause.code === status.FAILED_PRECONDITION;
}
