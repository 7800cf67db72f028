// Which settings each process reads: the worker, the server and `npm start`, grouped by concern.
import { z } from 'zod';
import type { Keyring } from '../crypto/keyring';
import type { ProviderConfig } from '../provider/provider-client';
import { worstCaseCallMs } from '../provider/retry';
import { INITIATION_TIMEOUT_MS, VAULT_WAIT_MS } from '../domain/payment-model';
import { formatDuration } from '../domain/duration';
import type { CallbackKey, CallbackTokenSettings } from '../crypto/callback-tokens';
import { ALLOW_PLAINTEXT_LOOPBACK } from '../temporal/connection-settings';
import {
  approvalThresholds,
  commaList,
  databaseUrl,
  duration,
  optionalDays,
  flag,
  hostPort,
  keyring,
  maxAmounts,
  merchantKeys,
  merchantWebhooks,
  operatorKeyList,
  optional,
  port,
  rateLimits,
  secret,
  url,
  vaultUrl,
} from './setting-parsers';

/**
 * Where Temporal is and how the connection is secured: Temporal's own variables (@temporalio/envconfig), over the
 * TOML profile when TEMPORAL_CONFIG_FILE or TEMPORAL_PROFILE names one; address and namespace default to
 * localhost:7233 and default. Checked together by temporalSettingProblems (src/temporal/connection-settings.ts).
 */
export const temporalConnectionSettings = {
  TEMPORAL_ADDRESS: optional,
  TEMPORAL_NAMESPACE: optional,
  TEMPORAL_API_KEY: optional,
  TEMPORAL_TLS: z.enum(['true', 'false', '1', '0'], { error: 'must be true or false' }).optional(),
  TEMPORAL_TLS_CLIENT_CERT_PATH: optional,
  TEMPORAL_TLS_CLIENT_CERT_DATA: optional,
  TEMPORAL_TLS_CLIENT_KEY_PATH: optional,
  TEMPORAL_TLS_CLIENT_KEY_DATA: optional,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: optional,
  TEMPORAL_TLS_SERVER_CA_CERT_DATA: optional,
  TEMPORAL_TLS_SERVER_NAME: optional,
  TEMPORAL_PROFILE: optional,
  TEMPORAL_CONFIG_FILE: optional,
  [ALLOW_PLAINTEXT_LOOPBACK]: flag,
};

/** Where Temporal is and how payloads are encrypted: every process that talks to Temporal reads these. */
export const temporalSettings = {
  ...temporalConnectionSettings,
  TASK_QUEUE: z.string().min(1).default('payments'),
  ENCRYPTION_KEYS: keyring,
  /** Migration only: lets a worker read payloads written before encryption (otherwise refused). */
  ACCEPT_UNENCRYPTED_PAYLOADS: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
};

/** The system of record (PostgreSQL): the server and the worker read and write payments there (docs/records.md). */
export const databaseSettings = { DATABASE_URL: databaseUrl };

/** How long finished payment and batch records are kept (`records purge`); unset, forever. */
export const purgeSettings = { RECORDS_PURGE_AFTER: optionalDays };

/**
 * The card vault (Redis) and its own keys: card data is sealed with VAULT_KEYS, never with ENCRYPTION_KEYS, so
 * whoever decodes Temporal payloads (an operator in the Web UI) does not hold the card key. Required in production;
 * outside it, unset falls back to ENCRYPTION_KEYS (vaultKeyring).
 */
const vault = { VAULT_URL: vaultUrl, VAULT_KEYS: keyring.optional() };

/** The keys that seal card data in the vault: VAULT_KEYS, or (outside production, where it may be unset) ENCRYPTION_KEYS. */
export function vaultKeyring(config: { VAULT_KEYS?: Keyring; ENCRYPTION_KEYS: Keyring }): Keyring {
  return config.VAULT_KEYS ?? config.ENCRYPTION_KEYS;
}

/** What the server signs and the worker verifies: what starts, settles or resolves a payment or batch. */
const signing = { SIGNING_KEYS: keyring };

/** The operator CLI signs resolutions and batch controls only when it has SIGNING_KEYS; reading needs none. */
export const optionalSigningKeys = { SIGNING_KEYS: keyring.optional() };

