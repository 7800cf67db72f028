import { z } from 'zod';
import { estimatedEntropyBits, MIN_ENTROPY_BITS } from './crypto/entropy';
import { parseKeyring } from './crypto/keyring';
import type { EncryptionKey } from './crypto/keyring';
import { parseDuration } from './domain/duration';
import { OPERATOR_NAME } from './domain/operator';
import type { ProviderConfig } from './provider/provider-client';
import { worstCaseCallMs } from './provider/retry';
import { INITIATION_TIMEOUT_MS, VAULT_WAIT_MS } from './domain/payment-model';
import { ALLOW_PLAINTEXT_LOOPBACK, temporalSettingProblems } from './temporal/connection';

const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const ms = parseDuration(text);
      if (ms === undefined) {
        ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration like 500ms, 30s, 5m or 2h` });
        return z.NEVER;
      }
      return ms;
    });

const port = (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback);
const url = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).transform((u) => u.replace(/\/+$/, ''));
const secret = (minLength: number) => z.string().min(minLength, `must be at least ${minLength} characters`);

const MERCHANT_ENTRY = /^([a-z0-9]{1,32}):(\S{16,})$/;

/** `merchant_id:key,…`; a bad entry is named by its position, never echoed (it may hold a key). */
const merchantKeys = z.string().transform((text, ctx) => {
  const entries = text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  if (entries.length === 0) ctx.addIssue({ code: 'custom', message: 'needs at least one key' });
  return entries.map((entry, index) => {
    const match = MERCHANT_ENTRY.exec(entry);
    if (!match) {
      ctx.addIssue({
        code: 'custom',
        message: `entry ${index + 1} is not \`merchant_id:key\` (merchant id 1–32 lowercase letters or digits, key ≥ 16 characters)`,
      });
    }
    return { merchantId: match?.[1] ?? '', key: match?.[2] ?? '' };
  });
});

/** The largest amount one payment or batch item may have when MERCHANT_MAX_AMOUNTS names no limit for a merchant. */
export const DEFAULT_MAX_AMOUNT = 1_000_000;

/** `merchant_id:amount,…,*:amount`: each merchant's largest amount per payment or batch item; `*` for the others. */
const maxAmounts = z
  .string()
  .default(`*:${DEFAULT_MAX_AMOUNT}`)
  .transform((text, ctx) => {
    const limits = new Map<string, number>();
    text
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean)
      .forEach((entry, index) => {
        const match = /^(\*|[a-z0-9]{1,32}):(\d{1,13}(?:\.\d{1,2})?)$/.exec(entry);
        const amount = Number(match?.[2]);
        if (!match?.[1] || !(amount >= 0.01)) {
          ctx.addIssue({
            code: 'custom',
            message: `entry ${index + 1} is not \`merchant_id:amount\` or \`*:amount\` (an amount ≥ 0.01, two decimals at most)`,
          });
        } else if (limits.has(match[1])) {
          ctx.addIssue({ code: 'custom', message: `"${match[1]}" appears twice` });
        } else {
          limits.set(match[1], amount);
        }
      });
    const others = limits.get('*') ?? DEFAULT_MAX_AMOUNT;
    return (merchantId: string): number => limits.get(merchantId) ?? others;
  });

const commaList = z.string().transform((text) =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean),
);

/** OPERATOR_API_KEYS: one `name:key` entry per person; a problem names the entry by position, never its key. */
export const operatorKeyList = commaList.transform((entries, ctx) => {
  if (entries.length === 0) ctx.addIssue({ code: 'custom', message: 'needs at least one `name:key` entry' });
  const names = new Set<string>();
  return entries.map((entry, index) => {
    const colon = entry.indexOf(':');
    const name = colon > 0 ? entry.slice(0, colon) : '';
    const key = entry.slice(colon + 1);
    const problem =
      colon <= 0
        ? 'is a bare key; write `name:key`'
        : !OPERATOR_NAME.test(name)
          ? 'has a bad name: 1–32 lowercase letters, digits, `.`, `_` or `-`'
          : key.length < 16
            ? 'has a key shorter than 16 characters'
            : names.has(name)
              ? 'repeats the name of an earlier entry'
              : undefined;
    if (problem) ctx.addIssue({ code: 'custom', message: `entry ${index + 1} ${problem}` });
    names.add(name);
    return { name, key };
  });
});

