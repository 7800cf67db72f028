import { notificationEventSchema } from '../../../src/domain/notification';
import type { NotificationEvent } from '../../../src/domain/notification';
import { NotificationSignatureError, SIGNATURE_HEADER, verifySignature } from './notification-signature';
import type { VerifyOptions } from './notification-signature';
import {
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  verifyStandardWebhook,
} from './standard-webhooks';

/** A request's headers as Node (fastify, express: a plain object) or the Fetch API (`Headers`) hands them over. */
export type NotificationHeaders =
  Readonly<Record<string, string | readonly string[] | undefined>> | { get(name: string): string | null };

/**
 * Checks a notification's signature against the raw body with any of the merchant's secrets, then parses the event;
 * throws NotificationSignatureError when either fails. Pass the body exactly as received, and either the request's
 * headers (the Standard Webhooks `webhook-*` headers are checked when present, else `Payments-Signature`) or the
 * `Payments-Signature` header's value alone.
 */
export function verifyNotification(
  rawBody: string | Uint8Array,
  headers: NotificationHeaders | string | undefined,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): NotificationEvent {
  const text = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
  const read = (name: string) => (typeof headers === 'object' ? headerValue(headers, name) : undefined);
  const webhookId = read(WEBHOOK_ID_HEADER);
  const standard = read(WEBHOOK_SIGNATURE_HEADER) !== undefined;
  if (standard) {
    const signed = {
      id: webhookId,
      timestamp: read(WEBHOOK_TIMESTAMP_HEADER),
      signature: read(WEBHOOK_SIGNATURE_HEADER),
    };
    verifyStandardWebhook(text, signed, secrets, options);
  } else {
    verifySignature(text, typeof headers === 'object' ? read(SIGNATURE_HEADER) : headers, secrets, options);
  }
  const event = parseEvent(text);
  // The signed id is the event's: a body signed for one event cannot pass as another.
  if (standard && event.id !== webhookId) {
    throw new NotificationSignatureError(`the ${WEBHOOK_ID_HEADER} header is not the event's id`);
  }
  return event;
}

function parseEvent(text: string): NotificationEvent {
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

function headerValue(headers: NotificationHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function') return headers.get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return typeof value === 'string' ? value : value?.[0];
}