/** How callback URLs are made: the worker derives them at initiation, the server checks them. */
const callbacks = {
  PUBLIC_BASE_URL: url.optional(),
  /** `id:base64key,…`: the first signs new callback tokens, every one verifies (rotation as SIGNING_KEYS). */
  CALLBACK_KEYS: keyring.optional(),
  /** Older single secret: verifies (key id `secret`), and signs only without CALLBACK_KEYS. */
  CALLBACK_SECRET: secret(32).optional(),
  CALLBACK_TOKEN_TTL: duration('7d'),
};

/** The key id a token made under CALLBACK_SECRET carries. */
const SECRET_KEY_ID = 'secret';

/** Refuses a configuration that cannot make or check callback tokens. */
function checkCallbackKeys(config: CallbackEnv, ctx: z.RefinementCtx): void {
  if (!config.CALLBACK_KEYS && !config.CALLBACK_SECRET) {
    ctx.addIssue({ code: 'custom', path: ['CALLBACK_KEYS'], message: 'is required (`key_id:base64_key`, …)' });
  }
  if (config.CALLBACK_SECRET && config.CALLBACK_KEYS?.byId.has(SECRET_KEY_ID)) {
    ctx.addIssue({
      code: 'custom',
      path: ['CALLBACK_KEYS'],
      message: `key id "${SECRET_KEY_ID}" is CALLBACK_SECRET's; name the key otherwise`,
    });
  }
}

type CallbackEnv = z.infer<z.ZodObject<typeof callbacks>>;

/** The callback token keys and lifetime: CALLBACK_KEYS in order, then CALLBACK_SECRET (which verifies only, if both). */
export function callbackTokenSettings(config: CallbackEnv): CallbackTokenSettings {
  const keys: CallbackKey[] = [...(config.CALLBACK_KEYS?.byId.values() ?? [])];
  if (config.CALLBACK_SECRET) keys.push({ id: SECRET_KEY_ID, key: config.CALLBACK_SECRET });
  return { keys, ttlMs: config.CALLBACK_TOKEN_TTL };
}

const provider = {
  PROVIDER_BASE_URL: url,
  PROVIDER_MOBILE_MONEY_BASE_URL: url.optional(),
  PROVIDER_TOKEN: secret(1),
  PROVIDER_STATUS_URL: z.string().includes('{transaction_id}').optional(),
  PROVIDER_STATUS_BY_REFERENCE_URL: z.string().includes('{reference}').optional(),
  PROVIDER_CONNECT_TIMEOUT: duration('5s'),
  PROVIDER_TIMEOUT: duration('20s'),
  PROVIDER_SAFE_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  PROVIDER_BANKS_URL: z.string().min(1).optional(),
};

const timing = {
  CALLBACK_TIMEOUT_MOBILE_MONEY: duration('5m'),
  CALLBACK_TIMEOUT_CARD: duration('15m'),
  CALLBACK_TIMEOUT_BANK_CREDIT: duration('30m'),
  RECONCILE_FOR: duration('1h'),
  RECONCILE_INTERVAL: duration('30s'),
  LATE_CALLBACK_WINDOW: duration('1h'),
};

/** Merchant notifications: where they go, and how long and how often the worker retries them. */
const notifications = {
  MERCHANT_WEBHOOKS: merchantWebhooks.default(new Map()),
  NOTIFICATION_RETRY_INITIAL: duration('1m'),
  NOTIFICATION_RETRY_MAX_INTERVAL: duration('1h'),
  NOTIFICATION_RETRY_FOR: duration('24h'),
  NOTIFICATION_TIMEOUT: duration('10s'),
};

const logging = {
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_PRETTY: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
};

const workerSettings = z.object({
  ...temporalSettings,
  ...databaseSettings,
  ...signing,
  ...callbacks,
  PORT: port(3000),
  ...provider,
  ...logging,
  WORKER_METRICS_ADDRESS: hostPort.default('127.0.0.1:9464'),
  WORKFLOW_BUNDLE_PATH: z.string().min(1).optional(),
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).max(100_000).default(60),
  /** Frames each error and promise of a workflow captures: 0 spares the worker a stack trace per promise. */
  WORKER_WORKFLOW_STACK_TRACE_LIMIT: z.coerce.number().int().min(0).max(100).default(0),
  ...vault,
  /** Worker Versioning: `on` runs the worker as build WORKER_BUILD_ID of deployment WORKER_DEPLOYMENT_NAME. */
  WORKER_VERSIONING: z.enum(['on', 'off']).default('off'),
  WORKER_DEPLOYMENT_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be 1-100 letters, digits, - or _')
    .default('payments'),
  WORKER_BUILD_ID: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be 1-100 letters, digits, -, _ or .')
    .optional(),
  ...notifications,
});

