import { timingSafeEqual } from 'node:crypto';
import { hmacSha256 } from './digest';
import { OPERATOR_NAME } from '../domain/operator';

// The Web UI's codec credential: `{operator}.{expiry in ms}.{HMAC-SHA256}`, signed with CODEC_TOKEN_SECRET. It only
// decodes, names the person it was issued to (the codec's audit log shows them) and dies at its expiry.

/** How long a Web UI codec token lives unless asked otherwise: a working day. */
export const CODEC_TOKEN_TTL_MS = 8 * 3_600_000;
/** The longest lifetime a Web UI codec token may have; the server refuses tokens expiring later than that. */
export const CODEC_TOKEN_MAX_TTL_MS = 24 * 3_600_000;

const TOKEN = /^([a-z0-9._-]{1,32})\.(\d{13})\.([A-Za-z0-9_-]{43})$/;

function signature(secret: string, operator: string, expiresAtMs: number): Buffer {
  return hmacSha256(secret, `temporal-ui-codec-decode\n${operator}\n${expiresAtMs}`);
}

/** A Web UI codec token for one operator, valid until `expiresAt`. */
export function signCodecToken(secret: string, operator: string, expiresAt: Date): string {
  if (!OPERATOR_NAME.test(operator)) throw new Error('the operator name must be 1–32 of a-z 0-9 . _ -');
  const expiresAtMs = expiresAt.getTime();
  return `${operator}.${expiresAtMs}.${signature(secret, operator, expiresAtMs).toString('base64url')}`;
}

/** The operator and expiry of a genuine, unexpired token (at most CODEC_TOKEN_MAX_TTL_MS ahead), else undefined. */
export function verifyCodecToken(
  secret: string,
  token: string,
  now: number = Date.now(),
): { operator: string; expiresAt: Date } | undefined {
  const match = TOKEN.exec(token);
  if (!match) return undefined;
  const [, operator, expiry, presented] = match as unknown as [string, string, string, string];
  const expiresAtMs = Number(expiry);
  const expected = Buffer.from(signature(secret, operator, expiresAtMs).toString('base64url'));
  const genuine = timingSafeEqual(expected, Buffer.from(presented));
  if (!genuine || expiresAtMs <= now || expiresAtMs > now + CODEC_TOKEN_MAX_TTL_MS) return undefined;
  return { operator, expiresAt: new Date(expiresAtMs) };
}
