import { log, metricMeter } from '@temporalio/workflow';
import type { PaymentStatus } from '../domain/payment-model';
import type { PaymentType } from '../domain/requests';
import { sdkCounterName, WorkerMetrics } from '../domain/metric-names';

// Emitted from the workflow: the SDK drops metrics and log lines while replaying, so each counts once per event.
// The meter only works inside a workflow context, so the counters are looked up per use rather than at load.

/** Counts and logs a payment workflow's start. */
export function paymentStarted(paymentId: string, type: PaymentType): void {
  metricMeter.createCounter(sdkCounterName(WorkerMetrics.paymentsStarted), '', 'payment workflows started').add(1, {
    payment_type: type,
  });
  log.info('payment started', { paymentId, paymentType: type });
}

/** Counts a final status (succeeded, failed) and logs every status change. */
export function paymentStatusChanged(paymentId: string, type: PaymentType, status: PaymentStatus): void {
  if (status === 'succeeded' || status === 'failed') {
    metricMeter
      .createCounter(sdkCounterName(WorkerMetrics.paymentsFinished), '', 'payments that reached a final status')
      .add(1, { payment_type: type, status });
  }
  log.info('payment status changed', { paymentId, paymentType: type, status });
}

/** Counts and logs how a reconciliation ended: succeeded, failed or needs_review. */
export function reconciliationEnded(paymentId: string, type: PaymentType, outcome: PaymentStatus): void {
  metricMeter
    .createCounter(sdkCounterName(WorkerMetrics.reconciliations), '', 'reconciliations ended, by outcome')
    .add(1, { payment_type: type, outcome });
  log.info('reconciliation ended', { paymentId, paymentType: type, outcome });
}