export const workerSchema = workerSettings.superRefine((config, ctx) => {
  checkCallbackKeys(config, ctx);
  // Temporal gives an initiation INITIATION_TIMEOUT_MS: a provider call allowed longer (after the initiation's wait
  // for the vault) would be cut off unanswered.
  const worst =
    VAULT_WAIT_MS +
    worstCaseCallMs({
      connectTimeoutMs: config.PROVIDER_CONNECT_TIMEOUT,
      requestTimeoutMs: config.PROVIDER_TIMEOUT,
      safeRetries: config.PROVIDER_SAFE_RETRIES,
    });
  if (worst >= INITIATION_TIMEOUT_MS) {
    ctx.addIssue({
      code: 'custom',
      path: ['PROVIDER_TIMEOUT'],
      message:
        `with PROVIDER_CONNECT_TIMEOUT, PROVIDER_TIMEOUT and PROVIDER_SAFE_RETRIES an initiation may take ` +
        `${Math.round(worst / 1000)} s, not under the ${INITIATION_TIMEOUT_MS / 1000} s it is given ` +
        `(${VAULT_WAIT_MS / 1000} s of it for the card vault): lower them`,
    });
  }
});

/** A batch's signed items stay valid 90 days: a start up to 30 days ahead and a window up to 30 days fit in them. */
const MAX_APPROVAL_WINDOW_MS = 30 * 24 * 3600_000;

export const serverSchema = z
  .object({
    ...temporalSettings,
    ...databaseSettings,
    ...timing,
    ...logging,
    PORT: port(3000),
    HOST: z.string().min(1).default('0.0.0.0'),
    METRICS_PORT: port(9465),
    METRICS_HOST: z.string().min(1).default('127.0.0.1'),
    ...signing,
    ...callbacks,
    MERCHANT_API_KEYS: merchantKeys,
    MERCHANT_MAX_AMOUNTS: maxAmounts,
    OPERATOR_API_KEYS: operatorKeyList,
    /** Signs the Web UI's expiring, decode-only codec tokens; unset, the Web UI codec path is off. */
    CODEC_TOKEN_SECRET: secret(32).optional(),
    FINGERPRINT_SECRET: secret(32),
    VOUCHER_CHANNELS: commaList
      .pipe(
        z.array(
          z
            .string()
            .regex(/^\d{1,6}$/, 'must be channel numbers separated by commas')
            .transform(Number),
        ),
      )
      .default([]),
    INITIATION_WAIT: duration('5s'),
    ...provider,
    BANK_LIST_REFRESH: duration('1h'),
    BATCH_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(20),
    BATCH_RUN_MAX_EVENTS: z.coerce.number().int().min(500).max(40_000).default(2000),
    // All a batch holds in memory, and one activity result in its history: 500 items of the largest size stay far
    // below Temporal's payload limit, so the setting may only make pages smaller.
    BATCH_PAGE_SIZE: z.coerce.number().int().min(10).max(500).default(500),
    BATCH_ITEM_CHECK_INTERVAL: duration('5m'),
    /** The largest payout batch upload; the batch's items wait in PostgreSQL, so its size bounds only the request. */
    BATCH_UPLOAD_LIMIT_BYTES: z.coerce
      .number()
      .int()
      .min(64 * 1024)
      .max(1024 * 1024 * 1024)
      .default(64 * 1024 * 1024),
    BATCH_HALT_WINDOW: z.coerce.number().int().min(2).max(1000).default(50),
    BATCH_HALT_FAILURE_SHARE: z.coerce.number().gt(0).max(1).default(0.2),
    BATCH_HALT_PROVIDER_ERRORS: z.coerce.number().int().min(0).max(1000).default(5),
    APPROVAL_THRESHOLDS: approvalThresholds,
    /** How long a batch waits for its approvals, from its start time, before it expires with nothing sent. */
    APPROVAL_WINDOW: duration('24h').pipe(
      z.number().min(1000, 'must be at least 1s').max(MAX_APPROVAL_WINDOW_MS, 'must be at most 30d'),
    ),
    ...vault,
    CODEC_CORS_ORIGINS: commaList.pipe(z.array(url)).default([]),
    /** Callbacks by GET (query string) too; off, GET answers 405: a URL in a log or a browser must not settle. */
    CALLBACK_ALLOW_GET: flag.transform((v) => v === 'true'),
    /** Requests each merchant may make per RATE_LIMIT_WINDOW, counted in Redis (VAULT_URL) across every server. */
    MERCHANT_RATE_LIMITS: rateLimits,
    RATE_LIMIT_WINDOW: duration('1m').pipe(
      z.number().min(1000, 'must be at least 1s').max(86_400_000, 'must be at most 24h'),
    ),
  })
  .superRefine((config, ctx) => {
    checkCallbackKeys(config, ctx);
    // A token must outlive every callback its payment can still take: the wait, reconciliation, the late window.
    const longestWait = Math.max(
      config.CALLBACK_TIMEOUT_MOBILE_MONEY,
      config.CALLBACK_TIMEOUT_CARD,
      config.CALLBACK_TIMEOUT_BANK_CREDIT,
    );
    const needed = longestWait + config.RECONCILE_FOR + config.LATE_CALLBACK_WINDOW;
    if (config.CALLBACK_TOKEN_TTL < needed) {
      ctx.addIssue({
        code: 'custom',
        path: ['CALLBACK_TOKEN_TTL'],
        message:
          `must be at least ${formatDuration(needed)}: the longest CALLBACK_TIMEOUT_*, RECONCILE_FOR and ` +
          'LATE_CALLBACK_WINDOW together, or a provider retrying a late callback finds its URL expired',
      });
    }
  });

