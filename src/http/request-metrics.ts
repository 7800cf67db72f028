import type { FastifyInstance } from 'fastify';
import type { ServerMetricSet } from '../metrics/server-metrics';

/** The route label of a request no route matched: one series, whatever the path (no unbounded label values). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Measures every answered request by its route template (`/v1/payments/:id`, never the path itself), method and
 * status, from its arrival to the answer's last byte.
 */
export function measureRequests(app: FastifyInstance, metrics: Pick<ServerMetricSet, 'request'>): void {
  app.addHook('onResponse', (request, reply, done) => {
    const matched = request.is404 ? undefined : request.routeOptions.url;
    metrics.request({
      route: matched ?? UNMATCHED_ROUTE,
      method: request.method,
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
    done();
  });
}
