import { CancellationScope, log, proxyLocalActivities, uuid4 } from '@temporalio/workflow';
import type { NotificationActivities } from '../activities/notification-activities';
import type { NotificationEvent, NotificationType } from '../domain/notification';
import { LocalActivityQueue } from './local-activity-queue';
import { workflowTime } from './time';

/** At most this many events per payment or batch (late callbacks could otherwise grow its history without bound). */
const MAX_EVENTS_PER_SUBJECT = 25;

// A short hand-off, safe to retry (the dispatcher drops an event id it has seen); local, so it costs the payment's
// history one marker. It keeps trying for an hour (Temporal unreachable), then the event is logged as lost; a worker
// without the activity (a test's) loses it at once.
const { queueNotification } = proxyLocalActivities<NotificationActivities>({
  startToCloseTimeout: '10s',
  scheduleToCloseTimeout: '1h',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    nonRetryableErrorTypes: ['NotFoundError'],
  },
});

/**
 * Hands a payment's or batch's events to its merchant's dispatcher, one after the other (in order), without ever
 * holding up the workflow: `emit` returns at once; the workflow awaits `drained()` only before it returns.
 */
export class Notifier {
  private chain: Promise<void> = Promise.resolve();
  private emitted = 0;

  /** `queue`: the workflow's one queue of local activities, shared with its record writes. */
  constructor(
    private readonly merchantId: string,
    private readonly subject: string,
    private readonly queue = new LocalActivityQueue(),
  ) {}

  /**
   * Queues an event about `object` (copied now: the notification shows it as it is at this change); `onQueued` runs
   * once the dispatcher has it.
   */
  emit(
    type: NotificationType,
    object: NotificationEvent['data']['object'],
    onQueued: (event: NotificationEvent) => void = () => undefined,
  ): void {
    if (this.emitted >= MAX_EVENTS_PER_SUBJECT) return;
    this.emitted += 1;
    const event: NotificationEvent = {
      id: `evt_${uuid4().replace(/-/g, '')}`,
      type,
      created_at: workflowTime().toISOString(),
      merchant_id: this.merchantId,
      data: { object: JSON.parse(JSON.stringify(object)) as typeof object },
    };
    this.chain = this.chain.then(() => this.handOff(event, onQueued));
  }

  /** Resolves once every event emitted so far is handed off (or given up). */
  async drained(): Promise<void> {
    for (let chain = this.chain; ; chain = this.chain) {
      await chain;
      if (chain === this.chain) return;
    }
  }

  private async handOff(event: NotificationEvent, onQueued: (event: NotificationEvent) => void): Promise<void> {
    try {
      // Even once the workflow was asked to cancel: the payment still settles, and its merchant still hears of it.
      const { queued } = await this.queue.run(() =>
        CancellationScope.nonCancellable(() =>
          queueNotification.executeWithOptions({ summary: `notify ${event.type}` }, [
            { merchantId: this.merchantId, subject: this.subject, event },
          ]),
        ),
      );
      if (queued) onQueued(event);
    } catch (err) {
      log.error('notification lost: it could not be handed to the dispatcher', {
        eventId: event.id,
        type: event.type,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
}
