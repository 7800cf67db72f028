import { ApplicationFailure, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { FailureTypes } from '../domain/payment-model';
import { isSigned, messageRefusal } from '../domain/signed';
import type { MessageKind, Signed } from '../domain/signed';
import type { SearchAttributeUpdatePair } from '@temporalio/common';

/**
 * The patch behind which workflows take only signed messages. Histories recorded before it replay as they ran;
 * every message a workflow handles for the first time after it must be signed.
 */
export const SIGNED_MESSAGES = 'signed-messages';

/** How long after the server signed a start message the workflow may start: an old message started again is refused. */
const START_WINDOW_MS = 5 * 60_000;

/**
 * The signed start message of this workflow, or a failure that ends the workflow having done nothing; `refusedStatus`
 * overwrites the status search attribute whoever started it chose, so nobody finds it as anything but refused.
 */
export function trustedStart<T>(
  message: unknown,
  kind: MessageKind,
  what: string,
  refusedStatus: SearchAttributeUpdatePair,
): Signed<T> {
  const info = workflowInfo();
  let refusal = messageRefusal(message, kind, info.workflowId);
  // A batch item starts whenever its batch gets to it; its batch is checked instead (see paymentWorkflow).
  if (!refusal && isSigned(message) && kind !== 'batch-item') {
    const age = info.startTime.getTime() - Date.parse(message.issuedAt);
    if (!(Math.abs(age) <= START_WINDOW_MS))
      refusal = `it was signed at ${message.issuedAt}, too long before this start`;
  }
  if (refusal) {
    upsertSearchAttributes([refusedStatus]);
    throw untrusted(what, refusal);
  }
  return message as Signed<T>;
}

/** Ends the workflow: its input did not come through the front door. Nothing was or will be sent upstream. */
export function untrusted(what: string, reason: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureTypes.untrusted,
    message: `${what} refused: ${reason}; nothing was sent to the provider`,
    nonRetryable: true,
  });
}
