import formbody from '@fastify/formbody';
import type { PayloadCodec } from '@temporalio/common';
import Fastify from 'fastify';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { BankDirectory } from '../banks/directory';
import type { RequestRules } from '../domain/requests';
import type { Batches } from '../payments/payout-batches';
import { baseLoggerOptions } from '../logging';
import type { ServerMetricSet } from '../metrics/server-metrics';
import type { PaymentCommands } from '../payments/payment-commands';
import type { PaymentExports } from '../payments/payment-exports';
import type { PaymentReads } from '../payments/payment-reads';
import type { Notifications } from '../payments/notification-deliveries';
import type { Readiness } from '../payments/readiness';
import type { MerchantAccounts } from '../payments/merchant-accounts';
import type { MerchantEndpoints } from '../payments/merchant-endpoints';
import type { ApiKeys } from './auth';
import { registerCallbackRoutes } from './callback-routes';
import { registerCodecRoutes } from './codec-routes';
import { personalFieldNames } from '../domain/personal-data';
import { hideUrlTokens } from '../crypto/url-tokens';
import type { CallbackTokens } from '../crypto/callback-tokens';
import { ApiError, errorHandler } from './http-errors';
import { answerUnknownRoutes, protocolOptions, refuseLongUrls } from './protocol-answers';
import { APPROVAL_ROUTES } from './approval-routes';
import { BATCH_ROUTES } from './batch-routes';
import { EXPORT_ROUTES } from './export-routes';
import { registerDocsRoutes } from './docs-routes';
import { EVENT_ROUTES } from './event-routes';
import { openApiDocument } from './openapi-document';
import { HEALTH_ROUTES } from './health-routes';
import { OPERATOR_ROUTES } from './operator-routes';
import { MERCHANT_ROUTES } from './merchant-account-routes';
import { WEBHOOK_ENDPOINT_ROUTES } from './webhook-endpoint-routes';
import { PAYMENT_ROUTES } from './payment-routes';
import { registerRoutes } from './route-spec';
import { echoRequestId, logIncomingRequests, requestLoggingOptions } from './request-logging';
import { measureRequests } from './request-metrics';
import { limitMerchantRequests } from './merchant-rate-limit';
import type { MerchantRateLimit } from './merchant-rate-limit';

export interface AppDeps {
  payments: PaymentCommands;
  paymentReads: PaymentReads;
  batches: Batches;
  /** Merchants' notification events, from the outbox. */
  notifications: Notifications;
  /** The CSV exports' rows, streamed from the records. */
  exports: PaymentExports;
  banks: BankDirectory;
  keys: ApiKeys;
  /** Merchants and their keys, for operators. */
  merchants: MerchantAccounts;
  /** Merchants' own webhook endpoints. */
  endpoints: MerchantEndpoints;
  /** Why an endpoint URL is refused (production: https to a public host only); absent: any http(s) URL. */
  endpointUrlProblem?: (url: string) => string | undefined;
  tokens: CallbackTokens;
  /** Takes provider callbacks by GET too (CALLBACK_ALLOW_GET); otherwise GET answers 405. */
  callbackAllowGet?: boolean;
  rules: RequestRules;
  logger: FastifyServerOptions['logger'];
  metrics: ServerMetricSet;
  readiness: Readiness;
  /** The payload codec operators decode Temporal's history with, and the browser origins allowed to use it. */
  codec: { codec: PayloadCodec; corsOrigins: readonly string[] };
  /** Where the server is reached from outside (the Web UI's codec URLs start with it). */
  publicBaseUrl: string;
  /** Each merchant's request limit (MERCHANT_RATE_LIMITS per RATE_LIMIT_WINDOW); absent: no limit. */
  rateLimit?: MerchantRateLimit;
  /** Request tracing (telemetry/tracing.ts), added before any route; absent when tracing is off. */
  instrument?: (app: FastifyInstance) => void;
}

const BODY_LIMIT = 64 * 1024;

/** A method and path the app serves. */
export interface RegisteredRoute {
  method: string;
  url: string;
}

const registered = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/** Every route an app built by buildApp registered (HEAD routes included), once it is ready. */
export function registeredRoutes(app: FastifyInstance): readonly RegisteredRoute[] {
  return registered.get(app) ?? [];
}

// Card and personal data (domain/personal-data.ts): censored wherever a log call might include them.
const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  ...personalFieldNames().flatMap((field) => [field, `*.${field}`]),
];

/** Builds the HTTP server: merchant API, provider callbacks, health. */
export function buildApp(deps: AppDeps): FastifyInstance {
  const app = Fastify({
    logger: deps.logger,
    bodyLimit: BODY_LIMIT,
    return503OnClosing: false,
    ...requestLoggingOptions,
    ...protocolOptions,
  });
  deps.instrument?.(app);
  logIncomingRequests(app);
  measureRequests(app, deps.metrics);
  const routes: RegisteredRoute[] = [];
  app.addHook('onRoute', (options) => {
    for (const method of [options.method].flat()) routes.push({ method, url: options.url });
  });
  registered.set(app, routes);
  // While the server closes: a 503 in the error envelope, with Retry-After, instead of fastify's own answer.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (_request, _reply, done) => {
    done(closing ? new ApiError(503, 'unavailable', 'the server is shutting down; try again') : undefined);
  });
  echoRequestId(app);
  if (deps.rateLimit) limitMerchantRequests(app, deps.rateLimit);
  app.setErrorHandler(errorHandler);
  refuseLongUrls(app);
  answerUnknownRoutes(app, () => routes);
  registerRoutes(app, HEALTH_ROUTES, deps);
  registerRoutes(app, PAYMENT_ROUTES, deps);
  registerRoutes(app, BATCH_ROUTES, deps);
  registerRoutes(app, APPROVAL_ROUTES, deps);
  registerRoutes(app, EVENT_ROUTES, deps);
  registerRoutes(app, EXPORT_ROUTES, deps);
  registerRoutes(app, OPERATOR_ROUTES, deps);
  registerRoutes(app, MERCHANT_ROUTES, deps);
  registerRoutes(app, WEBHOOK_ENDPOINT_ROUTES, deps);
  registerDocsRoutes(app, openApiDocument({ serverUrl: deps.publicBaseUrl, rules: deps.rules }), deps);
  // Callbacks come in an undocumented format: accept forms and any text, in their own scope only.
  void app.register(async (scope) => {
    await scope.register(formbody);
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    registerCallbackRoutes(scope, deps);
  });
  void app.register((scope, _options, done) => {
    registerCodecRoutes(scope, { ...deps, ...deps.codec });
    done();
  });
  return app;
}

/** Logger options shared by the processes: secrets and callback tokens never reach a log line. */
export function loggerOptions(level: string, pretty: boolean): FastifyServerOptions['logger'] {
  return {
    ...baseLoggerOptions(level, pretty),
    // Not pino's `name`: a top-level `name` is a person's and is censored; the process goes in its own field.
    base: { process: 'server' },
    redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
    serializers: {
      req: (req: { method: string; url: string; id: string }) => ({
        method: req.method,
        url: hideUrlTokens(req.url),
        id: req.id,
      }),
    },
  };
}
