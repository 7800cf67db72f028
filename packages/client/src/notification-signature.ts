import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header that carries a notification's signature, in Stripe's scheme: `t=<unix>,v1=<hex>[,v1=<hex>…]`. */
export const SIGNATURE_HEADER = 'payments-signature';

/** How old a notification's timestamp may be, in seconds, before verification refuses it (a replay). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Why a notification did not verify: the header is missing or malformed, too old, or no signature matches. */
export class NotificationSignatureError extends Error {
  override readonly name = 'NotificationSignatureError';
}

function hmacHex(secret: string, timestamp: number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
}

/**
 * The `Payments-Signature` header value for a raw body: one `v1` per secret, so a receiver holding either the old or
 * the new secret verifies it while secrets rotate.
 */
export function signNotification(rawBody: string, secrets: readonly string[], now: Date = new Date()): string {
  if (secrets.length === 0) throw new Error('no notification signing secret');
  const t = Math.floor(now.getTime() / 1000);
  return [`t=${t}`, ...secrets.map((secret) => `v1=${hmacHex(secret, t, rawBody)}`)].join(',');
}

export interface VerifyOptions {
  /** Seconds a timestamp may lie from now, either way (default 300). */
  toleranceSeconds?: number;
  now?: Date;
}

/**
 * Checks a notification's `Payments-Signature` header against the raw body (the exact bytes received, before any
 * JSON parsing) with any of the merchant's secrets; throws NotificationSignatureError when it does not verify.
 */
export function verifySignature(
  rawBody: string,
  header: string | undefined,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): void {
  if (!header) throw new NotificationSignatureError(`the ${SIGNATURE_HEADER} header is missing`);
  const parts = header.split(',').map((part) => part.trim().split('='));
  const timestamps = parts.filter(([key]) => key === 't').map(([, value]) => value ?? '');
  const signatures = parts.filter(([key]) => key === 'v1').map(([, value]) => value ?? '');
  if (timestamps.length !== 1 || !/^\d{1,12}$/.test(timestamps[0] ?? '') || signatures.length === 0) {
    throw new NotificationSignatureError(`the ${SIGNATURE_HEADER} header is malformed`);
  }
  const t = Number(timestamps[0]);
  checkTimestamp(t, options);
  const expected = (typeof secrets === 'string' ? [secrets] : secrets).map((secret) =>
    Buffer.from(hmacHex(secret, t, rawBody), 'hex'),
  );
  const matches = signatures.some((signature) => {
    const presented = Buffer.from(signature, 'hex');
    return expected.some((want) => want.length === presented.length && timingSafeEqual(want, presented));
  });
  if (!matches) throw new NotificationSignatureError('no signature matches: a wrong secret or a tampered body');
}

/** Throws NotificationSignatureError when a signed timestamp (unix seconds) lies further from now than tolerated. */
export function checkTimestamp(t: number, options: VerifyOptions): void {
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - t) > tolerance) {
    throw new NotificationSignatureError(
      `the timestamp is more than ${tolerance} s from now (a replayed notification?)`,
    );
  }
}
