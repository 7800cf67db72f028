// Plain types (no zod): the workflow bundle imports this module.
import type { NotificationEvent } from './notification';

/** How long and how often a notification is retried: exponential backoff from `initialMs` up to `maxIntervalMs`. */
export interface RetrySchedule {
  initialMs: number;
  maxIntervalMs: number;
  /** Delivery is attempted for this long after the first attempt, then the event is marked failed. */
  forMs: number;
  /** How long one attempt may take, the request timeout included. */
  attemptTimeoutMs: number;
}

/**
 * What a workflow hands a merchant's dispatcher (signed, kind `notification`): the event, the payment or batch it is
 * about (`subject`: events of one subject are delivered in order) and the retry schedule of the worker that queued it.
 */
export interface NotificationOrder {
  event: NotificationEvent;
  subject: string;
  retry: RetrySchedule;
}

/** Where one event stands: waiting its turn, being sent (attempts and backoff), or finished one way or another. */
export type DeliveryStatus = 'pending' | 'delivering' | 'delivered' | 'failed' | 'stopped';
export const DELIVERY_STATUSES = [
  'pending',
  'delivering',
  'delivered',
  'failed',
  'stopped',
] as const satisfies readonly DeliveryStatus[];

/** One event's delivery as the dispatcher keeps it (and operators see it). */
export interface DeliveryRecord {
  event_id: string;
  type: NotificationEvent['type'];
  merchant_id: string;
  subject: string;
  status: DeliveryStatus;
  /** Attempts known to the dispatcher: those of finished runs of the delivery activity (a running one's are live). */
  attempts: number;
  last_error: string | null;
  queued_at: string;
  first_attempt_at: string | null;
  finished_at: string | null;
  /** How often an operator re-queued it. */
  replays: number;
}

/** An operator's request to send a failed or stopped event again (signed, kind `notification-replay`). */
export interface NotificationReplay {
  eventId: string;
  operator?: string;
}

/** The delivery activity's input: the merchant's URL and secrets are looked up by the worker at each attempt. */
export interface DeliveryOrder {
  merchantId: string;
  event: NotificationEvent;
}

/** What a delivered attempt answered. */
export interface DeliveryReceipt {
  attempt: number;
  httpStatus: number;
}

/** What the delivery activity reports in its failures' details, for the dispatcher's record. */
export interface AttemptFailure {
  attempt: number;
  error: string;
}

/** ApplicationFailure types of the delivery activity: the type shows in `ops notifications list` while it retries. */
export const DeliveryFailureTypes = {
  /** 410 Gone: the merchant asked to stop. Never retried. */
  gone: 'http_410',
  /** No notification URL is configured for the merchant (any more). Never retried. */
  unconfigured: 'no_notification_url',
  timeout: 'timeout',
  network: 'network',
} as const;

/** The ApplicationFailure type of a non-2xx answer other than 410. */
export function httpFailureType(status: number): string {
  return `http_${status}`;
}
