import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { CallbackReason, ServerMetricSet } from '../metrics/server-metrics';
import { parseCallback } from '../provider/callback';
import type { Payments } from '../payments/payments';
import type { CallbackTokens } from '../crypto/callback-tokens';
import { ROUTES } from './api-spec';
import { ApiError } from './errors';
import { route } from './route-spec';

export interface CallbackRouteDeps {
  payments: Payments;
  tokens: CallbackTokens;
  metrics: ServerMetricSet;
}

interface CallbackParams {
  paymentId: string;
  token: string;
}

/** Provider callbacks, in whatever encoding they come, turned into signals to the payment's workflow. */
export function registerCallbackRoutes(app: FastifyInstance, { payments, tokens, metrics }: CallbackRouteDeps): void {
  const flood = new CallbackBudget();
  // Each request's reason, counted once its answer is sent (errors included, also those raised before the handler).
  const reasons = new WeakMap<FastifyRequest, CallbackReason>();
  const handler = async (request: FastifyRequest<{ Params: CallbackParams }>) => {
    const { paymentId, token } = request.params;
    if (!tokens.verify(paymentId, token)) {
      reasons.set(request, 'bad_token');
      throw unknownPayment();
    }
    const callback = parseCallback(callbackFields(request));
    if (!callback) throw new ApiError(400, 'unparseable_callback', 'no transaction status found in the callback');
    if (!flood.admit(paymentId)) {
      reasons.set(request, 'rate_limited');
      throw new ApiError(429, 'too_many_callbacks', 'too many callbacks for this payment; try again later');
    }
    const outcome = await payments.deliverCallback(paymentId, callback);
    if (outcome === 'unknown') {
      reasons.set(request, 'unknown_payment');
      throw unknownPayment();
    }
    const log = { paymentId, state: callback.state, statusCode: callback.statusCode };
    if (outcome === 'closed') {
      // The token lived as long as the payment's late-callback window; past it, nothing more is recorded.
      reasons.set(request, 'payment_closed');
      request.log.warn(log, 'callback for a payment whose workflow has closed; its callback URL has expired');
      throw new ApiError(410, 'callback_expired', 'this payment no longer takes callbacks');
    }
    reasons.set(request, 'accepted');
    request.log.info(log, 'callback accepted');
    return { received: true };
  };
  app.addHook('onResponse', async (request, reply) => {
    metrics.callback(reasons.get(request) ?? reasonOfStatus(reply.statusCode));
  });
  route(app, ROUTES.providerCallback, handler as RouteHandlerMethod);
  route(app, ROUTES.providerCallbackByQuery, handler as RouteHandlerMethod);
}

/** Callbacks one payment may send per minute: far above any provider's retries, far below a flood's. */
const CALLBACKS_PER_MINUTE = 30;

/**
 * A per-payment budget of callbacks (a fixed one-minute window), so a flood cannot grow a payment's history; each
 * accepted callback is still recorded, and repeats are coalesced by the workflow.
 */
class CallbackBudget {
  private window = 0;
  private counts = new Map<string, number>();

  admit(paymentId: string): boolean {
    const window = Math.floor(Date.now() / 60_000);
    if (window !== this.window) {
      this.window = window;
      this.counts = new Map();
    }
    const count = (this.counts.get(paymentId) ?? 0) + 1;
    this.counts.set(paymentId, count);
    return count <= CALLBACKS_PER_MINUTE;
  }
}

function reasonOfStatus(status: number): CallbackReason {
  if (status === 413) return 'too_large';
  if (status === 503) return 'temporal_unavailable';
  return status >= 400 && status < 500 ? 'unparseable' : 'error';
}

function unknownPayment(): ApiError {
  return new ApiError(404, 'not_found', 'unknown payment');
}

function callbackFields(request: FastifyRequest): Record<string, unknown> {
  const query = isRecord(request.query) ? request.query : {};
  return { ...query, ...bodyFields(request.body) };
}

function bodyFields(body: unknown): Record<string, unknown> {
  if (isRecord(body)) return body;
  if (typeof body !== 'string' || body.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(body);
    if (isRecord(parsed)) return parsed;
  } catch {
    // not JSON: try a form encoding below
  }
  return Object.fromEntries(new URLSearchParams(body));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
