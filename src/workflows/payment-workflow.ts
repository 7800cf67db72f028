import {
  ApplicationFailure,
  CancellationScope,
  condition,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  setWorkflowOptions,
} from '@temporalio/workflow';
import type { CallbackConfirmation, PaymentActivities } from '../activities/payment-activities';
import type { ItemReporting, PaymentResult } from '../domain/batch-model';
import { formatDuration } from '../domain/duration';
import { PROVIDER_CALL_HEARTBEAT_TIMEOUT_MS, INITIATION_TIMEOUT_MS } from '../domain/payment-model';
import type { PaymentInput, PaymentMessage, ProviderCallback, StatusCheck } from '../domain/payment-model';
import { statusConfirms } from '../domain/payment-events';
import { SeenNonces } from '../domain/signed';
import { activityFailure, initiationFailure } from './activity-failure';
import { DeadlineTimer } from './deadline-timer';
import { callbackSignal, initiationUpdate, paymentQuery, resolveUpdate } from './definitions';
import { approvedForSending } from './payment-approval';
import { isPatched } from './patches';
import { PaymentState } from './payment-state';
import { PaymentStatusEffects } from './payment-status-effects';
import { paymentRecord, writeSummary } from './record-writer';
import { workflowTime } from './time';
import { handlerRefusal, newActivityId, trustedPaymentInput, trustedResult } from './trust';
import { versioned } from './versioning';

// Initiation moves money: it never runs twice. A local activity, it runs inside the workflow task that starts the
// payment, whose acknowledgement is recorded and answered in that same task (no activity task, no second workflow
// task). A worker that dies mid-call has that task tried again, and the initiation with it: the initiation claim,
// taken per execution, makes the second try an unknown outcome that reconciliation settles (never a second send).
// Retries of requests that never left happen inside the client, whose own time-outs the worker checks against this
// bound (INITIATION_TIMEOUT_MS).
const { initiatePayment } = proxyLocalActivities<PaymentActivities>({
  startToCloseTimeout: INITIATION_TIMEOUT_MS,
  retry: { maximumAttempts: 1 },
});

// Status queries only read, so they may be retried. A callback's confirmation runs in the callback's own workflow
// task (a local activity); reconciliation's checks, minutes apart, are activities that heartbeat, so a worker that
// dies mid-check costs seconds, not the 30 s time-out.
const STATUS_QUERY_RETRY = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 3 };
const { checkPaymentStatus: confirmWithStatusQuery, confirmCallback } = proxyLocalActivities<PaymentActivities>({
  startToCloseTimeout: '30s',
  retry: STATUS_QUERY_RETRY,
});
const { checkPaymentStatus } = proxyActivities<PaymentActivities>({
  startToCloseTimeout: '30s',
  heartbeatTimeout: PROVIDER_CALL_HEARTBEAT_TIMEOUT_MS,
  retry: STATUS_QUERY_RETRY,
});

const MAX_RECONCILE_INTERVAL_MS = 10 * 60_000;

const ACTIVITY_SUMMARY = {
  mobile_money_debit: 'initiate mobile-money debit',
  card_payment: 'initiate card payment',
  bank_credit: 'initiate bank credit',
} as const;

/**
 * One payment from initiation (after an operator's approval, when it needs one) to a final outcome: callback,
 * reconciliation, or an operator's decision. It acts only on what the server signed for it: its start message,
 * callbacks, approvals and resolutions (see trust.ts). A batch item whose batch asks for it (`reporting`) returns its
 * signed outcome rather than the payment.
 */
