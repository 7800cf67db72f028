import { z } from 'zod';
import { notificationEventSchema } from './notification';

/** How long and how often a notification is retried: exponential backoff from `initialMs` up to `maxIntervalMs`. */
export interface RetrySchedule {
  initialMs: number;
  maxIntervalMs: number;
  /** Delivery is attempted for this long after the first attempt, then the event is marked failed. */
  forMs: number;
}

/** Where one event stands: waiting its turn, being sent, or finished one way or another. */
export const DELIVERY_STATUSES = ['pending', 'delivering', 'delivered', 'failed', 'stopped'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const timestamp = z.iso.datetime({ offset: true });

/** One event's delivery as the outbox keeps it (and operators and merchants see it). */
export const deliveryRecordSchema = z
  .object({
    event_id: z.string(),
    type: notificationEventSchema.shape.type,
    merchant_id: z.string(),
    subject: z.string().describe('the payment or batch the event is about'),
    status: z
      .enum(DELIVERY_STATUSES)
      .describe(
        'pending: waiting for its turn or its next attempt; delivering: an attempt is under way; delivered: the ' +
          'endpoint answered 2xx; failed: no 2xx within the retry window; stopped: the endpoint answered 410 Gone',
      ),
    attempts: z.number().int().min(0),
    last_error: z.string().nullable().describe('why the last unsuccessful attempt failed: http_500, timeout, network…'),
    queued_at: timestamp,
    first_attempt_at: timestamp.nullable(),
    next_attempt_at: timestamp.nullable().describe('when a pending event is tried next'),
    finished_at: timestamp.nullable(),
    replays: z.number().int().min(0).describe('how often an operator sent it again'),
  })
  .meta({ id: 'NotificationDelivery' });
export type DeliveryRecord = z.infer<typeof deliveryRecordSchema>;

export const deliveryAttemptSchema = z
  .object({
    attempt: z.number().int().positive(),
    at: timestamp,
    duration_ms: z.number().int().min(0),
    status_code: z.number().int().nullable().describe("the endpoint's HTTP status; null when it did not answer"),
    error: z.string().nullable(),
  })
  .meta({ id: 'NotificationAttempt' });
export type DeliveryAttempt = z.infer<typeof deliveryAttemptSchema>;

/** An event as `GET /v1/events` lists it: the event as delivered, and where its delivery stands. */
export const eventResourceSchema = notificationEventSchema
  .extend({ delivery: deliveryRecordSchema })
  .meta({ id: 'Event' });
export const eventDetailSchema = eventResourceSchema
  .extend({ attempts: z.array(deliveryAttemptSchema).describe('every delivery attempt, oldest first') })
  .meta({ id: 'EventWithAttempts' });
export const eventListSchema = z
  .object({ data: z.array(eventResourceSchema), has_more: z.boolean() })
  .meta({ id: 'EventList' });
export type EventResource = z.infer<typeof eventResourceSchema>;

/** Why an attempt failed, as recorded (`last_error`, an attempt's `error`). */
export const DeliveryErrors = {
  /** 410 Gone: the merchant asked to stop. Never retried. */
  gone: 'http_410',
  /** No notification URL is configured for the merchant (any more). Never retried. */
  unconfigured: 'no_notification_url',
  timeout: 'timeout',
  network: 'network',
} as const;

/** The error recorded for a non-2xx answer other than 410. */
export function httpError(status: number): string {
  return `http_${status}`;
}

/**
 * Where an event stands after an attempt ended with `error` (none: delivered): retried after an exponential backoff
 * while the window from its first attempt lasts, stopped for good on a 410, else failed.
 */
export function afterAttempt(
  error: string | null,
  attempt: number,
  firstAttemptAt: Date,
  now: Date,
  retry: RetrySchedule,
): { status: 'delivered' | 'stopped' | 'failed' } | { status: 'pending'; nextAttemptAt: Date } {
  if (error === null) return { status: 'delivered' };
  if (error === DeliveryErrors.gone || error === DeliveryErrors.unconfigured) return { status: 'stopped' };
  const backoff = Math.min(retry.initialMs * 2 ** Math.min(attempt - 1, 30), retry.maxIntervalMs);
  const next = new Date(now.getTime() + backoff);
  if (next.getTime() > firstAttemptAt.getTime() + retry.forMs) return { status: 'failed' };
  return { status: 'pending', nextAttemptAt: next };
}
