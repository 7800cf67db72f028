import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ServerMetrics } from '../domain/metric-names';
import type { ProcessLabels } from '../domain/metric-names';

/** Why a callback was taken or turned away; `accepted` is the only one that reached the payment's workflow. */
export type CallbackReason =
  | 'accepted'
  | 'bad_token'
  | 'unknown_payment'
  | 'payment_closed'
  | 'rate_limited'
  | 'unparseable'
  | 'too_large'
  | 'temporal_unavailable'
  | 'error';

/** One answered HTTP request: its route template (`unmatched` when no route matched), method and status. */
export interface AnsweredRequest {
  route: string;
  method: string;
  status: number;
  seconds: number;
}

export interface ServerMetricSet {
  registry: Registry;
  callback(reason: CallbackReason): void;
  request(answered: AnsweredRequest): void;
}

/** Seconds: most answers take milliseconds, a payment's creation waits up to INITIATION_WAIT, an export streams. */
const REQUEST_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface ServerMetricDeps {
  /** Payments in `needs_review` now; read from Temporal on every scrape, so it survives restarts of any process. */
  countInReview: () => Promise<number>;
  onError: (err: unknown) => void;
  /** On every metric, as the worker's carry them: the Temporal namespace and task queue. */
  labels?: ProcessLabels;
}

/** The server's Prometheus registry: HTTP requests, callbacks, payments in review, and Node's process metrics. */
export function createServerMetrics({ countInReview, onError, labels }: ServerMetricDeps): ServerMetricSet {
  const registry = new Registry();
  if (labels) registry.setDefaultLabels(labels);
  collectDefaultMetrics({ register: registry });
  const callbacks = new Counter({
    name: ServerMetrics.callbacks,
    help: 'provider callbacks received, by result (accepted, rejected) and reason',
    labelNames: ['result', 'reason'],
    registers: [registry],
  });
  new Gauge({
    name: ServerMetrics.inReview,
    help: 'payments waiting for an operator (status needs_review), from Temporal visibility; NaN when unreachable',
    registers: [registry],
    async collect() {
      try {
        this.set(await countInReview());
      } catch (err) {
        onError(err);
        this.set(Number.NaN);
      }
    },
  });
  const requests = new Histogram({
    name: ServerMetrics.httpRequestDuration,
    help: 'HTTP requests answered, by route template, method and status: the time to the last byte of the answer',
    labelNames: ['route', 'method', 'status'],
    buckets: REQUEST_DURATION_BUCKETS,
    registers: [registry],
  });
  return {
    registry,
    request: ({ route, method, status, seconds }) =>
      requests.observe({ route, method, status: String(status) }, seconds),
    callback: (reason) => callbacks.inc({ result: reason === 'accepted' ? 'accepted' : 'rejected', reason }),
  };
}

/** Serves a registry on `GET /metrics`; resolves once it listens. */
export async function serveMetrics(
  registry: Registry,
  port: number,
  host: string,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
