import { uuid4 } from '@temporalio/workflow';
import { newNotificationEvent } from '../domain/notification-event';
import type { NotificationEvent, NotificationType } from '../domain/notification';
import { MAX_NOTIFICATIONS_PER_SUBJECT } from '../domain/payment-events';
import { workflowTime } from './time';

/** Where events go: the record writer, which queues them in the outbox with the record of the change they tell. */
export interface EventOutbox {
  queue(event: NotificationEvent): void;
}

/**
 * Builds a payment's or batch's notification events: each one goes to the outbox with the next record write, in the
 * same transaction, so the merchant hears of a change exactly when its record holds it. The worker's relay delivers.
 */
export class Notifier {
  private emitted = 0;

  constructor(
    private readonly merchantId: string,
    private readonly outbox: EventOutbox,
  ) {}

  /** Queues an event about `object` (copied now: it shows it as it is at this change); undefined past the cap. */
  emit(type: NotificationType, object: NotificationEvent['data']['object']): NotificationEvent | undefined {
    if (this.emitted >= MAX_NOTIFICATIONS_PER_SUBJECT) return undefined;
    this.emitted += 1;
    const event = newNotificationEvent(uuid4(), type, this.merchantId, object, workflowTime());
    this.outbox.queue(event);
    return event;
  }
}
