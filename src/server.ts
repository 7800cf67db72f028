import { BankDirectory } from './banks/directory';
import { loadConfigOrExit } from './config/config-loading';
import {
  callbackTokenSettings,
  providerConfig,
  publicBaseUrl,
  serverSchema,
  vaultKeyring,
} from './config/process-settings';
import type { ServerConfig } from './config/process-settings';
import type { PaymentTiming } from './domain/payment-model';
import type { PaymentType } from './domain/requests';
import { buildApp, loggerOptions } from './http/api-app';
import { ApiKeys } from './http/auth';
import { connectRedisRateCounter } from './http/redis-rate-counter';
import { CallbackTokens } from './crypto/callback-tokens';
import { createProviderClient } from './provider/provider-client';
import { Batches } from './payments/payout-batches';
import { createServerMetrics, serveMetrics } from './metrics/server-metrics';
import { connectClient } from './temporal/temporal-client';
import { EncryptionCodec } from './temporal/codec';
import { PaymentCommands } from './payments/payment-commands';
import { PaymentExports } from './payments/payment-exports';
import { PaymentReads } from './payments/payment-reads';
import { Notifications } from './payments/notification-deliveries';
import { MerchantAccounts } from './payments/merchant-accounts';
import { MerchantEndpoints } from './payments/merchant-endpoints';
import { MerchantKeyDirectory } from './payments/merchant-key-directory';
import { Readiness } from './payments/readiness';
import { createRedisVault } from './vault/redis-vault';
import { StartMigrations, openDatabase } from './records/database';
import { internalUrlProblem } from './domain/merchant-resources';
import { activeTracing, startTracing } from './telemetry/tracing';

/** Per-type callback waits and reconciliation window, from configuration. */
export function timingFor(config: ServerConfig): (type: PaymentType) => PaymentTiming {
  const callbackTimeout = {
    mobile_money_debit: config.CALLBACK_TIMEOUT_MOBILE_MONEY,
    card_payment: config.CALLBACK_TIMEOUT_CARD,
    bank_credit: config.CALLBACK_TIMEOUT_BANK_CREDIT,
  };
  return (type) => ({
    callbackTimeoutMs: callbackTimeout[type],
    reconcileForMs: config.RECONCILE_FOR,
    reconcileIntervalMs: config.RECONCILE_INTERVAL,
  });
}

