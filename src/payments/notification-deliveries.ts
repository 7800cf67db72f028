import type { DeliveryRecord, DeliveryStatus } from '../domain/notification-delivery';
import type { EventResource } from '../domain/notification-delivery';
import { inTransaction } from '../records/database';
import type { Database } from '../records/database';
import { recordOperatorAction } from '../records/operator-actions';
import { listEvents, readEvent, replayEvent } from '../records/notification-outbox';
import type { StoredEvent } from '../records/notification-outbox';
import { AppError, recordCall } from './app-errors';

/** How far back `GET /v1/events` reaches. */
export const EVENTS_KEPT_DAYS = 30;

/** A list of events as the API answers it: `{data, has_more}`. */
export interface EventPage {
  data: EventResource[];
  has_more: boolean;
}

/** Merchants' notifications as the outbox holds them: events for merchants, deliveries and replays for operators. */
export class Notifications {
  constructor(private readonly database: Database) {}

  /** A merchant's events of the last 30 days, newest first; a cursor naming no such event is `not_found`. */
  async events(filter: {
    merchantId: string;
    type?: string;
    subject?: string;
    undelivered?: boolean;
    startingAfter?: string;
    limit: number;
  }): Promise<EventPage> {
    const createdFrom = new Date(Date.now() - EVENTS_KEPT_DAYS * 86_400_000);
    if (filter.startingAfter !== undefined) await this.event(filter.startingAfter, filter.merchantId);
    const page = await recordCall(() => listEvents(this.database, { ...filter, createdFrom }));
    return { data: page.data.map(resource), has_more: page.hasMore };
  }

  /** One of a merchant's events with every delivery attempt. */
  async event(eventId: string, merchantId: string) {
    const found = await recordCall(() => readEvent(this.database, eventId, merchantId));
    if (!found) throw new AppError('not_found', 'no such event');
    return { ...resource(found), attempts: found.attempts };
  }

  /** Deliveries of one merchant or of all, newest first, optionally of some statuses only (operators). */
  async deliveries(filter: { merchantId?: string; status?: readonly DeliveryStatus[]; limit?: number } = {}) {
    const page = await recordCall(() =>
      listEvents(this.database, { merchantId: filter.merchantId, statuses: filter.status, limit: filter.limit ?? 200 }),
    );
    return page.data.map((stored): DeliveryRecord => stored.delivery);
  }

  /**
   * Queues a failed or stopped event again, with a fresh retry window, and records who did (one transaction);
   * `conflict` for any other event.
   */
  async replay(eventId: string, options: { operator: string; merchantId?: string }): Promise<DeliveryRecord> {
    const { before, replayed } = await recordCall(() =>
      inTransaction(this.database, async (client) => {
        const result = await replayEvent(client, eventId, options.merchantId);
        const { delivery } = result.replayed ?? {};
        if (delivery) {
          await recordOperatorAction(client, {
            operator: options.operator,
            action: 'notification.replay',
            subjectId: delivery.subject,
            merchantId: delivery.merchant_id,
            detail: { event_id: delivery.event_id, type: delivery.type, replays: delivery.replays },
            outcome: 'pending',
          });
        }
        return result;
      }),
    );
    if (replayed) return replayed.delivery;
    if (!before) throw new AppError('not_found', `no notification ${eventId}`);
    throw new AppError(
      'conflict',
      `event ${eventId} is ${before.delivery.status}; only failed or stopped events can be replayed`,
    );
  }
}

function resource({ event, delivery }: StoredEvent): EventResource {
  return { ...event, delivery };
}
