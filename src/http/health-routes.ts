import type { FastifyInstance } from 'fastify';
import type { Readiness } from '../temporal/readiness';

/** `GET /healthz`: the process answers. `GET /readyz`: it can take payments, or 503 with the reasons why not. */
export function registerHealthRoutes(app: FastifyInstance, readiness: Readiness): void {
  app.get('/healthz', { logLevel: 'silent' }, () => ({ status: 'ok' }));
  app.get('/readyz', { logLevel: 'silent' }, async (request, reply) => {
    const report = await readiness.check();
    if (!report.ready) request.log.warn({ reasons: report.reasons }, 'not ready');
    return reply
      .status(report.ready ? 200 : 503)
      .send({ status: report.ready ? 'ready' : 'not_ready', checks: report.checks, reasons: report.reasons });
  });
}
