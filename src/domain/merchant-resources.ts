import { z } from 'zod';
import { parseDuration } from './duration';
import { NOTIFICATION_TYPES } from './notification';
import { checkedRule, httpUrl } from './requests';

// Merchants, their API keys and their notification endpoints as the API takes and answers them (docs/merchants.md).

const timestamp = z.iso.datetime({ offset: true }).describe('an ISO 8601 UTC time');

/** A merchant id: 1–32 lower-case letters or digits (the form MERCHANT_API_KEYS uses). */
export const merchantIdSchema = z.string().regex(/^[a-z0-9]{1,32}$/, 'must be 1–32 lower-case letters or digits');

/** The longest overlap a rolled key or secret may have. */
export const MAX_OVERLAP_MS = 30 * 86_400_000;
/** The overlap when none is given. */
export const DEFAULT_OVERLAP_MS = 86_400_000;

/** An overlap: `0` (the old one stops now) or a duration up to 30 days (`24h`, `7d`). */
export const overlapSchema = checkedRule(
  z.string(),
  'must be 0 or a duration up to 30d (`ms`, `s`, `m`, `h`, `d`), like 24h',
)
  .transform((text, ctx) => {
    const ms = text.trim() === '0' ? 0 : parseDuration(text);
    if (ms === undefined || ms > MAX_OVERLAP_MS) {
      ctx.addIssue({ code: 'custom', message: 'must be 0 or a duration up to 30d, like 24h' });
      return z.NEVER;
    }
    return ms;
  })
  .describe('how long the old one keeps working: 0, or a duration up to 30d (default 24h)');

export const createMerchantRequest = z.strictObject({
  id: merchantIdSchema,
  name: z.string().min(1).max(200).optional(),
});
export const rollRequest = z.strictObject({ overlap: overlapSchema.optional() });

const eventTypes = z
  .array(z.enum(NOTIFICATION_TYPES))
  .min(1)
  .nullable()
  .describe('the event types it receives; null or absent: every type');
const endpointUrl = httpUrl;

export const createEndpointRequest = z.strictObject({ url: endpointUrl, event_types: eventTypes.optional() });
export const updateEndpointRequest = z.strictObject({
  url: endpointUrl.optional(),
  event_types: eventTypes.optional(),
});

export const apiKeySchema = z
  .object({
    id: z.string().describe('the key id: the part of the key after `mk_` and before the next `_`'),
    created_at: timestamp,
    expires_at: timestamp.nullable().describe('when a rolled key stops working; null while it is current'),
    revoked_at: timestamp.nullable(),
  })
  .meta({ id: 'ApiKey' });

export const merchantSchema = z
  .object({
    id: merchantIdSchema,
    name: z.string().nullable(),
    source: z.enum(['api', 'env']).describe('`env`: from MERCHANT_API_KEYS, whose keys stay in the environment'),
    created_at: timestamp,
    keys: z.array(apiKeySchema).describe('its keys in the database, newest first (never the keys themselves)'),
  })
  .meta({ id: 'Merchant' });

export const merchantListSchema = z.object({ data: z.array(merchantSchema) }).meta({ id: 'MerchantList' });

export const issuedKeySchema = z
  .object({
    merchant: merchantSchema,
    api_key: z.string().describe('the new key, shown this once: it is stored only hashed'),
    previous_keys_expire_at: timestamp.nullable().describe('when the keys it replaces stop working'),
  })
  .meta({ id: 'IssuedApiKey' });

export const revokedKeysSchema = z
  .object({ merchant: merchantSchema, revoked: z.number().int().describe('how many keys were revoked') })
  .meta({ id: 'RevokedApiKeys' });

export const webhookEndpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    event_types: z.array(z.enum(NOTIFICATION_TYPES)).nullable().describe('null: every type'),
    status: z.enum(['enabled', 'disabled']),
    created_at: timestamp,
    updated_at: timestamp,
    secrets: z
      .array(z.object({ prefix: z.string(), expires_at: timestamp.nullable() }))
      .describe('the secrets that sign now, newest first: only their first characters'),
  })
  .meta({ id: 'WebhookEndpoint' });

export const webhookEndpointListSchema = z
  .object({ data: z.array(webhookEndpointSchema) })
  .meta({ id: 'WebhookEndpointList' });

export const endpointSecretSchema = z
  .object({
    endpoint: webhookEndpointSchema,
    secret: z.string().describe('the new signing secret (`whsec_…`), shown this once'),
  })
  .meta({ id: 'WebhookEndpointSecret' });

export type MerchantResource = z.infer<typeof merchantSchema>;
export type WebhookEndpointResource = z.infer<typeof webhookEndpointSchema>;

/** The schemas other answers hold, each a component of the OpenAPI document. */
export const MERCHANT_NESTED_SCHEMAS = [apiKeySchema, merchantSchema, webhookEndpointSchema] as const;

/**
 * Why a production endpoint URL is refused: not https, or a host on this side of the internet (localhost, a private,
 * loopback or link-local address, an IPv6 literal), which would let a merchant make the relay post inside the
 * deployment. Undefined when it is allowed. A name that resolves inside is not caught here (docs/security.md).
 */
export function internalUrlProblem(url: string): string | undefined {
  const parsed = URL.parse(url);
  if (!parsed || parsed.protocol !== 'https:') return 'must be an https:// URL in production';
  const host = parsed.hostname.toLowerCase();
  if (host.startsWith('[')) return 'must name a host, not an IPv6 address, in production';
  if (/(^|\.)(localhost|local|internal)$/.test(host)) return `must not name an internal host (${host}) in production`;
  const octets = /^(\d+)\.(\d+)\.\d+\.\d+$/.exec(host)?.slice(1).map(Number);
  if (octets) {
    const [a = 0, b = 0] = octets;
    const internal =
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127) ||
      a >= 224;
    if (internal) return `must not name an internal address (${host}) in production`;
  }
  return undefined;
}