/** Starts the HTTP server on the configured port; resolves once it listens. `logStream` captures logs (tests). */
export async function startServer(config: ServerConfig, logStream?: NodeJS.WritableStream) {
  const client = await connectClient(config);
  // A request waits on PostgreSQL at most this long, so that with it frozen a POST still answers 503 within 2 s.
  const records = openDatabase(config.DATABASE_URL, { applicationName: 'payments-server', queryTimeoutMs: 1_500 });
  // Exports stream for as long as the client reads: a pool of their own, without the request's time limit.
  const exportRecords = openDatabase(config.DATABASE_URL, { applicationName: 'payments-exports', max: 4 });
  const migrations = new StartMigrations(records, (err) =>
    app.log.warn({ err }, 'records: PostgreSQL is unreachable; the schema is migrated once it is back'),
  );
  // An idle connection dropped by a PostgreSQL restart: the pool replaces it; the next query says if it is down. Only
  // the error's words: pg hangs the connection on it (its parameters and the backend's cancel key).
  records.on('error', (err: Error & { code?: string }) =>
    app.log.warn({ error: err.message, code: err.code }, 'records: a PostgreSQL connection failed'),
  );
  const cardVault = await createRedisVault({ url: config.VAULT_URL, keyring: vaultKeyring(config) });
  const rateCounter = await connectRedisRateCounter(
    config.VAULT_URL,
    `${client.options.namespace}/${config.TASK_QUEUE}`,
  );
  const tokens = new CallbackTokens(callbackTokenSettings(config), publicBaseUrl(config));
  const timing = timingFor(config);
  const paymentReads = new PaymentReads(client, { taskQueue: config.TASK_QUEUE, records });
  const payments = new PaymentCommands(client, paymentReads, {
    taskQueue: config.TASK_QUEUE,
    signingKeys: config.SIGNING_KEYS,
    creation: {
      fingerprintSecret: config.FINGERPRINT_SECRET,
      timingFor: timing,
      initiationWaitMs: config.INITIATION_WAIT,
      cardVault,
      records,
      approvalThresholds: config.APPROVAL_THRESHOLDS,
      approvalWindowMs: config.APPROVAL_WINDOW,
    },
    actions: records,
    lateCallbacks: { records, windowMs: config.LATE_CALLBACK_WINDOW },
  });
  const batches = new Batches(client, {
    signingKeys: config.SIGNING_KEYS,
    creation: {
      taskQueue: config.TASK_QUEUE,
      fingerprintSecret: config.FINGERPRINT_SECRET,
      bankCreditTiming: timing('bank_credit'),
      concurrency: config.BATCH_CONCURRENCY,
      pageSize: config.BATCH_PAGE_SIZE,
      maxRunEvents: config.BATCH_RUN_MAX_EVENTS,
      itemCheckMs: config.BATCH_ITEM_CHECK_INTERVAL,
      halt: {
        window: config.BATCH_HALT_WINDOW,
        failureShare: config.BATCH_HALT_FAILURE_SHARE,
        providerErrors: config.BATCH_HALT_PROVIDER_ERRORS,
      },
      records,
      approvalThresholds: config.APPROVAL_THRESHOLDS,
      approvalWindowMs: config.APPROVAL_WINDOW,
    },
    records,
    actions: records,
  });
  const provider = createProviderClient(providerConfig(config));
  const banks = new BankDirectory({
    load: () => provider.listBanks(),
    refreshMs: config.BANK_LIST_REFRESH,
    onRefreshFailed: (err) => app.log.warn({ err }, 'bank list refresh failed; keeping the previous list'),
  });
  // Keys and merchants in PostgreSQL beside those of the environment (docs/merchants.md): followed without a restart.
  const storedKeys = new MerchantKeyDirectory(records, {
    bootstrap: [...new Set(config.MERCHANT_API_KEYS.map((entry) => entry.merchantId))],
    onError: (err) => app.log.warn({ err }, 'merchants: the stored API keys cannot be read; keeping the last ones'),
  });
  const logger = loggerOptions(config.LOG_LEVEL, config.LOG_PRETTY);
  const metrics = createServerMetrics({
    labels: { namespace: client.options.namespace, task_queue: config.TASK_QUEUE },
    countInReview: () => paymentReads.countInReview(),
    onError: (err) => app.log.warn({ err }, 'metrics: cannot count the payments in review'),
  });
  const readiness = new Readiness(client, {
    namespace: client.options.namespace,
    taskQueue: config.TASK_QUEUE,
    providerCheck: () => banks.knownCodes(),
    records,
  });
  const app = buildApp({
    payments,
    paymentReads,
    batches,
    notifications: new Notifications(records),
    exports: new PaymentExports(exportRecords),
    banks,
    tokens,
    callbackAllowGet: config.CALLBACK_ALLOW_GET,
    keys: new ApiKeys(config.MERCHANT_API_KEYS, config.OPERATOR_API_KEYS, config.CODEC_TOKEN_SECRET, storedKeys),
    merchants: new MerchantAccounts(records, () => storedKeys.reload()),
    endpoints: new MerchantEndpoints(records),
    endpointUrlProblem: process.env.NODE_ENV === 'production' ? internalUrlProblem : () => undefined,
    rules: {
      voucherChannels: config.VOUCHER_CHANNELS,
      now: () => new Date(),
      maxAmount: config.MERCHANT_MAX_AMOUNTS,
      batchUploadLimitBytes: config.BATCH_UPLOAD_LIMIT_BYTES,
    },
    logger: logStream && typeof logger === 'object' ? { ...logger, stream: logStream } : logger,
    metrics,
    readiness,
    // Operators look at whatever a history holds, plain payloads refused by the worker included.
    codec: {
      codec: new EncryptionCodec(config.ENCRYPTION_KEYS, { acceptUnencrypted: true }),
      corsOrigins: config.CODEC_CORS_ORIGINS,
    },
    publicBaseUrl: publicBaseUrl(config),
    rateLimit: { counter: rateCounter, limitFor: config.MERCHANT_RATE_LIMITS, windowMs: config.RATE_LIMIT_WINDOW },
    instrument: activeTracing()?.instrumentFastify,
  });
  await migrations.start();
  await storedKeys.start();
  await app.listen({ port: config.PORT, host: config.HOST });
  const metricsServer = await serveMetrics(metrics.registry, config.METRICS_PORT, config.METRICS_HOST);
  return {
    app,
    payments,
    metricsPort: metricsServer.port,
    close: async () => {
      await app.close();
      storedKeys.stop();
      await provider.close();
      await metricsServer.close();
      await client.connection.close();
      await cardVault.close();
      await rateCounter.close();
      migrations.stop();
      await records.end();
      await exportRecords.end();
    },
  };
}

if (require.main === module) {
  const config = loadConfigOrExit(serverSchema, 'server');
  // Tracing first: the server's HTTP app and Temporal client pick it up when it is on.
  const started = startTracing({ serviceName: 'payments-server' }).then(() => startServer(config));
  started.then(
    (server) => {
      const stop = () =>
        void server.close().then(async () => {
          await activeTracing()?.shutdown();
          process.exit(0);
        });
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    },
    (err: unknown) => {
      process.stderr.write(`server: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
