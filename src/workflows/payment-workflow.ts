import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  setWorkflowOptions,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { InitiationOrder, PaymentActivities } from '../activities/payment-activities';
import { formatDuration } from '../domain/duration';
import {
  FailureTypes,
  PROVIDER_CALL_HEARTBEAT_TIMEOUT_MS,
  INITIATION_TIMEOUT_MS,
  batchItemInput,
  isTerminal,
} from '../domain/payment-model';
import type {
  BatchItemOrder,
  Failure,
  Outcome,
  PaymentInput,
  PaymentMessage,
  PaymentResource,
  ProviderCallback,
} from '../domain/payment-model';
import { isSigned, messageBody, messageRefusal } from '../domain/signed';
import type { Signed } from '../domain/signed';
import {
  callbackSignal,
  initiationUpdate,
  itemSettledSignal,
  paymentQuery,
  resolveUpdate,
  SearchAttributes,
} from './definitions';
import { paymentCurrentDetails } from '../domain/web-ui-text';
import { paymentStarted, paymentStatusChanged, reconciliationEnded } from './payment-metrics';
import { PaymentState } from './payment-state';
import { workflowTime } from './time';
import { MERCHANT_NOTIFICATIONS, Notifier, PaymentNotices } from './merchant-notifications';
import { SIGNED_MESSAGES, trustedStart, untrusted } from './trust';
import { versioned } from './versioning';

// Initiation moves money: Temporal must never resend it. A worker crash mid-call surfaces as a missed heartbeat
// within seconds, which the workflow treats as an unknown outcome; retries of requests that never left happen inside
// the client, whose own time-outs the worker checks against this bound (INITIATION_TIMEOUT_MS).
const { initiatePayment } = proxyActivities<PaymentActivities>({
  startToCloseTimeout: INITIATION_TIMEOUT_MS,
  heartbeatTimeout: PROVIDER_CALL_HEARTBEAT_TIMEOUT_MS,
  retry: { maximumAttempts: 1 },
});

/** Patch: a cancellation request is recorded and the payment still settles, instead of the workflow ending. */
export const HANDLE_CANCELLATION = 'handle-cancellation';

/** Patch: a payment the provider says it never received fails (`not_sent`) instead of waiting for an operator. */
const SETTLE_NOT_SENT = 'settle-not-sent';

// Status queries only read, so Temporal may retry them.
const STATUS_CHECK_OPTIONS = {
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 3 },
} as const;
const { checkPaymentStatus: checkWithoutHeartbeat } = proxyActivities<PaymentActivities>(STATUS_CHECK_OPTIONS);
const { checkPaymentStatus: checkWithHeartbeat } = proxyActivities<PaymentActivities>({
  ...STATUS_CHECK_OPTIONS,
  heartbeatTimeout: PROVIDER_CALL_HEARTBEAT_TIMEOUT_MS,
});

/** Patch: status checks heartbeat, so a worker that dies mid-check costs reconciliation seconds, not 30 s. */
const STATUS_CHECK_HEARTBEAT = 'status-check-heartbeat';

/** Patch: a callback whose confirming status query failed is asked about again in reconciliation, not ignored. */
const CONFIRM_IN_RECONCILIATION = 'confirm-in-reconciliation';

/** The status check activity of this run. */
function checkPaymentStatus() {
  return patched(STATUS_CHECK_HEARTBEAT) ? checkWithHeartbeat : checkWithoutHeartbeat;
}

const MAX_RECONCILE_INTERVAL_MS = 10 * 60_000;

const ACTIVITY_SUMMARY = {
  mobile_money_debit: 'initiate mobile-money debit',
  card_payment: 'initiate card payment',
  bank_credit: 'initiate bank credit',
} as const;

/**
 * One payment from initiation to a final outcome: callback, reconciliation, or an operator's decision. It acts only on
 * what the server signed for it: its start message, callbacks and resolutions (see trust.ts).
 */