export type WorkerConfig = z.infer<typeof workerSchema>;
type ProviderEnv = Pick<WorkerConfig, keyof typeof provider>;

/** The provider client's settings, from the worker's or the server's configuration. */
export function providerConfig(config: ProviderEnv): ProviderConfig {
  return {
    baseUrl: config.PROVIDER_BASE_URL,
    mobileMoneyBaseUrl: config.PROVIDER_MOBILE_MONEY_BASE_URL ?? config.PROVIDER_BASE_URL,
    token: config.PROVIDER_TOKEN,
    connectTimeoutMs: config.PROVIDER_CONNECT_TIMEOUT,
    requestTimeoutMs: config.PROVIDER_TIMEOUT,
    safeRetries: config.PROVIDER_SAFE_RETRIES,
    statusUrl: config.PROVIDER_STATUS_URL,
    statusByReferenceUrl: config.PROVIDER_STATUS_BY_REFERENCE_URL,
    banksUrl: config.PROVIDER_BANKS_URL,
  };
}
export type ServerConfig = z.infer<typeof serverSchema>;

/** The worker's notification settings: merchants' URLs and secrets, the retry schedule, the request timeout. */
export function notificationSettings(config: Pick<WorkerConfig, keyof typeof notifications>) {
  return {
    webhooks: config.MERCHANT_WEBHOOKS,
    retry: {
      initialMs: config.NOTIFICATION_RETRY_INITIAL,
      // A maximum below the initial interval would shorten the first wait; the initial one is the floor.
      maxIntervalMs: Math.max(config.NOTIFICATION_RETRY_MAX_INTERVAL, config.NOTIFICATION_RETRY_INITIAL),
      forMs: config.NOTIFICATION_RETRY_FOR,
    },
    requestTimeoutMs: config.NOTIFICATION_TIMEOUT,
  };
}

/** Where the server is reached for callbacks: PUBLIC_BASE_URL, or the local server on PORT. */
export function publicBaseUrl(config: { PUBLIC_BASE_URL?: string; PORT: number }): string {
  return config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`;
}

/** The sandbox's default bearer token (`npm start` hands it to the worker); never a real provider's. */
export const SANDBOX_TOKEN = 'sandbox-token';

/** What `npm start` itself reads; the rest passes through to the processes it launches. */
export const startSchema = z.object({
  DATA_DIR: z.string().min(1).default('.data'),
  PORT: port(3000),
  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  TEMPORAL_PORT: port(7233),
  TEMPORAL_UI_PORT: port(8233),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  PROVIDER_BASE_URL: url.optional(),
  SANDBOX_PORT: port(4010),
  PUBLIC_BASE_URL: url.optional(),
  METRICS_PORT: port(9465),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  WORKER_METRICS_ADDRESS: hostPort.default('127.0.0.1:9464'),
  VAULT_URL: vaultUrl.optional(),
  /** An existing PostgreSQL; unset, `npm start` runs a private one under DATA_DIR. */
  DATABASE_URL: databaseUrl.optional(),
  ENCRYPTION_KEYS: keyring.optional(),
});
export type StartConfig = z.infer<typeof startSchema>;