const keyring = z.string().transform((text, ctx) => {
  try {
    return parseKeyring(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

/** The card vault: a Redis URL (`redis://[:password@]host:port`). */
const vaultUrl = z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' });

const webhookEntry = z.object({ url: z.string(), secrets: z.array(z.string()) });

/**
 * MERCHANT_WEBHOOKS, JSON: `{"merchant_id": {"url": "https://…", "secrets": ["…", …]}, …}`. Every secret signs each
 * notification (list the old and the new one while merchants switch). A problem names the merchant, never a secret.
 */
const merchantWebhooks = z.string().transform((text, ctx) => {
  const webhooks = new Map<string, { url: string; secrets: string[] }>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'is not JSON: {"merchant_id": {"url": "https://…", "secrets": ["…"]}}' });
    return webhooks;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    ctx.addIssue({ code: 'custom', message: 'must be a JSON object keyed by merchant id' });
    return webhooks;
  }
  for (const [merchantId, value] of Object.entries(parsed)) {
    const entry = webhookEntry.safeParse(value);
    const problem = !/^[a-z0-9]{1,32}$/.test(merchantId)
      ? 'is not a merchant id (1–32 lowercase letters or digits)'
      : !entry.success
        ? 'must be {"url": "…", "secrets": ["…"]}'
        : !url.safeParse(entry.data.url).success
          ? 'has a url that is not an http(s) URL'
          : entry.data.secrets.length === 0
            ? 'needs at least one secret'
            : entry.data.secrets.some((secret) => secret.length < 16)
              ? 'has a secret shorter than 16 characters'
              : undefined;
    if (problem || !entry.success) ctx.addIssue({ code: 'custom', message: `merchant "${merchantId}" ${problem}` });
    else webhooks.set(merchantId, { url: entry.data.url, secrets: entry.data.secrets });
  }
  return webhooks;
});

const optional = z.string().min(1).optional();
const flag = z.enum(['true', 'false'], { error: 'must be true or false' }).optional();

/**
 * Where Temporal is and how the connection is secured: Temporal's own variables (@temporalio/envconfig), over the
 * TOML profile when TEMPORAL_CONFIG_FILE or TEMPORAL_PROFILE names one; address and namespace default to
 * localhost:7233 and default. Checked together by temporalSettingProblems (src/temporal/connection.ts).
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

/** What the server signs and the worker verifies: what starts, settles or resolves a payment or batch. */
const signing = { SIGNING_KEYS: keyring };

/** The operator CLI signs resolutions and batch controls only when it has SIGNING_KEYS; reading needs none. */
export const optionalSigningKeys = { SIGNING_KEYS: keyring.optional() };

/** How callback URLs are made: the worker derives them at initiation, the server checks them. */
const callbacks = {
  PUBLIC_BASE_URL: url.optional(),
  CALLBACK_SECRET: secret(32),
};

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

const hostPort = z
  .string()
  .regex(/^[^\s:]+:\d{1,5}$/, 'must be host:port, e.g. 127.0.0.1:9464')
  .refine((text) => Number(text.slice(text.lastIndexOf(':') + 1)) <= 65535, 'the port must be at most 65535');

const workerSettings = z.object({
  ...temporalSettings,
  ...signing,
  ...callbacks,
  PORT: port(3000),
  ...provider,
  ...logging,
  WORKER_METRICS_ADDRESS: hostPort.default('127.0.0.1:9464'),
  WORKFLOW_BUNDLE_PATH: z.string().min(1).optional(),
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).max(100_000).default(60),
  VAULT_URL: vaultUrl,
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

export const serverSchema = z.object({
  ...temporalSettings,
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
  BATCH_ITEM_CHECK_INTERVAL: duration('5m'),
  VAULT_URL: vaultUrl,
  CODEC_CORS_ORIGINS: commaList.pipe(z.array(url)).default([]),
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
      // Temporal refuses a maximum interval below the initial one.
      maxIntervalMs: Math.max(config.NOTIFICATION_RETRY_MAX_INTERVAL, config.NOTIFICATION_RETRY_INITIAL),
      forMs: config.NOTIFICATION_RETRY_FOR,
    },
    requestTimeoutMs: config.NOTIFICATION_TIMEOUT,
  };
}

export class ConfigError extends Error {}

/** Where the server is reached for callbacks: PUBLIC_BASE_URL, or the local server on PORT. */
export function publicBaseUrl(config: { PUBLIC_BASE_URL?: string; PORT: number }): string {
  return config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`;
}

/** The sandbox's default bearer token (`npm start` hands it to the worker); never a real provider's. */
export const SANDBOX_TOKEN = 'sandbox-token';

/** Why a secret is too weak for production (shorter than 32 characters, or a placeholder), or undefined. */
function weakness(secret: string): string | undefined {
  if (secret.length < 32) return 'is shorter than 32 characters';
  if (estimatedEntropyBits(secret) < MIN_ENTROPY_BITS) return 'is low in entropy (one character or a pattern repeated)';
  return undefined;
}

const weakSecret = (v: string | undefined) => {
  const problem = v === undefined ? undefined : weakness(v);
  return problem && `${problem}: production needs a random value of 32 characters or more`;
};

/** The first weak key of a comma-separated list, named by position. */
const weakEntry = (secretOf: (entry: string) => string) => (v: string | undefined) => {
  const entries = (v ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  for (const [index, entry] of entries.entries()) {
    const problem = weakness(secretOf(entry));
    if (problem)
      return `the key of entry ${index + 1} ${problem}: production needs keys of 32 random characters or more`;
  }
  return undefined;
};

/** Repeated or low-entropy keys in ENCRYPTION_KEYS, named by id (a malformed list is the schema's to report). */
function weakKeyring(value: string): string | undefined {
  let keys: EncryptionKey[];
  try {
    keys = [...parseKeyring(value).byId.values()];
  } catch {
    return undefined;
  }
  for (const [index, { id, key }] of keys.entries()) {
    const twin = keys.slice(0, index).find((other) => other.key.equals(key));
    if (twin) return `key "${id}" repeats key "${twin.id}"`;
    if (estimatedEntropyBits(key) < MIN_ENTROPY_BITS) {
      return `key "${id}" is low in entropy (one byte or a pattern repeated): use openssl rand -base64 32`;
    }
  }
  return undefined;
}

/** Provider URLs carry card data and the provider's token: plain http is refused (a path is relative to the base). */
const httpsOnly = (v: string | undefined) =>
  v === undefined || v.startsWith('/') || /^https:\/\//i.test(v)
    ? undefined
    : 'must be an https:// URL in production (card data and the provider token would cross in clear)';

/** Notification URLs carry payments' details and secrets sign them: https only, and strong secrets. */
function weakWebhooks(value: string | undefined): string | undefined {
  const parsed = merchantWebhooks.safeParse(value ?? '{}');
  if (!parsed.success) return undefined;
  for (const [merchantId, { url: target, secrets }] of parsed.data) {
    if (!/^https:\/\//i.test(target)) return `merchant "${merchantId}" needs an https:// URL in production`;
    for (const [index, secret] of secrets.entries()) {
      const problem = weakness(secret);
      if (problem)
        return `merchant "${merchantId}": secret ${index + 1} ${problem}; production needs 32 random characters or more`;
    }
  }
  return undefined;
}

