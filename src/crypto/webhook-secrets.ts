import { randomBytes } from 'node:crypto';

/** Bytes of a new notification signing key: within the 24 to 64 the Standard Webhooks specification asks for. */
const SECRET_BYTES = 32;

/** A new notification signing secret as Standard Webhooks writes it: `whsec_` then the random key in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}
