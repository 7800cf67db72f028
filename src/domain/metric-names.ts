// Every product metric's name as Prometheus shows it, shared by the code that emits it, the tests, the docs and the
// Grafana dashboard. One scheme across worker and server, Prometheus' conventions: the `payments_` prefix, counters
// end in `_total`, durations are in seconds and end in `_seconds`. The SDK's own metrics (`temporal_…`) follow the
// same conventions (src/temporal/worker-runtime.ts).

/** Emitted by the worker (payment workflow and provider calls), served on WORKER_METRICS_ADDRESS. */
export const WorkerMetrics = {
  paymentsStarted: 'payments_started_total',
  paymentsFinished: 'payments_finished_total',
  reconciliations: 'payments_reconciliations_total',
  providerDuration: 'payments_provider_request_duration_seconds',
  providerErrors: 'payments_provider_request_errors_total',
  notificationAttempts: 'payments_notification_attempts_total',
  notificationDeliveries: 'payments_notification_deliveries_total',
} as const;

/** Emitted by the server, served on METRICS_PORT. */
export const ServerMetrics = {
  callbacks: 'payments_callbacks_total',
  inReview: 'payments_in_review',
  httpRequestDuration: 'payments_http_request_duration_seconds',
} as const;

/** The counters a workflow counts: through the `productMetrics` sink (WorkflowMetricSinks), not the SDK's meter. */
export type WorkflowCounter = (typeof WorkerMetrics)['paymentsStarted' | 'paymentsFinished' | 'reconciliations'];

/**
 * The sink a workflow counts with. Not the workflow's `metricMeter`: the SDK tags its series with camelCase
 * `taskQueue` and `workflowType`, and every label here is snake_case, as on Temporal's own `temporal_*` series.
 */
export type WorkflowMetricSinks = {
  productMetrics: { count(name: WorkflowCounter, labels: Record<string, string>): void };
};

/** The labels every product metric carries, on the worker and the server alike. */
export interface ProcessLabels {
  namespace: string;
  task_queue: string;
}

const TOTAL = '_total';
const SECONDS = '_seconds';

/** The name a worker counter is created with: Temporal's exporter appends `_total` itself (countersTotalSuffix). */
export function sdkCounterName(exported: `${string}_total`): string {
  return exported.slice(0, -TOTAL.length);
}

/** The name and unit a worker duration histogram is created with: the exporter appends the unit (unitSuffix). */
export function sdkDurationHistogram(exported: `${string}_seconds`): { name: string; unit: string } {
  return { name: exported.slice(0, -SECONDS.length), unit: SECONDS.slice(1) };
}