/** What `NODE_ENV=production` refuses, per variable, for the schemas that read it. */
const productionRules: Record<string, (value: string | undefined) => string | undefined> = {
  PROVIDER_TOKEN: (v) => (v === SANDBOX_TOKEN ? "is the sandbox's token; set the provider's" : undefined),
  PUBLIC_BASE_URL: (v) =>
    v?.startsWith('https://') ? undefined : 'must be an https:// URL in production (callbacks carry tokens)',
  ENCRYPTION_KEYS: (v) => (v ? weakKeyring(v) : 'is required in production'),
  SIGNING_KEYS: (v) => (v ? weakKeyring(v) : 'is required in production'),
  ACCEPT_UNENCRYPTED_PAYLOADS: (v) =>
    v === 'true' ? 'accepts forged plain payloads; only while migrating, never in production' : undefined,
  PROVIDER_BASE_URL: httpsOnly,
  PROVIDER_MOBILE_MONEY_BASE_URL: httpsOnly,
  PROVIDER_STATUS_URL: httpsOnly,
  PROVIDER_STATUS_BY_REFERENCE_URL: httpsOnly,
  PROVIDER_BANKS_URL: httpsOnly,
  VAULT_URL: (v) =>
    v && !redisPassword(v) ? 'needs a password in production (redis://:password@host:port)' : undefined,
  CALLBACK_SECRET: weakSecret,
  FINGERPRINT_SECRET: weakSecret,
  CODEC_TOKEN_SECRET: (v) => (v ? weakSecret(v) : undefined),
  MERCHANT_API_KEYS: weakEntry((entry) => entry.slice(entry.indexOf(':') + 1)),
  OPERATOR_API_KEYS: weakEntry((entry) => entry.slice(entry.indexOf(':') + 1)),
  MERCHANT_WEBHOOKS: weakWebhooks,
};

