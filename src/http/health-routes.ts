import { z } from 'zod';
import type { Readiness } from '../payments/readiness';
import { RETRY_AFTER_SECONDS } from './http-errors';
import { always } from './route-parts';
import { route } from './route-spec';

// `GET /healthz`: the process answers. `GET /readyz`: it can take payments, or 503 with the failed checks' fixed
// reasons; what they ran into (upstream error texts) goes to the log only. Probes poll both: their lines are silent.

export interface HealthRouteDeps {
  readiness: Readiness;
}

const readiness = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    checks: z.object({ temporal: z.boolean(), worker: z.boolean(), provider: z.boolean(), postgres: z.boolean() }),
    reasons: z.array(z.string()),
  })
  .meta({ id: 'Readiness' });

const healthz = route(
  {
    operationId: 'healthz',
    method: 'GET',
    path: '/healthz',
    tag: 'Health',
    summary: 'Liveness: the process answers',
    auth: 'none',
    answers: {
      200: {
        description: 'Alive.',
        schema: z.object({ status: z.literal('ok') }).meta({ id: 'Liveness' }),
        example: { status: 'ok' },
      },
    },
    errors: always,
    options: { logLevel: 'silent' },
  },
  () => ({ status: 'ok' }),
);

const readyz = route(
  {
    operationId: 'readyz',
    method: 'GET',
    path: '/readyz',
    tag: 'Health',
    summary: 'Readiness: Temporal reachable, a worker polling, the provider answering, PostgreSQL answering',
    auth: 'none',
    answers: {
      200: {
        description: 'Ready.',
        schema: readiness,
        example: {
          status: 'ready',
          checks: { temporal: true, worker: true, provider: true, postgres: true },
          reasons: [],
        },
      },
      503: {
        description: 'Not ready: the failed checks with fixed reasons.',
        schema: readiness,
        headers: { 'retry-after': 'seconds to wait before asking again' },
        example: {
          status: 'not_ready',
          checks: { temporal: true, worker: false, provider: true, postgres: true },
          reasons: ['worker: no workflow or activity poller on the task queue'],
        },
      },
    },
    errors: always,
    options: { logLevel: 'silent' },
  },
  async ({ request, reply }, deps: HealthRouteDeps) => {
    const report = await deps.readiness.check();
    // The route's own logger is silent; a failed check is still worth a line.
    if (!report.ready) {
      request.server.log.warn({ reasons: report.reasons, details: report.details }, 'not ready');
      void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
    }
    return reply
      .status(report.ready ? 200 : 503)
      .send({ status: report.ready ? 'ready' : 'not_ready', checks: report.checks, reasons: report.reasons });
  },
);

/** The probes' routes. */
export const HEALTH_ROUTES = [healthz, readyz];
