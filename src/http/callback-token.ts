import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Per-payment callback tokens: an HMAC of the payment id, so a callback URL cannot be guessed or reused. */
export class CallbackTokens {
  constructor(private readonly secret: string) {}

  /** The token that goes into a payment's callback URL. */
  tokenFor(paymentId: string): string {
    return createHmac('sha256', this.secret).update(`callback:${paymentId}`).digest('base64url');
  }

  /** True when the token was issued for this payment (constant time, whatever the length presented). */
  verify(paymentId: string, token: string): boolean {
    const digest = (text: string) => createHash('sha256').update(text).digest();
    return timingSafeEqual(digest(this.tokenFor(paymentId)), digest(token));
  }
}