function redisPassword(value: string): string {
  try {
    return new URL(value).password;
  } catch {
    return '';
  }
}

/** Every production refusal for the named variables of an environment, one `  NAME: problem` line each. */
export function productionProblems(env: NodeJS.ProcessEnv, names: Iterable<string>): string[] {
  const lines: string[] = [];
  for (const name of names) {
    const value = env[name] === '' ? undefined : env[name];
    const problem = productionRules[name]?.(value);
    if (problem) lines.push(`  ${name}: ${problem}`);
  }
  return lines;
}

/** Validates the environment against a schema; the error names every bad variable and never echoes a value. */
export function parseConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(present);
  const lines = result.success
    ? []
    : result.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? '(environment)');
        const message = present[name] === undefined ? 'is required' : issue.message;
        return `  ${name}: ${message}`;
      });
  if (present.NODE_ENV === 'production' && schema instanceof z.ZodObject) {
    for (const line of productionProblems(present, Object.keys(schema.shape))) {
      if (!lines.some((known) => known.startsWith(line.slice(0, line.indexOf(':') + 1)))) lines.push(line);
    }
  }
  if (schema instanceof z.ZodObject && 'TEMPORAL_TLS' in schema.shape) {
    for (const { setting, problem } of temporalSettingProblems(present, present.NODE_ENV === 'production')) {
      if (!lines.some((line) => line.startsWith(`  ${setting}:`))) lines.push(`  ${setting}: ${problem}`);
    }
  }
  if (lines.length === 0 && result.success) return result.data;
  throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
}

/** Loads configuration for a process entry, or prints what is wrong and exits. */
export function loadConfigOrExit<S extends z.ZodType>(schema: S, processName: string): z.infer<S> {
  try {
    return parseConfig(schema, process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${processName}: ${err.message}\n`);
    process.exit(1);
  }
}

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
  ENCRYPTION_KEYS: keyring.optional(),
});
export type StartConfig = z.infer<typeof startSchema>;
