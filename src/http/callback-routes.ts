import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { CallbackReason, ServerMetricSet } from '../metrics/server-metrics';
import { parseCallback } from '../provider/wire';
import type { PaymentCommands } from '../payments/payment-commands';
import type { CallbackTokens } from '../crypto/callback-tokens';
import { CALLBACK_ROUTE } from '../crypto/callback-tokens';
import { ApiError } from './http-errors';
import { always, malformed, paymentId, temporal } from './route-parts';
import { registerRoutes, route } from './route-spec';
import type { RouteContext } from './route-spec';

export interface CallbackRouteDeps {
  payments: PaymentCommands;
  tokens: CallbackTokens;
  metrics: ServerMetricSet;
  /** CALLBACK_ALLOW_GET: callbacks by query string too. Off, GET answers 405 before the token is looked at. */
  callbackAllowGet?: boolean;
}

interface CallbackState {
  flood: CallbackBudget;
  /** Each request's reason, counted once its answer is sent (errors included, also those raised before the handler). */
  reasons: WeakMap<FastifyRequest, CallbackReason>;
}

const callbackReceived = z.object({ received: z.literal(true) }).meta({ id: 'CallbackReceived' });

/** The provider's callback route, with a body in any encoding (POST) or, when allowed, by query string (GET). */
function callbackRoute(method: 'GET' | 'POST') {
  return route(
    {
      operationId: method === 'POST' ? 'providerCallback' : 'providerCallbackByQuery',
      method,
      path: CALLBACK_ROUTE,
      tag: 'Provider callbacks',
      summary: 'Not for merchants: the provider reports a transaction',
      description:
        'The URL the worker hands the provider at initiation, with an expiring HMAC token of the payment id. Fields ' +
        'are read tolerantly from JSON, a form or the query string. Accepted callbacks are checked by the payment ' +
        'workflow, and confirmed by the status query where one is configured, before they settle anything.' +
        (method === 'GET' ? ' Only with CALLBACK_ALLOW_GET=true; otherwise 405 with `Allow: POST`.' : ''),
      auth: 'url_token',
      // A key id, an expiry and a MAC (crypto/callback-tokens.ts), the characters they hold.
      params: z.object({ paymentId, token: z.string().regex(/^[A-Za-z0-9._-]{1,200}$/) }),
      ...(method === 'POST'
        ? {
            body: {
              id: 'ProviderCallback',
              schema: () => z.record(z.string(), z.unknown()),
              examples: { success: { transaction_id: '100231', status: '1', message: 'Approved', amount: 12.5 } },
              alsoAccepts: ['application/x-www-form-urlencoded', 'text/plain'],
              required: false,
              unchecked: true,
            },
          }
        : {}),
      answers: {
        200: { description: 'Accepted (duplicates too).', schema: callbackReceived, example: { received: true } },
      },
      errors: {
        400: ['unparseable_callback', ...malformed],
        404: ['not_found'],
        ...(method === 'GET' ? { 405: ['method_not_allowed'] } : {}),
        410: ['callback_expired'],
        413: ['payload_too_large'],
        429: ['too_many_callbacks'],
        ...always,
        ...temporal,
      },
    },
    {
      verify: ({ paymentId, token }, { tokens, reasons }: CallbackRouteDeps & CallbackState, request) => {
        if (tokens.verify(paymentId, token)) return;
        reasons.set(request, 'bad_token');
        throw unknownPayment();
      },
      handle: async ({ params: { paymentId }, body, request }, { payments, flood, reasons }) => {
        const callback = parseCallback({ ...(isRecord(request.query) ? request.query : {}), ...bodyFields(body) });
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
          // Past LATE_CALLBACK_WINDOW after the payment's workflow closed (or closed without an outcome): not recorded.
          reasons.set(request, 'payment_closed');
          request.log.warn(
            log,
            'callback for a payment closed longer than its late-callback window; its URL has expired',
          );
          throw new ApiError(410, 'callback_expired', 'this payment no longer takes callbacks');
        }
        reasons.set(request, 'accepted');
        request.log.info(log, 'callback accepted');
        return { received: true };
      },
    },
  );
}

/** The provider's callback routes, in the order the OpenAPI document lists them. */
export const CALLBACK_ROUTES = [callbackRoute('POST'), callbackRoute('GET')];

/** Provider callbacks, in whatever encoding they come, turned into signals to the payment's workflow. */
export function registerCallbackRoutes(app: FastifyInstance, deps: CallbackRouteDeps & RouteContext): void {
  const state: CallbackState = { flood: new CallbackBudget(), reasons: new WeakMap() };
  app.addHook('onResponse', async (request, reply) => {
    deps.metrics.callback(state.reasons.get(request) ?? reasonOfStatus(reply.statusCode));
  });
  if (deps.callbackAllowGet) return registerRoutes(app, CALLBACK_ROUTES, { ...deps, ...state });
  registerRoutes(
    app,
    CALLBACK_ROUTES.filter((callback) => callback.method === 'POST'),
    { ...deps, ...state },
  );
  // A URL that settles on GET settles from a browser, a link preview or a proxy log: POST only unless allowed.
  app.get(CALLBACK_ROUTE, async (_request, reply) => {
    void reply.header('allow', 'POST');
    throw new ApiError(405, 'method_not_allowed', 'callbacks are taken by POST only');
  });
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
