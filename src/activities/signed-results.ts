import { Context } from '@temporalio/activity';
import type { Keyring } from '../crypto/keyring';
import { signMessage } from '../crypto/signing';
import type { MessageKind, ResultKind, Signed } from '../domain/signed';

/**
 * How long a signed result or report may wait for its workflow: it is recorded at once, and only a worker outage
 * delays it; a workflow that refuses one as expired treats it as a failed attempt (asks again, reconciles).
 */
const RESULT_TTL_MS = 60 * 60_000;

/**
 * The activity's result, signed by this worker (SIGNING_KEYS) for the very activity that asked: its workflow, run,
 * activity id and attempt, namespace and task queue. The workflow acts only on such a result (workflows/trust.ts).
 * A local activity's id is a sequence number the workflow cannot name, so the workflow hands it one (`resultId`).
 */
export function signedResult<T>(
  keys: Keyring,
  kind: ResultKind,
  body: T,
  resultId?: string,
  now = new Date(),
): Signed<T> {
  const { workflowExecution, workflowNamespace, taskQueue, activityId: taskId, attempt } = Context.current().info;
  const activityId = resultId ?? taskId;
  return signMessage(keys, kind, workflowExecution?.workflowId ?? '', body, {
    namespace: workflowNamespace ?? '',
    taskQueue,
    now,
    ttlMs: RESULT_TTL_MS,
    binding: { runId: workflowExecution?.runId ?? '', activityId, attempt },
  });
}

/** A message this activity's workflow sends another workflow (a batch item's report), signed by this worker for it. */
export function signedForWorkflow<T>(keys: Keyring, kind: MessageKind, workflowId: string, body: T): Signed<T> {
  const { workflowNamespace, taskQueue } = Context.current().info;
  return signMessage(keys, kind, workflowId, body, {
    namespace: workflowNamespace ?? '',
    taskQueue,
    ttlMs: RESULT_TTL_MS,
  });
}
