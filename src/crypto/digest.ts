import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** The SHA-256 digest of a text. */
export function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** An HMAC-SHA256 of a text under a secret key. */
export function hmacSha256(key: string | Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text).digest();
}

/** True when two texts are equal, compared in constant time whatever their lengths (through their digests). */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}