export async function paymentWorkflow(message: PaymentMessage, reporting?: ItemReporting): Promise<PaymentResult> {
  const input = trustedPaymentInput(message);
  const effects = new PaymentStatusEffects(input, reporting?.outcome === 'result');
  const state = new PaymentState(input, effects);
  state.adoptsNamedTransaction = () => isPatched('callback-names-the-transaction');
  // A callback that waits for the status query is recorded with its answer, in the same workflow task.
  effects.holdRecordsWhile(() => state.awaitingConfirmation);
  // Callbacks and resolutions act once each: a copy sent again is refused by its nonce.
  const nonces = new SeenNonces();

  setHandler(paymentQuery, () => state.resource);
  // Only reads: waiting on it sends nothing and settles nothing, so it needs no signature. It answers once the
  // payment's record holds what it answers.
  setHandler(initiationUpdate, async () => {
    await condition(() => state.status !== 'initiating');
    return await effects.recorded(state);
  });
  let closed = false;
  setHandler(callbackSignal, (callback) => {
    // Past its last record write the payment is closed: a callback arriving as it completes changes nothing, so the
    // result and the record stay equal (the provider's next try finds the workflow closed and is told so).
    if (closed) return;
    const refusal = handlerRefusal(callback, 'callback', nonces);
    if (refusal) return state.refusedMessage('a callback', refusal, workflowTime());
    nonces.remember(callback, workflowTime());
    state.callback(callback.body, workflowTime());
    // A late callback that contradicts the outcome is news to the merchant.
    effects.paymentChanged(state);
  });
  setHandler(
    resolveUpdate,
    async (resolution) => {
      // Two copies can pass the validator before either is handled: only the first acts.
      if (!nonces.refusal(resolution) && !state.resolveRefusal()) {
        nonces.remember(resolution, workflowTime());
        state.resolve(resolution.body, workflowTime());
      }
      return await effects.recorded(state);
    },
    {
      validator: (resolution) => {
        const refusal = handlerRefusal(resolution, 'resolution', nonces) ?? state.resolveRefusal();
        if (refusal) throw ApplicationFailure.nonRetryable(refusal, 'NotResolvable');
      },
    },
  );
  // A cancellation in Temporal (CLI, Web UI) does not undo a payment: it is recorded, an initiation not started yet is
  // called off, and everything after the initiation runs on to the payment's outcome.
  void CancellationScope.current().cancelRequested.catch(() => state.cancelRequested(workflowTime()));

  // A bank credit above its merchant's threshold waits for an operator first; rejected or expired, nothing is sent.
  if (await approvedForSending(state, input, nonces, effects)) {
    await effects.whileAsking(() => initiate(state, message, input));
  }
  // A card payment's redirect arrives with the acknowledgement, after the status became pending.
  effects.paymentChanged(state);
  await CancellationScope.nonCancellable(async () => {
    await awaitOutcome(state, input, effects);
    // The first outcome is final. A provider that calls back later finds the workflow closed: the server records what
    // it says on the payment's record (LATE_CALLBACK_WINDOW), so no payment holds a worker's cache or a timer for it.
    await effects.finished(state);
    closed = true;
  });
  return effects.outcomeReport ?? state.resource;
}

// Pinned, batch items too: a payment ends on the build that started it (docs/operating.md#deploying-new-code).
setWorkflowOptions(versioned('PINNED'), paymentWorkflow);

/** Sends the signed start message upstream once (the activity checks it again) and records the provider's verdict. */
async function initiate(state: PaymentState, message: PaymentMessage, input: PaymentInput): Promise<void> {
  // A cancellation that came first calls the initiation off: nothing was sent. Once started, a local activity runs
  // to its answer (it cannot be called off half-sent), so that answer is always recorded.
  if (CancellationScope.current().consideredCancelled) return state.cancelledBeforeInitiation(workflowTime());
  // A failure's verdict is bound to this activity id too (initiationFailure).
  const activityId = newActivityId('initiation-result');
  try {
    // An acknowledgement not signed for this very activity (copied from another payment, forged) is no answer: the
    // outcome is unknown, and reconciliation asks the provider (activityFailure reads it as such).
    const ack = await CancellationScope.nonCancellable(() =>
      trustedResult(
        'initiation-result',
        (id) => initiatePayment.executeWithOptions({ summary: ACTIVITY_SUMMARY[input.request.type] }, [message, id]),
        activityId,
      ),
    );
    state.initiated(ack, workflowTime());
  } catch (err) {
    const { verdict, failure, message: reason } = initiationFailure(err, activityId);
    if ((verdict === 'rejected' || verdict === 'untrusted') && failure)
      state.initiationRejected(failure, workflowTime());
    else if (verdict === 'not_sent') state.initiationNotSent(reason, workflowTime());
    // The failure's code, when the provider answered one, tells a batch whether it was about the provider as a whole.
    else state.initiationUnknown(reason, workflowTime(), failure?.code);
  }
}

/**
 * From the initiation's answer to the outcome: the callback (confirmed by the status query where one fits), else
 * reconciliation, else an operator. A provider that
 * never received the payment fails it (`not_sent`).
 */
async function awaitOutcome(state: PaymentState, input: PaymentInput, effects: PaymentStatusEffects): Promise<void> {
  const { callbackTimeoutMs } = input.timing;
  const callbackWait = `wait for callback (${formatDuration(callbackTimeoutMs)})`;
  if (!(await waitForOutcome(state, input, effects, workflowTime().getTime() + callbackTimeoutMs, callbackWait))) {
    state.timedOut(callbackTimeoutMs, workflowTime());
    await reconcile(state, input, effects);
    effects.reconciliationEnded(state);
  }
  if (state.neverReachedProvider) state.notSent(workflowTime());
  if (!state.terminal) {
    state.needsReview('reconciliation could not settle the payment', workflowTime());
    await waitForOutcome(state, input, effects, undefined, 'wait for an operator');
  }
}

/**
 * Waits until the payment has an outcome or the deadline passes (false), confirming callbacks with the status query
 * as they need it. Without a deadline it waits for as long as it takes (an operator).
 */
