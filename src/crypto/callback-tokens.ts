import { hmacSha256, sameSecret } from './digest';

/** Where the server takes provider callbacks: `{CALLBACK_PATH}/{payment id}/{token}`. */
export const CALLBACK_PATH = '/v1/callbacks';

/** The callback route as the HTTP server registers it. */
export const CALLBACK_ROUTE = `${CALLBACK_PATH}/:paymentId/:token`;

const TOKEN_IN_PATH = new RegExp(`^(${CALLBACK_PATH}/[^/?]+/)[^/?]+`);

/** A request path with a callback URL's token replaced, for logs. */
export function hideCallbackToken(path: string): string {
  return path.replace(TOKEN_IN_PATH, '$1[token]');
}

/**
 * Per-payment callback tokens: an HMAC of the payment id (CALLBACK_SECRET), so a callback URL cannot be guessed or
 * reused for another payment. The URL is derived where it is needed (the initiation, the callback route) and never
 * stored in Temporal; a token stops working once its payment's workflow has closed.
 */
export class CallbackTokens {
  constructor(
    private readonly secret: string,
    /** Where the provider reaches the server (PUBLIC_BASE_URL). */
    private readonly publicBaseUrl?: string,
  ) {}

  /** The token that goes into a payment's callback URL. */
  tokenFor(paymentId: string): string {
    return hmacSha256(this.secret, `callback:${paymentId}`).toString('base64url');
  }

  /** The callback URL handed to the provider for this payment. */
  urlFor(paymentId: string): string {
    if (!this.publicBaseUrl) throw new Error('callback URLs need PUBLIC_BASE_URL');
    return `${this.publicBaseUrl}${CALLBACK_PATH}/${encodeURIComponent(paymentId)}/${this.tokenFor(paymentId)}`;
  }

  /** True when the token was issued for this payment (constant time, whatever the length presented). */
  verify(paymentId: string, token: string): boolean {
    return sameSecret(this.tokenFor(paymentId), token);
  }
}
