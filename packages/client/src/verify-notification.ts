import { notificationEventSchema } from '../../../src/domain/notification';
import type { NotificationEvent } from '../../../src/domain/notification';
import { NotificationSignatureError, verifySignature } from './notification-signature';
import type { VerifyOptions } from './notification-signature';

/**
 * Checks a notification's `Payments-Signature` header against the raw body with any of the merchant's secrets, then
 * parses the event; throws NotificationSignatureError when either fails. Pass the body exactly as received.
 */
export function verifyNotification(
  rawBody: string | Uint8Array,
  header: string | undefined,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): NotificationEvent {
  const text = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
  verifySignature(text, header, secrets, options);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new NotificationSignatureError('the signed body is not JSON');
  }
  const event = notificationEventSchema.safeParse(json);
  if (!event.success) {
    const issue = event.error.issues[0];
    throw new NotificationSignatureError(
      `the signed body is not a notification event (${issue?.path.join('.') || '(body)'}: ${issue?.message ?? ''})`,
    );
  }
  return event.data;
}
