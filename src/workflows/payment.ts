import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { PaymentActivities } from '../activities/payment-activities';
import { formatDuration } from '../domain/duration';
import { FailureTypes, isTerminal } from '../domain/payment';
import type { Failure, Outcome, PaymentInput, PaymentResource, ResolveInput } from '../domain/payment';
import { callbackSignal, itemSettledSignal, paymentQuery, resolveUpdate, SearchAttributes } from './definitions';
import { currentDetails } from './payment-details';
import { paymentStarted, paymentStatusChanged, reconciliationEnded } from './payment-metrics';
import { PaymentState } from './payment-state';
import { workflowTime } from './time';

// Initiation moves money: Temporal must never resend it. A worker crash mid-call surfaces as a timeout,
// which the workflow treats as an unknown outcome; retries of requests that never left happen inside the client.
const { initiatePayment } = proxyActivities<PaymentActivities>({
  startToCloseTimeout: '2m',
  retry: { maximumAttempts: 1 },
});

// Status queries only read, so Temporal may retry them.
const { checkPaymentStatus } = proxyActivities<PaymentActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 3 },
});

const MAX_RECONCILE_INTERVAL_MS = 10 * 60_000;

const ACTIVITY_SUMMARY = {
  mobile_money_debit: 'initiate mobile-money debit',
  card_payment: 'initiate card payment',
  bank_credit: 'initiate bank credit',
} as const;

/** One payment from initiation to a final outcome: callback, reconciliation, or an operator's decision. */
export async function paymentWorkflow(input: PaymentInput): Promise<PaymentResource> {
  const { paymentId, request } = input;
  paymentStarted(paymentId, request.type);
  const reports: Promise<void>[] = [];
  const state: PaymentState = new PaymentState(input, (status) => {
    publishStatus(state);
    paymentStatusChanged(paymentId, request.type, status);
    if (input.batchId && (status === 'needs_review' || isTerminal(status))) {
      reports.push(reportToBatch(input.batchId, paymentId, status));
    }
  });
  setHandler(paymentQuery, () => state.resource);
  setHandler(callbackSignal, (callback) => state.callback(callback, workflowTime()));
  setHandler(
    resolveUpdate,
    (resolution) => {
      state.resolve(resolution, workflowTime());
      return state.resource;
    },
    {
      validator: (_resolution: ResolveInput) => {
        const refusal = state.resolveRefusal();
        if (refusal) throw ApplicationFailure.nonRetryable(refusal, 'NotResolvable');
      },
    },
  );

  await initiate(state, input);
  const { callbackTimeoutMs, lateCallbackWindowMs } = input.timing;
  const callbackWait = { summary: `wait for callback (${formatDuration(callbackTimeoutMs)})` };
  if (!state.terminal && !(await condition(() => state.terminal, callbackTimeoutMs, callbackWait))) {
    state.timedOut(callbackTimeoutMs, workflowTime());
    await reconcile(state, input);
    reconciliationEnded(paymentId, request.type, state.terminal ? state.status : 'needs_review');
  }
  if (!state.terminal) {
    state.needsReview('reconciliation could not settle the payment', workflowTime());
    await condition(() => state.terminal);
  }
  // The first outcome is final, but a provider may still call back; stay a while to record what it says.
  if (lateCallbackWindowMs > 0) await sleep(lateCallbackWindowMs, { summary: 'record late callbacks' });
  await Promise.all(reports);
  await condition(allHandlersFinished);
  return state.resource;
}

async function reportToBatch(batchId: string, paymentId: string, status: 'needs_review' | Outcome): Promise<void> {
  try {
    await getExternalWorkflowHandle(batchId).signal(itemSettledSignal, { paymentId, status });
  } catch {
    // The batch has closed (a resolution after it completed); the payment itself remains the record.
  }
}

function publishStatus(state: PaymentState): void {
  upsertSearchAttributes([{ key: SearchAttributes.status, value: state.status }]);
  setCurrentDetails(currentDetails(state.resource));
}

async function initiate(state: PaymentState, input: PaymentInput): Promise<void> {
  try {
    const ack = await initiatePayment.executeWithOptions({ summary: ACTIVITY_SUMMARY[input.request.type] }, [
      { paymentId: input.paymentId, request: input.request, callbackUrl: input.callbackUrl },
    ]);
    state.initiated(ack, workflowTime());
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    const failure = cause instanceof ApplicationFailure ? (cause.details?.[0] as Failure | undefined) : undefined;
    const type = cause instanceof ApplicationFailure ? cause.type : undefined;
    if (type === FailureTypes.rejected && failure) {
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
      const check = await checkPaymentStatus.executeWithOptions({ summary: `status check ${attempt}` }, [
        { paymentId: input.paymentId, type: input.request.type, transactionId: state.resource.provider.transaction_id },
      ]);
      if (check === null) {
        // No status query fits this payment: only a callback can still settle it.
        await condition(() => state.terminal, Math.max(deadline - workflowTime().getTime(), 1), {
          summary: 'wait for callback',
        });
        return;
      }
      state.statusChecked(attempt, check, workflowTime());
      setCurrentDetails(currentDetails(state.resource));
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
