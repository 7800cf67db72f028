import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { LogController } from 'fastify';
import type { FastifyInstance, FastifyRequest, FastifyServerOptions } from 'fastify';

const REQUEST_ID = /^[\w.:-]{1,128}$/;
const PAYMENT_PATH = /^\/v1\/(?:payments|callbacks)\/([^/?]+)/;

/** The caller's `x-request-id` when it is a sane token, else a fresh UUID. */
function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * Fastify options that tie every log line of a request to its request id and, for a payment's URL, to the payment
 * and its workflow (the payment id is the workflow id).
 */
export const requestLoggingOptions: Pick<
  FastifyServerOptions,
  'genReqId' | 'requestIdHeader' | 'childLoggerFactory' | 'logController'
> = {
  logController: new (class extends LogController {
    // Written by logIncomingRequests instead: inside the request's span, when tracing is on.
    override incomingRequest(): void {}
  })(),
  requestIdHeader: false,
  genReqId: requestId,
  childLoggerFactory(logger, bindings, options, req) {
    const match = PAYMENT_PATH.exec(req.url ?? '');
    if (!match?.[1]) return logger.child(bindings, options);
    let paymentId: string;
    try {
      paymentId = decodeURIComponent(match[1]);
    } catch {
      paymentId = match[1];
    }
    return logger.child({ ...bindings, paymentId, workflowId: paymentId }, options);
  },
};

/** Answers every request with its `x-request-id`, so a caller can quote it. */
export function echoRequestId(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
}

/** The first line of a request: its method, URL and id. */
export function logIncoming(request: FastifyRequest): void {
  request.log.info({ req: request }, 'incoming request');
}

/**
 * Writes each request's `incoming request` line from an `onRequest` hook, added after tracing's (telemetry/tracing.ts):
 * with tracing on, the request's span has started, so this line carries its trace id as every later one does.
 */
export function logIncomingRequests(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    logIncoming(request);
    done();
  });
}
