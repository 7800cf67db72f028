import { canonicalJson } from '../crypto/canonical-json';
import { hmacSha256 } from '../crypto/digest';
import { splitCardData } from '../domain/personal-data';
import type { PaymentRequest } from '../domain/requests';

/** A keyed digest of a request, kept in a workflow's memo to tell a repeated request from a reused reference. */
export function requestFingerprint(secret: string, scope: string, request: unknown): string {
  return hmacSha256(secret, `${scope}:${canonicalJson(request)}`).toString('base64url');
}

/**
 * A payment request's fingerprint, without its card data: re-sending a card payment's reference with a guessed card
 * number or expiry answers exactly as with the right one (no oracle), and nothing derived from the CVV is kept.
 */
export function paymentFingerprint(secret: string, merchantId: string, request: PaymentRequest): string {
  const kept = request.type === 'card_payment' ? splitCardData(request).rest : request;
  return requestFingerprint(secret, `request:${merchantId}`, kept);
}
