import { CancellationScope, log, proxyLocalActivities, uuid4 } from '@temporalio/workflow';
import type { NotificationActivities } from '../activities/notification-activities';
import type { NotificationEvent, NotificationType } from '../domain/notification';
import { isTerminal } from '../domain/payment-model';
import type { PaymentResource } from '../domain/payment-model';
import { workflowTime } from './time';

/**
 * The patch behind which payment and batch workflows notify merchants. Histories recorded before it replay as they
 * ran (no hand-offs); runs that pass it for the first time hand their events off.
 */
export const MERCHANT_NOTIFICATIONS = 'merchant-notifications';

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

  constructor(
    private readonly merchantId: string,
    private readonly subject: string,
    private readonly onQueued: (event: NotificationEvent) => void = () => undefined,
  ) {}

  /** Queues an event about `object` (copied now: the notification shows it as it is at this change). */
  emit(type: NotificationType, object: NotificationEvent['data']['object']): void {
    if (this.emitted >= MAX_EVENTS_PER_SUBJECT) return;
    this.emitted += 1;
    const event: NotificationEvent = {
      id: `evt_${uuid4().replace(/-/g, '')}`,
      type,
      created_at: workflowTime().toISOString(),
      merchant_id: this.merchantId,
      data: { object: JSON.parse(JSON.stringify(object)) as typeof object },
    };
    this.chain = this.chain.then(() => this.handOff(event));
  }

  /** Resolves once every event emitted so far is handed off (or given up). */
  async drained(): Promise<void> {
    for (let chain = this.chain; ; chain = this.chain) {
      await chain;
      if (chain === this.chain) return;
    }
  }

  private async handOff(event: NotificationEvent): Promise<void> {
    try {
      // Even once the workflow was asked to cancel: the payment still settles, and its merchant still hears of it.
      const { queued } = await CancellationScope.nonCancellable(() =>
        queueNotification.executeWithOptions({ summary: `notify ${event.type}` }, [
          { merchantId: this.merchantId, subject: this.subject, event },
        ]),
      );
      if (queued) this.onQueued(event);
    } catch (err) {
      log.error('notification lost: it could not be handed to the dispatcher', {
        eventId: event.id,
        type: event.type,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
}

/** Decides which of a payment's changes its merchant hears about, each once: call `observe` after any change. */
export class PaymentNotices {
  private readonly sent = new Set<NotificationType>();
  private contradicting = 0;

  constructor(private readonly notifier: Notifier) {}

  /** Emits what the payment's current state calls for and was not yet told. */
  observe(payment: PaymentResource): void {
    const once = (type: NotificationType) => {
      if (this.sent.has(type)) return;
      this.sent.add(type);
      this.notifier.emit(type, payment);
    };
    if (payment.status === 'pending' && payment.next_action) once('payment.action_required');
    if (payment.status === 'needs_review') once('payment.needs_review');
    if (isTerminal(payment.status) && !this.sent.has('payment.resolved')) {
      // The outcome is told once: by an operator's resolution, or as succeeded or failed.
      const resolved = payment.events.some((event) => event.type === 'resolved');
      if (resolved) once('payment.resolved');
      else if (!this.sent.has('payment.succeeded') && !this.sent.has('payment.failed'))
        once(`payment.${payment.status}`);
    }
    const contradicting = payment.events.filter((event) => event.type === 'callback_contradicting').length;
    for (; this.contradicting < contradicting; this.contradicting++)
      this.notifier.emit('payment.late_callback', payment);
  }
}
