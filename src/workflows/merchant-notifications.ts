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
  private readonly reserved = new Map<NotificationType, string>();

  constructor(
    private readonly merchantId: string,
    private readonly outbox: EventOutbox,
  ) {}

  /** Queues an event about `object` (copied now: it shows it as it is at this change); undefined past the cap. */
  emit(type: NotificationType, object: NotificationEvent['data']['object']): NotificationEvent | undefined {
    if (this.emitted >= MAX_NOTIFICATIONS_PER_SUBJECT) return undefined;
    this.emitted += 1;
    const event = newNotificationEvent(uuid4(), type, this.merchantId, object, workflowTime());
    event.id = this.reserved.get(type) ?? event.id;
    this.reserved.delete(type);
    this.outbox.queue(event);
    return event;
  }

  /** A notifier that counts on from this one and queues to `outbox`: a fork's (PaymentState.fork). */
  fork(outbox: EventOutbox): Notifier {
    const copy = new Notifier(this.merchantId, outbox);
    copy.emitted = this.emitted;
    return copy;
  }

  /** Counts what `fork` emitted, whose events went out with the record of the fork's change. */
  adopt(fork: Notifier): void {
    this.emitted = fork.emitted;
  }

  /**
   * The next event of each of these types takes its id: they were queued already (a write the workflow then
   * superseded), and the outbox keeps the first event of an id, so the merchant hears of the change once.
   */
  reserve(events: readonly NotificationEvent[]): void {
    for (const event of events) this.reserved.set(event.type, event.id);
  }
}