export async function paymentWorkflow(message: PaymentMessage | PaymentInput): Promise<PaymentResource> {
  const signedRun = patched(SIGNED_MESSAGES);
  const input = signedRun ? trustedInput(message) : (message as PaymentInput);
  const { paymentId, request } = input;
  paymentStarted(paymentId, request.type);
  const reports: Promise<void>[] = [];
  // The merchant hears of the changes that matter; the hand-offs never hold up the payment (awaited at its end only).
  const notifier = patched(MERCHANT_NOTIFICATIONS)
    ? new Notifier(input.merchantId, paymentId, (event) =>
        state.notificationQueued(event.type, event.id, workflowTime()),
      )
    : undefined;
  const notices = notifier && new PaymentNotices(notifier);
  const state: PaymentState = new PaymentState(input, (status) => {
    publishStatus(state);
    paymentStatusChanged(paymentId, request.type, status);
    if (input.batchId && (status === 'needs_review' || isTerminal(status))) {
      reports.push(reportToBatch(input.batchId, paymentId, status));
    }
    notices?.observe(state.resource);
  });
  setHandler(paymentQuery, () => state.resource);
  // Only reads: waiting on it sends nothing and settles nothing, so it needs no signature.
  setHandler(initiationUpdate, async () => {
    await condition(() => state.status !== 'initiating');
    return state.resource;
  });
  setHandler(callbackSignal, (callback) => {
    // A callback handled for the first time now must be signed; those in older histories replay as they ran.
    if (!patched(SIGNED_MESSAGES)) return state.callbackBeforeSigning(callback as ProviderCallback, workflowTime());
    const refusal = messageRefusal(callback, 'callback', paymentId);
    if (refusal) return state.refusedMessage('a callback', refusal, workflowTime());
    state.callback((callback as unknown as Signed<ProviderCallback>).body, workflowTime());
    // A late callback that contradicts the outcome is news to the merchant.
    notices?.observe(state.resource);
  });
  setHandler(
    resolveUpdate,
    (resolution) => {
      // Validators do not run on replay: an unsigned resolution here is one recorded before signing.
      state.resolve(messageBody(resolution), workflowTime());
      return state.resource;
    },
    {
      validator: (resolution) => {
        const refusal = messageRefusal(resolution, 'resolution', paymentId) ?? state.resolveRefusal();
        if (refusal) throw ApplicationFailure.nonRetryable(refusal, 'NotResolvable');
      },
    },
  );

  // A cancellation in Temporal (CLI, Web UI) does not undo a payment: it is recorded, an initiation no worker has
  // started yet is called off, and everything after the initiation runs on to the payment's settlement.
  const handlesCancellation = patched(HANDLE_CANCELLATION);
  if (handlesCancellation) {
    void CancellationScope.current().cancelRequested.catch(() => state.cancelRequested(workflowTime()));
  }
  await initiate(state, signedRun ? (message as PaymentMessage) : legacyOrder(input), input, handlesCancellation);
  // A card payment's redirect arrives with the acknowledgement, after the status became pending.
  notices?.observe(state.resource);
  const settling = () => settle(state, input, reports, notifier);
  if (handlesCancellation) await CancellationScope.nonCancellable(settling);
  else await settling();
  return state.resource;
}

/** From the initiation's answer to the outcome, the late-callback window, the batch report and the notifications. */
async function settle(
  state: PaymentState,
  input: PaymentInput,
  reports: Promise<void>[],
  notifier: Notifier | undefined,
): Promise<void> {
  const { paymentId, request } = input;
  const { callbackTimeoutMs, lateCallbackWindowMs } = input.timing;
  const callbackWait = `wait for callback (${formatDuration(callbackTimeoutMs)})`;
  if (!(await waitForOutcome(state, input, workflowTime().getTime() + callbackTimeoutMs, callbackWait))) {
    state.timedOut(callbackTimeoutMs, workflowTime());
    await reconcile(state, input);
    reconciliationEnded(paymentId, request.type, state.terminal ? state.status : 'needs_review');
  }
  if (state.neverReachedProvider && patched(SETTLE_NOT_SENT)) state.notSent(workflowTime());
  if (!state.terminal) {
    state.needsReview('reconciliation could not settle the payment', workflowTime());
    await waitForOutcome(state, input, undefined, 'wait for an operator');
  }
  // The first outcome is final, but a provider may still call back; stay a while to record what it says.
  if (lateCallbackWindowMs > 0) await sleep(lateCallbackWindowMs, { summary: 'record late callbacks' });
  await Promise.all(reports);
  await notifier?.drained();
  await condition(allHandlersFinished);
}

// Pinned, batch items too: a payment ends on the build that started it (docs/operating.md#deploying-new-code).
setWorkflowOptions(versioned('PINNED'), paymentWorkflow);

/** The payment's input from its signed start message; anything else ends the workflow before it sends anything. */
function trustedInput(message: unknown): PaymentInput {
  const info = workflowInfo();
  const refused = { key: SearchAttributes.status, value: 'failed' };
  if (isSigned(message) && message.kind === 'batch-item') {
    const order = trustedStart<BatchItemOrder>(message, 'batch-item', 'the payment input', refused).body;
    // Only the batch it was signed for may start an item: a copy started from outside has no parent.
    if (!order.batchId || info.parent?.workflowId !== order.batchId) {
      upsertSearchAttributes([refused]);
      throw untrusted('the payment input', `it is an item of ${order.batchId}, which did not start it`);
    }
    return batchItemInput(order, info.startTime);
  }
  return trustedStart<PaymentInput>(message, 'payment', 'the payment input', refused).body;
}

/**
 * Waits until the payment has an outcome or the deadline passes (false), confirming callbacks with the status query
 * as they need it. Without a deadline it waits for as long as it takes (an operator).
 */
