import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyError } from 'fastify';
import type { SandboxContext } from './sandbox-context';
import { codeForStatus, errorBody, UNAUTHENTICATED } from './sandbox-errors';
import { Lifecycle } from './lifecycle';
import { MerchantInbox } from './merchant-inbox';
import { MERCHANT_NOTIFICATIONS_PATH, registerMerchantRoutes } from './merchant-routes';
import { BANK_CREDIT_PATH, CARD_PATH, MOBILE_MONEY_PATH, registerProviderRoutes } from './provider-routes';
import { redactBody, RequestLog } from './request-log';
import { registerSandboxRoutes } from './sandbox-routes';
import { TransactionStore } from './store';
import { Timers } from './timers';

export interface SandboxOptions {
  /** Bearer token it accepts, on its provider API and its ledger and request log. */
  token: string;
  /** Wait before a callback (and before auto3ds settles 3-D Secure). */
  callbackDelayMs: number;
  /** Settle 3-D Secure without a browser after callbackDelayMs. */
  auto3ds?: 'approve' | 'decline';
  /** Scenario 55 answers after this. */
  slowResponseMs: number;
  /** Base for threeds_url; defaults to the listening URL. */
  publicUrl?: string;
  /** JSON file keeping transactions and undelivered callbacks across restarts. */
  dataFile?: string;
  /** Defaults to 127.0.0.1. */
  host?: string;
  /** Defaults to 4010; 0 picks a free port. */
  port?: number;
  /** Fastify's request logger; bodies (card data) are never logged. */
  logger?: boolean;
  /** The secrets the sandbox's merchant verifies notifications with (the merchant's MERCHANT_WEBHOOKS secrets). */
  notificationSecrets?: string[];
}

export interface Sandbox {
  /** Where it listens, e.g. `http://127.0.0.1:4010`. */
  url: string;
  /** Changes callbackDelayMs for transactions started from now on. */
  setCallbackDelay(ms: number): void;
  /** Succeeds a transaction without calling back, as a provider that settles late would (tests, the corpus). */
  succeedSilently(transactionId: number): boolean;
  close(): Promise<void>;
}

const INITIATION_PATHS = new Set([MOBILE_MONEY_PATH, CARD_PATH, BANK_CREDIT_PATH]);

/**
 * The provider API, the sandbox's ledger and request log (callback URLs with their tokens, names, phone numbers) and
 * the merchant's inbox need the bearer token; the payer's 3-D Secure pages are open, and notifications are checked
 * by their signature instead.
 */
function needsToken(url: string, method: string): boolean {
  if (url === MERCHANT_NOTIFICATIONS_PATH && method === 'POST') return false;
  return (
    url.startsWith('/api/') ||
    url.startsWith('/merchant/') ||
    (url.startsWith('/sandbox/') && !url.startsWith('/sandbox/3ds/'))
  );
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function listeningUrl(address: AddressInfo): string {
  const host = ['0.0.0.0', '::'].includes(address.address) ? '127.0.0.1' : address.address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/** Starts the sandbox provider and resolves once it listens. */
export async function createSandbox(options: SandboxOptions): Promise<Sandbox> {
  const app = Fastify({ logger: options.logger ?? false });
  const timers = new Timers((error) => app.log.error(error, 'sandbox background task failed'));
  const store = new TransactionStore(options.dataFile);
  const requests = new RequestLog();
  const lifecycle = new Lifecycle(store, timers, options.callbackDelayMs, options.auto3ds);
  let url = '';
  const context: SandboxContext = {
    store,
    requests,
    lifecycle,
    timers,
    slowResponseMs: options.slowResponseMs,
    publicUrl: () => (options.publicUrl ?? url).replace(/\/+$/, ''),
  };

  await app.register(formbody);

  app.addHook('onRequest', (request, _reply, done) => {
    if (request.method === 'POST' && INITIATION_PATHS.has(request.routeOptions.url ?? '')) {
      requests.record(request, request.method, request.url, request.headers['content-type']);
    }
    done();
  });
  app.addHook('onRequest', async (request, reply) => {
    // The matched route's pattern, so no spelling of a path (encoded, doubled slashes) slips past the check.
    if (!needsToken(request.routeOptions.url ?? request.url, request.method)) return undefined;
    if (bearerMatches(request.headers.authorization, options.token)) return undefined;
    return reply.code(401).send(UNAUTHENTICATED);
  });
  app.addHook('preHandler', (request, _reply, done) => {
    const entry = requests.entryFor(request);
    if (entry) entry.body = redactBody(request.body ?? {});
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const entry = requests.entryFor(request);
    if (entry) entry.response_status = reply.statusCode;
    done();
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status =
      error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error(error);
    const message = status === 500 ? 'Internal server error' : error.message;
    return reply.code(status).send(errorBody(codeForStatus(status), message));
  });

  registerProviderRoutes(app, context);
  registerSandboxRoutes(app, context);
  registerMerchantRoutes(app, new MerchantInbox(), options.notificationSecrets ?? [], timers);

  await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 4010 });
  url = listeningUrl(app.server.address() as AddressInfo);
  lifecycle.resume();

  return {
    url,
    setCallbackDelay: (ms) => lifecycle.setDelay(ms),
    succeedSilently: (transactionId) => store.succeedSilently(transactionId),
    close: async () => {
      timers.close();
      store.save();
      await app.close();
    },
  };
}
