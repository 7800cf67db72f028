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

/** One callback key: its id goes into every token it makes. */
export interface CallbackKey {
  id: string;
  key: Buffer | string;
}

/** The callback keys (the first issues, every one verifies) and how long a token lives (CALLBACK_TOKEN_TTL). */
export interface CallbackTokenSettings {
  keys: readonly CallbackKey[];
  ttlMs: number;
}

/**
 * Per-payment callback tokens, `{key id}.{expiry in unix seconds}.{HMAC of payment id and expiry}`, so a callback URL
 * cannot be guessed, reused for another payment, or used forever. Keys rotate like SIGNING_KEYS: a token made under
 * a key still listed verifies until it expires; one made under a removed key does not. The URL is derived where it
 * is needed (the initiation) and never stored in Temporal.
 */
export class CallbackTokens {
  private readonly byId: ReadonlyMap<string, CallbackKey>;

  constructor(
    private readonly settings: CallbackTokenSettings,
    /** Where the provider reaches the server (PUBLIC_BASE_URL). */
    private readonly publicBaseUrl?: string,
  ) {
    if (settings.keys.length === 0) throw new Error('callback tokens need at least one key');
    this.byId = new Map(settings.keys.map((key) => [key.id, key]));
  }

  /** A token for a payment's callback URL, made under the first key, expiring CALLBACK_TOKEN_TTL after `now`. */
  tokenFor(paymentId: string, now = Date.now()): string {
    const key = this.settings.keys[0]!;
    const expiry = Math.ceil((now + this.settings.ttlMs) / 1000);
    return `${key.id}.${expiry}.${mac(key, paymentId, expiry)}`;
  }

  /** The callback URL handed to the provider for this payment. */
  urlFor(paymentId: string): string {
    if (!this.publicBaseUrl) throw new Error('callback URLs need PUBLIC_BASE_URL');
    return `${this.publicBaseUrl}${CALLBACK_PATH}/${encodeURIComponent(paymentId)}/${this.tokenFor(paymentId)}`;
  }

  /** True when the token was made for this payment under a listed key and has not expired (MAC in constant time). */
  verify(paymentId: string, token: string, now = Date.now()): boolean {
    // Split from the right: the MAC (base64url) and the expiry hold no dot, a key id may.
    const macAt = token.lastIndexOf('.');
    const expiryAt = token.lastIndexOf('.', macAt - 1);
    if (expiryAt < 1) return false;
    const key = this.byId.get(token.slice(0, expiryAt));
    const expiryText = token.slice(expiryAt + 1, macAt);
    if (!key || !/^\d{1,12}$/.test(expiryText)) return false;
    const expiry = Number(expiryText);
    return sameSecret(mac(key, paymentId, expiry), token.slice(macAt + 1)) && expiry * 1000 > now;
  }
}

function mac(key: CallbackKey, paymentId: string, expiry: number): string {
  return hmacSha256(key.key, `callback:${key.id}:${expiry}:${paymentId}`).toString('base64url');
}
