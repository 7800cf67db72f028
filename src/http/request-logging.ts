import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';

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
export const requestLoggingOptions: Pick<FastifyServerOptions, 'genReqId' | 'requestIdHeader' | 'childLoggerFactory'> =
  {
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
