import { ApplicationFailure, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { BatchInput } from '../domain/batch-model';
import { FailureTypes, batchItemInput } from '../domain/payment-model';
import type { BatchItemOrder, PaymentInput, PaymentMessage } from '../domain/payment-model';
import { messageRefusal } from '../domain/signed';
import type { MessageKind, Signed } from '../domain/signed';
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
  let refusal = messageRefusal(message, kind, info.workflowId);
  // A batch item starts whenever its batch gets to it; its batch is checked instead (see trustedPaymentInput).
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

/** Ends the workflow: its input did not come through the front door. Nothing was or will be sent upstream. */
function untrusted(what: string, reason: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureTypes.untrusted,
    message: `${what} refused: ${reason}; nothing was sent to the provider`,
    nonRetryable: true,
  });
}