async function waitForOutcome(
  state: PaymentState,
  input: PaymentInput,
  effects: PaymentStatusEffects,
  deadline: number | undefined,
  summary: string,
): Promise<boolean> {
  let timer: DeadlineTimer | undefined;
  for (;;) {
    if (state.terminal) return true;
    const callback = state.awaitingConfirmation ? state.nextUnconfirmed() : undefined;
    if (callback) {
      await effects.whileAsking(() => confirm(state, input, effects, callback));
      continue;
    }
    const woken = () => state.terminal || state.awaitingConfirmation;
    if (deadline === undefined) {
      await condition(woken);
      continue;
    }
    const remaining = deadline - workflowTime().getTime();
    if (remaining <= 0) return false;
    timer ??= new DeadlineTimer(remaining, summary);
    if (!(await timer.until(woken))) return false;
    // One timer per deadline, never cancelled: a payment that settles completes with it pending, which costs no
    // event. Runs from before the patch cancelled it once woken, and started another to wait again.
    if (!isPatched('confirmation-records-the-settlement')) {
      timer.cancel();
      timer = undefined;
    }
  }
}

/**
 * Asks the status query about a callback that would settle the payment; without one the callback stands. The
 * settlement the callback makes when the answer agrees is worked out first and recorded by the same local activity,
 * so the callback's workflow task ends with it: no record write after it (docs/performance.md).
 */
async function confirm(
  state: PaymentState,
  input: PaymentInput,
  effects: PaymentStatusEffects,
  callback: ProviderCallback,
): Promise<void> {
  if (!isPatched('confirmation-records-the-settlement')) return confirmThenRecord(state, input, callback);
  const held = state.held;
  const askedAt = workflowTime();
  const agreeing: StatusCheck = { state: callback.state, transactionId: null, statusCode: null, message: null };
  const settlement = effects.settlement(state, (fork) => fork.confirmation(callback, agreeing, askedAt));
  const summary = `confirm callback${settlement ? `; if it agrees, ${writeSummary(settlement.write)}` : ''}`;
  let answer: CallbackConfirmation;
  try {
    answer = await trustedResult('confirmation-result', (resultId) =>
      confirmCallback.executeWithOptions({ summary }, [
        {
          ...statusQuestion(state, input, callback),
          resultId,
          callback,
          ...(settlement ? { settlement: paymentRecord(input, settlement.write) } : {}),
        },
      ]),
    );
  } catch (err) {
    if (settlement) effects.settled(state, settlement);
    return state.confirmation(callback, { error: activityFailure(err).message }, workflowTime());
  }
  const happened = answer.check !== null && statusConfirms(callback, answer.check, held);
  if (settlement && effects.settled(state, settlement, { ...answer, happened })) return;
  state.confirmation(callback, answer.check, workflowTime());
}

/** What the status query asks about a callback: the transaction it named, else the one the payment holds. */
function statusQuestion(state: PaymentState, input: PaymentInput, callback: ProviderCallback) {
  return {
    paymentId: input.paymentId,
    type: input.request.type,
    transactionId: callback.transactionId ?? state.resource.provider.transaction_id,
    heldTransactionId: state.resource.provider.transaction_id,
  };
}

/** A confirmation as runs before `confirmation-records-the-settlement` made it: the record written after it. */
async function confirmThenRecord(state: PaymentState, input: PaymentInput, callback: ProviderCallback): Promise<void> {
  try {
    const check = await trustedResult('status-result', (resultId) =>
      confirmWithStatusQuery.executeWithOptions({ summary: 'confirm callback' }, [
        { ...statusQuestion(state, input, callback), resultId },
      ]),
    );
    state.confirmation(callback, check, workflowTime());
  } catch (err) {
    state.confirmation(callback, { error: activityFailure(err).message }, workflowTime());
  }
}

async function reconcile(state: PaymentState, input: PaymentInput, effects: PaymentStatusEffects): Promise<void> {
  const deadline = workflowTime().getTime() + input.timing.reconcileForMs;
  let interval = input.timing.reconcileIntervalMs;
  for (let attempt = 1; !state.terminal; attempt++) {
    try {
      const check = await trustedResult('status-result', (activityId) =>
        checkPaymentStatus.executeWithOptions({ summary: `status check ${attempt}`, activityId }, [
          {
            paymentId: input.paymentId,
            type: input.request.type,
            transactionId: state.transactionIdToCheck,
            heldTransactionId: state.resource.provider.transaction_id,
          },
        ]),
      );
      if (check === null) {
        // No status query fits this payment: only a callback can still settle it.
        await waitForOutcome(
          state,
          input,
          effects,
          Math.max(deadline, workflowTime().getTime() + 1),
          'wait for callback',
        );
        return;
      }
      state.statusChecked(attempt, check, workflowTime());
      effects.paymentChanged(state);
    } catch (err) {
      state.statusChecked(attempt, { error: activityFailure(err).message }, workflowTime());
    }
    const remaining = deadline - workflowTime().getTime();
    if (state.terminal || remaining <= 0) return;
    const wait = Math.min(interval, remaining);
    const summary = `wait ${formatDuration(wait)} before status check ${attempt + 1}`;
    // Callbacks that come meanwhile are confirmed as they come.
    await waitForOutcome(state, input, effects, workflowTime().getTime() + wait, summary);
    interval = Math.min(interval * 2, MAX_RECONCILE_INTERVAL_MS);
  }
}
