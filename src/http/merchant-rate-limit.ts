import rateLimit from '@fastify/rate-limit';
import type { FastifyRateLimitStore, RateLimitPluginOptions } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './http-errors';
import { merchantOf } from './route-spec';

/** Counts requests under a key in fixed windows, in a store every server shares (Redis). */
export interface RateCounter {
  /** Counts one request; answers the window's count so far and the milliseconds until the window ends. */
  hit(key: string, windowMs: number): Promise<{ count: number; ttlMs: number }>;
}

export interface MerchantRateLimit {
  counter: RateCounter;
  /** Requests a merchant may make per window; 0 is no limit (MERCHANT_RATE_LIMITS). */
  limitFor: (merchantId: string) => number;
  windowMs: number;
}

/**
 * Limits each merchant's requests with @fastify/rate-limit, counted per merchant (all its keys together) in the
 * shared counter. Checked once the route has authenticated the caller and before the body is read: every answer to
 * a merchant carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`, and one past the limit is a
 * `429` (`rate_limited`) with `Retry-After`. Operators, callbacks and unauthenticated requests are not counted. A
 * counter that fails lets requests through (logged): the limit protects the service, it must not take it down.
 */
export function limitMerchantRequests(app: FastifyInstance, settings: MerchantRateLimit): void {
  const options: RateLimitPluginOptions = {
    global: false,
    enableDraftSpec: true,
    skipOnError: true,
    store: counterStore(settings.counter, (err) =>
      app.log.warn({ err }, 'rate limit: the counter failed; let through'),
    ),
    keyGenerator: (request) => `merchant:${merchantOf(request) ?? ''}`,
    allowList: (request) => {
      const merchant = merchantOf(request);
      return merchant === undefined || settings.limitFor(merchant) === 0;
    },
    max: (request) => settings.limitFor(merchantOf(request) ?? ''),
    timeWindow: settings.windowMs,
    errorResponseBuilder: (_request, context) =>
      new ApiError(429, 'rate_limited', `too many requests: ${context.max} per window; retry in ${context.after}`),
  };
  void app.register(rateLimit, options);
  let check: ((request: FastifyRequest, reply: FastifyReply) => Promise<void>) | undefined;
  // preParsing: after the route's onRequest hook has found the caller, before a body is read.
  app.addHook('preParsing', async (request, reply) => {
    if (merchantOf(request) === undefined) return;
    check ??= app.rateLimit() as unknown as (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    await check(request, reply);
  });
}

/** The plugin's store on a RateCounter: one counter for every route, so a merchant's requests count together. */
function counterStore(counter: RateCounter, onError: (err: unknown) => void): RateLimitPluginOptions['store'] {
  return class CounterStore implements FastifyRateLimitStore {
    incr(
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      windowMs: number,
    ) {
      counter.hit(key, windowMs).then(
        ({ count, ttlMs }) => callback(null, { current: count, ttl: ttlMs }),
        (err: unknown) => {
          onError(err);
          callback(err instanceof Error ? err : new Error(String(err)));
        },
      );
    }
    child(): FastifyRateLimitStore {
      return this;
    }
  };
}
