import { ApplicationFailure, upsertSearchAttributes, uuid4, workflowInfo } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { BatchInput } from '../domain/batch-model';
import { FailureTypes, batchItemInput } from '../domain/payment-model';
import type { BatchItemOrder, PaymentInput, PaymentMessage } from '../domain/payment-model';
import { messageRefusal } from '../domain/signed';
import type { MessageKind, MessageTarget, ResultKind, SeenNonces, Signed } from '../domain/signed';
import { workflowTime } from './time';
import { SearchAttributes } from './definitions';

// A start message is checked three times; the initiation activity's check is the authoritative one for money: it
// verifies the signature itself with SIGNING_KEYS and that the message names this very workflow, right before the card
// data leaves the vault and the request leaves for the provider, on every attempt, whatever a workflow was told.
// The other two exist for what the activity cannot do:
// - the worker's codec (temporal/codec.ts) verifies every signed payload before any workflow sees it, because a
//   workflow holds no keys: it is the only signature check of callbacks, resolutions and batch controls, which the
//   workflow acts on without an activity;
// - the workflow's check (trustedStart below) binds a verified message to this run: its kind, its workflow id, its
//   age, a batch item's parent. It ends a copied or stale start at once, before anything is scheduled, so nothing
//   shows or waits as a payment or batch it never was.

/** How long after the server signed a start message the workflow may start: an old message started again is refused. */
const START_WINDOW_MS = 5 * 60_000;

/**
 * The signed start message of this workflow, or a failure that ends the workflow having done nothing; `refusedStatus`
 * overwrites the status search attribute whoever started it chose, so nobody finds it as anything but refused.
 */
function trustedStart<T>(
  message: unknown,
  kind: MessageKind,
  what: string,
  refusedStatus: SearchAttributeUpdatePair,
): Signed<T> {
  const info = workflowInfo();
  // A batch item starts whenever its batch gets to it; its batch is checked instead (see trustedPaymentInput).
  const target = kind === 'batch-item' ? { ...here(), now: undefined } : here();
  let refusal = messageRefusal(message, kind, target);
  if (!refusal && kind !== 'batch-item') {
    const age = info.startTime.getTime() - Date.parse((message as Signed<T>).issuedAt);
    if (!(Math.abs(age) <= START_WINDOW_MS))
      refusal = `it was signed at ${(message as Signed<T>).issuedAt}, too long before this start`;
  }
  if (refusal) {
    upsertSearchAttributes([refusedStatus]);
    throw untrusted(what, refusal);
  }
  return message as Signed<T>;
}

/** The payment's input from its signed start message; anything else ends the workflow before it sends anything. */
export function trustedPaymentInput(message: PaymentMessage): PaymentInput {
  const refused = { key: SearchAttributes.status, value: 'failed' };
  // Anything but a batch item is checked as a payment's start (an unsigned value is refused there).
  if ((message as unknown as { kind?: unknown } | null)?.kind !== 'batch-item') {
    return trustedStart<PaymentInput>(message, 'payment', 'the payment input', refused).body;
  }
  const order = trustedStart<BatchItemOrder>(message, 'batch-item', 'the payment input', refused).body;
  // Only the batch it was signed for may start an item: a copy started from outside has no parent.
  const info = workflowInfo();
  if (!order.batchId || info.parent?.workflowId !== order.batchId) {
    upsertSearchAttributes([refused]);
    throw untrusted('the payment input', `it is an item of ${order.batchId}, which did not start it`);
  }
  return batchItemInput(order, info.startTime);
}

/**
 * The batch's input from its signed start message; anything else ends the workflow before it starts an item. A run
 * continued from an earlier one carries the message that run checked (no client can start a continued run).
 */
export function trustedBatchInput(message: Signed<BatchInput>): BatchInput {
  if (workflowInfo().continuedFromExecutionRunId) return message.body;
  const refused = { key: SearchAttributes.batchStatus, value: 'refused' };
  return trustedStart<BatchInput>(message, 'batch', 'the batch input', refused).body;
}

/** What a message must have been signed for to act here, now: this workflow, namespace and task queue. */
export function here(): MessageTarget {
  const { workflowId, namespace, taskQueue } = workflowInfo();
  return { workflowId, namespace, taskQueue, now: workflowTime() };
}

/**
 * Why a message a handler would act on is refused: not signed for this workflow here, expired, or already received
 * (`nonces`); undefined when it may act. The handler then remembers its nonce (`nonces.remember`).
 */
export function handlerRefusal(message: unknown, kind: MessageKind, nonces: SeenNonces): string | undefined {
  return messageRefusal(message, kind, here()) ?? nonces.refusal(message as Signed<unknown>);
}

/** The ApplicationFailure type of an activity result that was not signed for the activity that awaited it. */
export const UNTRUSTED_RESULT = 'UntrustedResult';

/**
 * Runs an activity under an id of the workflow's choosing and answers its result's body, once the result proves to be
 * signed by a worker for this very activity (kind, workflow, run, activity id, namespace, task queue, not expired).
 * Anything else (a result another client answered the task with: forged, or copied from another payment) fails like
 * the activity did, with UNTRUSTED_RESULT: nothing the workflow does rests on it.
 */
export async function trustedResult<T>(
  kind: ResultKind,
  run: (activityId: string) => Promise<Signed<T>>,
  activityId = newActivityId(kind),
): Promise<T> {
  const result = await run(activityId);
  const refusal = resultRefusal(result, kind, activityId);
  if (refusal) throw ApplicationFailure.nonRetryable(`the ${kind} was refused: ${refusal}`, UNTRUSTED_RESULT);
  return result.body;
}

/** An activity id of the workflow's choosing, for trustedResult and trustedVerdict to bind its answer to. */
export function newActivityId(kind: ResultKind): string {
  return `${kind}-${uuid4()}`;
}

/** Why a worker's signed result is no answer to this run's activity `activityId`; undefined when it is. */
export function resultRefusal(result: unknown, kind: ResultKind, activityId: string): string | undefined {
  const refusal = messageRefusal(result, kind, here());
  if (refusal) return refusal;
  const { runId, activityId: signedFor } = result as Signed<unknown>;
  if (runId !== workflowInfo().runId) return `it was signed for run ${runId}`;
  return signedFor === activityId ? undefined : `it was signed for activity ${signedFor}`;
}

/** Ends the workflow: its input did not come through the front door. Nothing was or will be sent upstream. */
function untrusted(what: string, reason: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureTypes.untrusted,
    message: `${what} refused: ${reason}; nothing was sent to the provider`,
    nonRetryable: true,
  });
}
