import { ApplicationFailure, condition, isCancellation, setHandler } from '@temporalio/workflow';
import type { ApprovalInput } from '../domain/approval-rules';
import type { PaymentInput } from '../domain/payment-model';
import type { SeenNonces, Signed } from '../domain/signed';
import { paymentApprovalUpdate } from './definitions';
import type { PaymentState } from './payment-state';
import type { PaymentStatusEffects } from './payment-status-effects';
import { workflowTime } from './time';
import { handlerRefusal } from './trust';

/**
 * Holds a bank credit above its merchant's threshold before anything is sent: `awaiting_approval` until an operator
 * other than its creator approves it (a signed Update, once per nonce), one rejects it, or its approval window passes;
 * the last two fail it, nothing sent. True when the payment may be sent: at once, in this very call, when it needs no
 * approval (its history stays as it was before approvals).
 */
export async function approvedForSending(
  state: PaymentState,
  input: PaymentInput,
  nonces: SeenNonces,
  effects: PaymentStatusEffects,
): Promise<boolean> {
  setHandler(
    paymentApprovalUpdate,
    async (message) => {
      // Two copies can pass the validator before either is handled: only the first acts.
      if (!nonces.refusal(message) && !state.decisionRefusal(message.body)) {
        nonces.remember(message, workflowTime());
        state.decided({ ...message.body, at: workflowTime().toISOString() }, workflowTime());
      }
      return await effects.recorded(state);
    },
    {
      validator: (message) => {
        const refusal =
          handlerRefusal(message, 'approval', nonces) ?? state.decisionRefusal((message as Signed<ApprovalInput>).body);
        if (refusal) throw ApplicationFailure.nonRetryable(refusal, 'NotAllowed');
      },
    },
  );
  if (state.status !== 'awaiting_approval') return true;
  // The merchant hears that it waits (payment.approval_required), with the record that shows it.
  effects.paymentChanged(state);
  const expiresAt = Date.parse(state.resource.approval_expires_at ?? input.createdAt);
  try {
    const decided = await condition(
      () => state.status !== 'awaiting_approval',
      Math.max(1, expiresAt - workflowTime().getTime()),
      { summary: 'wait for an operator to approve' },
    );
    if (!decided) state.approvalExpired(workflowTime());
  } catch (err) {
    // Cancelled in Temporal while it waited: nothing was sent, and nothing will be.
    if (!isCancellation(err)) throw err;
    state.cancelledBeforeInitiation(workflowTime());
  }
  // Approved: `initiating`; rejected, expired or cancelled: failed.
  return !state.terminal;
}