async function waitForOutcome(
  state: PaymentState,
  input: PaymentInput,
  deadline: number | undefined,
  summary: string,
): Promise<boolean> {
  for (;;) {
    if (state.terminal) return true;
    const callback = state.awaitingConfirmation ? state.nextUnconfirmed() : undefined;
    if (callback) {
      await confirm(state, input, callback);
      continue;
    }
    const woken = () => state.terminal || state.awaitingConfirmation;
    if (deadline === undefined) {
      await condition(woken);
      continue;
    }
    const remaining = deadline - workflowTime().getTime();
    if (remaining <= 0 || !(await condition(woken, remaining, { summary }))) return false;
  }
}

async function confirm(state: PaymentState, input: PaymentInput, callback: ProviderCallback): Promise<void> {
  const transactionId = callback.transactionId ?? state.resource.provider.transaction_id;
  try {
    const check = await checkPaymentStatus().executeWithOptions({ summary: 'confirm callback' }, [
      { paymentId: input.paymentId, type: input.request.type, transactionId },
    ]);
    state.confirmation(callback, check, workflowTime());
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const error = { error: cause instanceof Error ? cause.message : 'failed' };
    state.confirmation(callback, error, workflowTime(), patched(CONFIRM_IN_RECONCILIATION));
  }
}

async function reportToBatch(batchId: string, paymentId: string, status: 'needs_review' | Outcome): Promise<void> {
  try {
    // Even once the payment's workflow was asked to cancel: the batch's counts depend on this report.
    await CancellationScope.nonCancellable(() =>
      getExternalWorkflowHandle(batchId).signal(itemSettledSignal, { paymentId, status }),
    );
  } catch {
    // The batch has closed (a resolution after it completed); the payment itself remains the record.
  }
}

function publishStatus(state: PaymentState): void {
  upsertSearchAttributes([{ key: SearchAttributes.status, value: state.status }]);
  setCurrentDetails(paymentCurrentDetails(state.resource));
}

/** What runs recorded before signing handed the initiation (the activity now refuses it: nothing signed it). */
function legacyOrder(input: PaymentInput): InitiationOrder {
  return { paymentId: input.paymentId, request: input.request, callbackUrl: input.callbackUrl ?? '' };
}

/** `order` is what the activity checks before it sends anything: the signed start message. */
async function initiate(
  state: PaymentState,
  order: InitiationOrder,
  input: PaymentInput,
  handlesCancellation: boolean,
): Promise<void> {
  try {
    const ack = await initiatePayment.executeWithOptions({ summary: ACTIVITY_SUMMARY[input.request.type] }, [order]);
    state.initiated(ack, workflowTime());
  } catch (err) {
    // Temporal cancels an activity no worker has started at once; one that started runs on and answers as usual.
    if (handlesCancellation && isCancellation(err)) return state.cancelledBeforeInitiation(workflowTime());
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    const failure = cause instanceof ApplicationFailure ? (cause.details?.[0] as Failure | undefined) : undefined;
    const type = cause instanceof ApplicationFailure ? cause.type : undefined;
    if ((type === FailureTypes.rejected || type === FailureTypes.untrusted) && failure) {
      state.initiationRejected(failure, workflowTime());
    } else if (type === FailureTypes.unreachable) {
      state.initiationRejected(
        { code: 'provider_unreachable', message: cause?.message ?? 'unreachable' },
        workflowTime(),
      );
    } else {
      state.initiationUnknown(cause?.message ?? (err instanceof Error ? err.message : 'unknown'), workflowTime());
    }
  }
}

async function reconcile(state: PaymentState, input: PaymentInput): Promise<void> {
  const deadline = workflowTime().getTime() + input.timing.reconcileForMs;
  let interval = input.timing.reconcileIntervalMs;
  for (let attempt = 1; !state.terminal; attempt++) {
    try {
      const check = await checkPaymentStatus().executeWithOptions({ summary: `status check ${attempt}` }, [
        { paymentId: input.paymentId, type: input.request.type, transactionId: state.transactionIdToCheck },
      ]);
      if (check === null) {
        // No status query fits this payment: only a callback can still settle it.
        await condition(() => state.terminal, Math.max(deadline - workflowTime().getTime(), 1), {
          summary: 'wait for callback',
        });
        return;
      }
      state.statusChecked(attempt, check, workflowTime());
      setCurrentDetails(paymentCurrentDetails(state.resource));
    } catch (err) {
      const cause = err instanceof ActivityFailure ? err.cause : err;
      state.statusChecked(attempt, { error: cause instanceof Error ? cause.message : 'failed' }, workflowTime());
    }
    const remaining = deadline - workflowTime().getTime();
    if (state.terminal || remaining <= 0) return;
    const wait = Math.min(interval, remaining);
    await condition(() => state.terminal, wait, {
      summary: `wait ${formatDuration(wait)} before status check ${attempt + 1}`,
    });
    interval = Math.min(interval * 2, MAX_RECONCILE_INTERVAL_MS);
  }
}
