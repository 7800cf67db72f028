import type { FastifyInstance } from 'fastify';
import type { Readiness } from '../payments/readiness';
import { ROUTES } from './api-spec';
import { RETRY_AFTER_SECONDS } from './errors';
import { route } from './route-spec';

/**
 * `GET /healthz`: the process answers. `GET /readyz`: it can take payments, or 503 with the failed checks' fixed
 * reasons; what they ran into (upstream error texts) goes to the log only.
 */
export function registerHealthRoutes(app: FastifyInstance, readiness: Readiness): void {
  route(app, ROUTES.healthz, () => ({ status: 'ok' }), { logLevel: 'silent' });
  route(
    app,
    ROUTES.readyz,
    async (_request, reply) => {
      const report = await readiness.check();
      // The route's own logger is silent (probes poll it); a failed check is still worth a line.
      if (!report.ready) {
        app.log.warn({ reasons: report.reasons, details: report.details }, 'not ready');
        void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
      }
      return reply
        .status(report.ready ? 200 : 503)
        .send({ status: report.ready ? 'ready' : 'not_ready', checks: report.checks, reasons: report.reasons });
    },
    { logLevel: 'silent' },
  );
}
