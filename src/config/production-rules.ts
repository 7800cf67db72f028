// What `NODE_ENV=production` refuses: weak and shared secrets, plain http, placeholders, listeners open to all.
import { estimatedEntropyBits, MIN_ENTROPY_BITS } from '../crypto/entropy';
import { parseKeyring } from '../crypto/keyring';
import type { EncryptionKey } from '../crypto/keyring';
import { isLoopback } from '../temporal/connection-settings';
import { SANDBOX_TOKEN } from './process-settings';
import { commaList, merchantWebhooks } from './setting-parsers';
import { sharedSecretProblems } from './shared-secrets';

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
  VAULT_KEYS: (v) =>
    v ? weakKeyring(v) : 'is required in production (the card vault has its own keys, apart from ENCRYPTION_KEYS)',
  ACCEPT_UNENCRYPTED_PAYLOADS: (v) =>
    v === 'true' ? 'accepts forged plain payloads; only while migrating, never in production' : undefined,
  PROVIDER_BASE_URL: httpsOnly,
  PROVIDER_MOBILE_MONEY_BASE_URL: httpsOnly,
  PROVIDER_STATUS_URL: httpsOnly,
  PROVIDER_STATUS_BY_REFERENCE_URL: httpsOnly,
  PROVIDER_BANKS_URL: httpsOnly,
  VAULT_URL: (v) => (v ? unsafeVault(v) : undefined),
  METRICS_HOST: (v) => (v !== undefined && EVERY_INTERFACE.has(v) ? OPEN_METRICS : undefined),
  WORKER_METRICS_ADDRESS: (v) =>
    v !== undefined && EVERY_INTERFACE.has(v.slice(0, v.lastIndexOf(':'))) ? OPEN_METRICS : undefined,
  CODEC_CORS_ORIGINS: (v) => {
    const plain = commaList.parse(v ?? '').findIndex((origin) => !/^https:\/\//i.test(origin));
    return plain < 0
      ? undefined
      : `origin ${plain + 1} is not https://: production lets only https:// pages call the codec (they carry decode tokens)`;
  },
  DATABASE_URL: (v) => (v ? unsafeDatabase(v) : undefined),
  CALLBACK_KEYS: (v) => (v ? weakKeyring(v) : undefined),
  CALLBACK_SECRET: weakSecret,
  FINGERPRINT_SECRET: weakSecret,
  CODEC_TOKEN_SECRET: (v) => (v ? weakSecret(v) : undefined),
  MERCHANT_API_KEYS: weakEntry((entry) => entry.slice(entry.indexOf(':') + 1)),
  OPERATOR_API_KEYS: weakEntry((entry) => entry.slice(entry.indexOf(':') + 1)),
  MERCHANT_WEBHOOKS: weakWebhooks,
};

const EVERY_INTERFACE = new Set(['0.0.0.0', '::', '[::]', '*', '']);
const OPEN_METRICS =
  'listens on every interface: production needs a loopback or internal address (metrics name merchants and their traffic)';

/** A vault without a password, or reached off loopback in clear (card data crosses): the host is named. */
function unsafeVault(value: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return undefined; // the schema names a malformed URL
  }
  if (!parsed.password) return 'needs a password in production (rediss://:password@host:port)';
  if (parsed.protocol === 'redis:' && !isLoopback(parsed.hostname)) {
    return `reaches ${parsed.hostname} without TLS: production needs rediss:// for a vault off loopback (card data crosses)`;
  }
  return undefined;
}

/** TLS modes that refuse a plaintext connection (`prefer`, `allow` and `disable` fall back to one). */
const DATABASE_TLS_MODES = ['require', 'verify-full'];

/** A database anyone on the network could reach without a password or read in clear (the URL's host is named). */
function unsafeDatabase(value: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return undefined; // the schema names a malformed URL
  }
  if (!parsed.password) return 'needs a password in production (postgres://user:password@host:port/database)';
  // A Unix socket (`?host=/run/postgresql`) stays on this machine.
  const local = parsed.hostname === '' || isLoopback(parsed.hostname) || parsed.searchParams.get('host')?.[0] === '/';
  if (!local && !DATABASE_TLS_MODES.includes(parsed.searchParams.get('sslmode') ?? '')) {
    return (
      `reaches ${parsed.hostname} without TLS: production needs ?sslmode=verify-full (or sslmode=require) ` +
      'for a database off loopback'
    );
  }
  return undefined;
}

/** Every production refusal for the named variables of an environment, one `  NAME: problem` line each. */
export function productionProblems(env: NodeJS.ProcessEnv, names: Iterable<string>): string[] {
  const lines: string[] = [];
  const read = [...names];
  for (const name of read) {
    const value = env[name] === '' ? undefined : env[name];
    const problem = productionRules[name]?.(value);
    if (problem) lines.push(`  ${name}: ${problem}`);
  }
  for (const { name, problem } of sharedSecretProblems(env, read)) {
    if (!lines.some((line) => line.startsWith(`  ${name}:`))) lines.push(`  ${name}: ${problem}`);
  }
  return lines;
}
