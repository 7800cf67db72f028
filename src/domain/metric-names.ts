// Every product metric's name, shared by the code that emits it, the tests and the Grafana dashboard.
// The worker's go through Temporal's Prometheus exporter beside the SDK's own (`temporal_…`), which keeps them
// unprefixed and without a `_total` suffix.

/** Emitted by the worker (payment workflow and provider calls), served on WORKER_METRICS_ADDRESS. */
export const WorkerMetrics = {
  paymentsStarted: 'payments_started',
  paymentsFinished: 'payments_finished',
  reconciliations: 'payment_reconciliations',
  providerLatency: 'provider_request_latency',
  providerErrors: 'provider_request_errors',
  notificationAttempts: 'notification_attempts',
  notificationDeliveries: 'notification_deliveries',
} as const;

/** Emitted by the server, served on METRICS_PORT. */
export const ServerMetrics = {
  callbacks: 'payment_callbacks_total',
  inReview: 'payments_in_review',
} as const;
