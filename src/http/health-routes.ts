import type { FastifyInstance } from 'fastify';
import type { Readiness } from '../payments/readiness';

/**
 * `GET /healthz`: the process answers. `GET /readyz`: it can take payments, or 503 with the failed checks' fixed
 * reasons; what they ran into (upstream error texts) goes to the log only.
 */
export function registerHealthRoutes(app: FastifyInstance, readiness: Readiness): void {
  app.get('/healthz', { logLevel: 'silent' }, () => ({ status: 'ok' }));
  app.get('/readyz', { logLevel: 'silent' }, async (_request, reply) => {
    const report = await readiness.check();
    // The route's own logger is silent (probes poll it); a failed check is still worth a line.
    if (!report.ready) app.log.warn({ reasons: report.reasons, details: report.details }, 'not ready');
    return reply
      .status(report.ready ? 200 : 503)
      .send({ status: report.ready ? 'ready' : 'not_ready', checks: report.checks, reasons: report.reasons });
  });
}
