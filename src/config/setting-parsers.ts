// How each kind of setting is read from the environment: one zod parser per kind, shared by every process's schema.
import { z } from 'zod';
import { parseKeyring } from '../crypto/keyring';
import { parseDuration } from '../domain/duration';
import type { ApprovalThresholds } from '../domain/approval-rules';
import { toMinorUnits } from '../domain/money';
import { OPERATOR_NAME } from '../domain/operator';

export const duration = (fallback: string) =>
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

/** A duration in whole days or more (`400d`), or unset. */
export const optionalDays = z
  .string()
  .optional()
  .transform((text, ctx) => {
    if (text === undefined || text === '') return undefined;
    const ms = parseDuration(text);
    if (ms === undefined || ms < 86_400_000) {
      ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration of a day or more, like 400d` });
      return z.NEVER;
    }
    return ms;
  });

export const port = (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback);
export const url = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .transform((u) => u.replace(/\/+$/, ''));
export const secret = (minLength: number) => z.string().min(minLength, `must be at least ${minLength} characters`);

const MERCHANT_ENTRY = /^([a-z0-9]{1,32}):(\S{16,})$/;

/** `merchant_id:key,…`; a bad entry is named by its position, never echoed (it may hold a key). */
export const merchantKeys = z.string().transform((text, ctx) => {
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

/**
 * Reads `merchant:value,…` entries into a map, naming each bad entry by position (`shape` says what it should be) and
 * each merchant given twice; `parse` answers undefined for a bad value.
 */
function merchantEntries<T>(
  text: string,
  ctx: z.RefinementCtx,
  merchant: RegExp,
  shape: string,
  parse: (value: string) => T | undefined,
): Map<string, T> {
  const entries = new Map<string, T>();
  text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .forEach((entry, index) => {
      const at = entry.indexOf(':');
      const name = entry.slice(0, at);
      const value = at > 0 && merchant.test(name) ? parse(entry.slice(at + 1)) : undefined;
      if (value === undefined) {
        ctx.addIssue({ code: 'custom', message: `entry ${index + 1} is not ${shape}` });
      } else if (entries.has(name)) {
        ctx.addIssue({ code: 'custom', message: `"${name}" appears twice` });
      } else {
        entries.set(name, value);
      }
    });
  return entries;
}

const AMOUNT = /^\d{1,13}(?:\.\d{1,2})?$/;

/** A per-merchant setting of `merchant_id:value,…,*:value` entries: each merchant's value, `*`'s for the others. */
function perMerchant<T>(fallback: T, shape: string, parse: (value: string) => T | undefined) {
  return z
    .string()
    .default(`*:${String(fallback)}`)
    .transform((text, ctx) => {
      const values = merchantEntries(text, ctx, /^(\*|[a-z0-9]{1,32})$/, shape, parse);
      const others = values.get('*') ?? fallback;
      return (merchantId: string): T => values.get(merchantId) ?? others;
    });
}

/** `merchant_id:amount,…,*:amount`: each merchant's largest amount per payment or batch item; `*` for the others. */
export const maxAmounts = perMerchant(
  DEFAULT_MAX_AMOUNT,
  '`merchant_id:amount` or `*:amount` (an amount ≥ 0.01, two decimals at most)',
  (value) => (AMOUNT.test(value) && Number(value) >= 0.01 ? Number(value) : undefined),
);

/** Requests a merchant may make per RATE_LIMIT_WINDOW when MERCHANT_RATE_LIMITS names no limit for it. */
export const DEFAULT_RATE_LIMIT = 6000;

/** `merchant_id:count,…,*:count`: requests each merchant may make per window, `*` for the others; 0 is no limit. */
export const rateLimits = perMerchant(
  DEFAULT_RATE_LIMIT,
  '`merchant_id:count` or `*:count` (a whole number of requests, 0 for no limit)',
  (value) => (/^\d{1,9}$/.test(value) ? Number(value) : undefined),
);

/**
 * APPROVAL_THRESHOLDS, `merchant_id:credit/second,…`: a merchant named here has every batch approved by an operator
 * (two different ones when its total is above `second`) and every bank credit above `credit`; others need none.
 */
export const approvalThresholds = z
  .string()
  .default('')
  .transform((text, ctx) => {
    const shape = '`merchant_id:credit/second` (amounts, two decimals at most)';
    const thresholds = merchantEntries(
      text,
      ctx,
      /^[a-z0-9]{1,32}$/,
      shape,
      (value): ApprovalThresholds | undefined => {
        const [credit = '', second = '', ...rest] = value.split('/');
        if (rest.length > 0 || !AMOUNT.test(credit) || !AMOUNT.test(second)) return undefined;
        return { creditMinor: toMinorUnits(Number(credit)), secondMinor: toMinorUnits(Number(second)) };
      },
    );
    return (merchantId: string): ApprovalThresholds | undefined => thresholds.get(merchantId);
  });

export const commaList = z.string().transform((text) =>
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

export const keyring = z.string().transform((text, ctx) => {
  try {
    return parseKeyring(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

/** The card vault: a Redis URL (`redis://[:password@]host:port`). */
export const vaultUrl = z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' });

/** The system of record, `postgres://user:password@host:port/database[?sslmode=…]`; never echoed (a password). */
export const databaseUrl = z.url({
  protocol: /^postgres(ql)?$/,
  error: 'must be a postgres:// or postgresql:// URL (postgres://user:password@host:port/database)',
});

/** A database URL as it may be shown (banners, logs): without its password. */
export function withoutPassword(url: string): string {
  const parsed = new URL(url);
  parsed.password = '';
  return parsed.toString();
}

const webhookEntry = z.object({ url: z.string(), secrets: z.array(z.string()) });

/**
 * MERCHANT_WEBHOOKS, JSON: `{"merchant_id": {"url": "https://…", "secrets": ["…", …]}, …}`. Every secret signs each
 * notification (list the old and the new one while merchants switch). A problem names the merchant, never a secret.
 */
export const merchantWebhooks = z.string().transform((text, ctx) => {
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

export const optional = z.string().min(1).optional();
export const flag = z.enum(['true', 'false'], { error: 'must be true or false' }).optional();

export const hostPort = z
  .string()
  .regex(/^[^\s:]+:\d{1,5}$/, 'must be host:port, e.g. 127.0.0.1:9464')
  .refine((text) => Number(text.slice(text.lastIndexOf(':') + 1)) <= 65535, 'the port must be at most 65535');
