import { createHmac, timingSafeEqual } from 'node:crypto';
import { NotificationSignatureError, checkTimestamp } from './notification-signature';
import type { VerifyOptions } from './notification-signature';

/** The Standard Webhooks headers (standardwebhooks.com): the event id, unix seconds, and `v1,<base64>` signatures. */
export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';

/** The prefix of a Standard Webhooks secret: `whsec_` then the key, base64-encoded. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

const PADDED_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The HMAC key a secret stands for. `whsec_<base64>` (padded, canonical, as the specification and its libraries
 * expect) is keyed by the decoded bytes; any other secret (a plain one, or an older `whsec_` one in another alphabet)
 * by its UTF-8 bytes whole, prefix included: receivers pass it to their library as a raw secret.
 */
export function webhookKey(secret: string): Buffer {
  if (secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
    const decoded = Buffer.from(encoded, 'base64');
    if (encoded.length > 0 && PADDED_BASE64.test(encoded) && decoded.toString('base64') === encoded) return decoded;
  }
  return Buffer.from(secret, 'utf8');
}

function signatureOf(key: Buffer, id: string, timestamp: number, rawBody: string): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.${rawBody}`).digest();
}

/** The three Standard Webhooks headers for one delivery: one `v1` signature per secret while a secret rotates. */
export function standardWebhookHeaders(
  id: string,
  rawBody: string,
  secrets: readonly string[],
  now: Date = new Date(),
): Record<string, string> {
  if (secrets.length === 0) throw new Error('no notification signing secret');
  const timestamp = Math.floor(now.getTime() / 1000);
  const signatures = secrets.map(
    (secret) => `v1,${signatureOf(webhookKey(secret), id, timestamp, rawBody).toString('base64')}`,
  );
  return {
    [WEBHOOK_ID_HEADER]: id,
    [WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
    [WEBHOOK_SIGNATURE_HEADER]: signatures.join(' '),
  };
}

/** The Standard Webhooks headers as received (any may be missing). */
export interface StandardWebhookHeaders {
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
}

/**
 * Checks the Standard Webhooks headers against the raw body (the exact bytes received) with any of the merchant's
 * secrets, refusing a timestamp more than the tolerance from now; throws NotificationSignatureError otherwise.
 */
export function verifyStandardWebhook(
  rawBody: string,
  headers: StandardWebhookHeaders,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): void {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) {
    const missing = Object.entries({
      [WEBHOOK_ID_HEADER]: id,
      [WEBHOOK_TIMESTAMP_HEADER]: timestamp,
      [WEBHOOK_SIGNATURE_HEADER]: signature,
    }).filter(([, value]) => !value);
    throw new NotificationSignatureError(`missing header: ${missing.map(([name]) => name).join(', ')}`);
  }
  if (!/^\d{1,12}$/.test(timestamp)) {
    throw new NotificationSignatureError(`the ${WEBHOOK_TIMESTAMP_HEADER} header is malformed`);
  }
  const t = Number(timestamp);
  checkTimestamp(t, options);
  const presented = signature
    .split(' ')
    .map((entry) => entry.split(','))
    .filter(([version, value]) => version === 'v1' && value)
    .map(([, value]) => Buffer.from(value ?? '', 'base64'));
  if (presented.length === 0) {
    throw new NotificationSignatureError(`the ${WEBHOOK_SIGNATURE_HEADER} header has no v1 signature`);
  }
  const expected = (typeof secrets === 'string' ? [secrets] : secrets).map((secret) =>
    signatureOf(webhookKey(secret), id, t, rawBody),
  );
  const matches = presented.some((given) =>
    expected.some((want) => want.length === given.length && timingSafeEqual(want, given)),
  );
  if (!matches) throw new NotificationSignatureError('no signature matches: a wrong secret or a tampered body');
}
