import type { Logger, MetricMeter } from '@temporalio/common';
import type { Dispatcher } from 'undici';
import { sdkCounterName, WorkerMetrics } from '../domain/metric-names';
import { DeliveryErrors, afterAttempt } from '../domain/notification-delivery';
import type { RetrySchedule } from '../domain/notification-delivery';
import type { Database } from '../records/database';
import { OUTBOX_CHANNEL, claimDueEvents, recordAttempt } from '../records/notification-outbox';
import type { ClaimedEvent } from '../records/notification-outbox';
import { listenOn } from '../records/listen-channel';
import { setAsideEvent } from '../records/merchant-endpoint-records';
import { EndpointDirectory } from './endpoint-directory';
import { postEvent } from './webhook-post';
import type { MerchantWebhook, PostOutcome } from './webhook-post';

/** Deliveries in flight at once per relay; the rest wait in the outbox. */
const CONCURRENCY = 20;
/** How often the outbox is looked at when nothing woke the relay (a missed wake-up, a retry coming due). */
const POLL_MS = 500;
/** After PostgreSQL failed: wait this long before trying again. */
const ERROR_PAUSE_MS = 2000;

const COUNTERS = {
  notificationAttempts: 'notification delivery attempts by outcome',
  notificationDeliveries: 'notifications by how they ended',
} as const;

export interface RelayDeps {
  database: Database;
  /** MERCHANT_WEBHOOKS, by merchant id; beside them, the endpoints merchants keep in PostgreSQL (endpoint-directory.ts). */
  webhooks: ReadonlyMap<string, MerchantWebhook>;
  retry: RetrySchedule;
  requestTimeoutMs: number;
  log: Logger;
  meter?: MetricMeter;
  /** The undici dispatcher the notifications are sent through (a keep-alive Agent). */
  http?: Dispatcher;
  clock?: () => Date;
}

/**
 * Delivers merchants' notifications from the outbox: takes due events (each subject's in order, different subjects in
 * parallel, up to a cap), POSTs each once, and records the attempt and what comes next (delivered, retried after a
 * backoff, failed once the retry window closed, stopped on a 410). Woken by the record writes' NOTIFY, and polls in case
 * it missed one; several relays (workers) share the outbox, each event leased to one at a time.
 */
export class NotificationRelay {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly endpoints: EndpointDirectory;
  private readonly clock: () => Date;
  private stopped = false;
  private wake: (() => void) | undefined;
  private unlisten: (() => void) | undefined;
  private listenAfter = 0;
  private loop: Promise<void> | undefined;
  private lastError = '';

  constructor(private readonly deps: RelayDeps) {
    this.clock = deps.clock ?? (() => new Date());
    this.endpoints = new EndpointDirectory(deps.database, deps.webhooks, (err) => {
      this.deps.log.warn('notifications: the webhook endpoints cannot be read; keeping the last ones', {
        error: err instanceof Error ? err.message : String(err),
      });
    });
  }

  /** Starts delivering (merchants' endpoints can come at any time: it runs even while no merchant has one). */
  start(): void {
    if (this.loop) return;
    this.loop = this.endpoints.start().then(() => this.run());
  }

  /** Stops taking events and waits for the deliveries under way to end. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp();
    await this.loop;
    this.endpoints.stop();
    this.unlisten?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let pause = POLL_MS;
      try {
        await this.listen();
        const free = CONCURRENCY - this.inFlight.size;
        const leaseMs = this.deps.requestTimeoutMs + 5000;
        const claimed = await claimDueEvents(this.deps.database, this.endpoints.merchants(), free, leaseMs);
        for (const event of claimed) this.track(this.deliver(event));
        if (claimed.length > 0 && claimed.length === free) pause = 0;
        this.lastError = '';
      } catch (err) {
        pause = ERROR_PAUSE_MS;
        const message = err instanceof Error ? err.message : String(err);
        // Said once per outage, not once per try.
        if (message !== this.lastError)
          this.deps.log.warn('notifications: the outbox cannot be read', { error: message });
        this.lastError = message;
      }
      if (pause > 0 && !this.stopped) await this.sleep(pause);
    }
    await Promise.all(this.inFlight);
  }

  private track(delivery: Promise<void>): void {
    this.inFlight.add(delivery);
    void delivery.finally(() => {
      this.inFlight.delete(delivery);
      // The subject's next event may be due now.
      this.wakeUp();
    });
  }

  private async deliver({ event, attempt, firstAttemptAt }: ClaimedEvent): Promise<void> {
    const [target, ...others] = this.endpoints.targets(event);
    if (!target) {
      await this.setAside(event.id, attempt);
      return;
    }
    const at = this.clock();
    const outcome = await this.postToAll(target, others, event, at);
    const now = this.clock();
    const next = afterAttempt(outcome.error, attempt, firstAttemptAt, now, this.deps.retry);
    this.count('notificationAttempts', { outcome: attemptOutcome(outcome.error) });
    const where = { eventId: event.id, type: event.type, merchantId: event.merchant_id, attempt };
    if (outcome.error) this.deps.log.warn('notification attempt failed', { ...where, error: outcome.detail });
    try {
      const recorded = await this.recordWithRetry({
        eventId: event.id,
        attempt,
        at,
        durationMs: now.getTime() - at.getTime(),
        statusCode: outcome.statusCode,
        error: outcome.error,
        ...next,
      });
      if (recorded && next.status !== 'pending') {
        this.count('notificationDeliveries', { outcome: next.status, type: event.type });
        this.deps.log.info('notification delivery ended', { ...where, outcome: next.status });
      }
    } catch (err) {
      // Its lease runs out and it is sent again: at least once (merchants deduplicate by the event id).
      this.deps.log.warn('notification attempt not recorded', {
        ...where,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /**
   * POSTs the event to each endpoint at once: the attempt succeeds when every one answered 2xx; otherwise it is tried
   * again at every endpoint (receivers deduplicate by the event id), and the first failure is the one recorded.
   */
  private async postToAll(
    first: MerchantWebhook,
    others: readonly MerchantWebhook[],
    event: ClaimedEvent['event'],
    at: Date,
  ): Promise<PostOutcome> {
    const options = { timeoutMs: this.deps.requestTimeoutMs, now: at, http: this.deps.http };
    const [outcome, ...rest] = await Promise.all([
      postEvent(first, event, options),
      ...others.map((target) => postEvent(target, event, options)),
    ]);
    return rest.reduce((shown, next) => (shown.error === null ? next : shown), outcome);
  }

  /** An event no endpoint takes (its type filtered out, or none enabled) is set aside, unsent. */
  private async setAside(eventId: string, attempt: number): Promise<void> {
    try {
      await setAsideEvent(this.deps.database, eventId, attempt);
    } catch (err) {
      // Its lease runs out and it is looked at again.
      this.deps.log.warn('notification not set aside', {
        eventId,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  private async recordWithRetry(attempt: Parameters<typeof recordAttempt>[1]): Promise<boolean> {
    for (let tries = 1; ; tries++) {
      try {
        return await recordAttempt(this.deps.database, attempt);
      } catch (err) {
        if (tries >= 3 || this.stopped) throw err;
        await new Promise((resolve) => setTimeout(resolve, 500 * tries));
      }
    }
  }

  /** Listens for the record writes' wake-ups; without a connection, the relay polls and tries again later. */
  private async listen(): Promise<void> {
    if (this.unlisten || Date.now() < this.listenAfter) return;
    this.listenAfter = Date.now() + 5000;
    // A broken connection (PostgreSQL restarted) is dropped; the next loop listens again.
    this.unlisten = await listenOn(
      this.deps.database,
      OUTBOX_CHANNEL,
      () => this.wakeUp(),
      () => (this.unlisten = undefined),
    );
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  private wakeUp(): void {
    this.wake?.();
  }

  private count(name: keyof typeof COUNTERS, tags: Record<string, string>): void {
    this.deps.meter?.createCounter(sdkCounterName(WorkerMetrics[name]), '', COUNTERS[name]).add(1, tags);
  }
}

/** An attempt's outcome as the metric labels it: `2xx`, `410`, `http` (another status), `timeout` or `network`. */
function attemptOutcome(error: string | null): string {
  if (error === null) return '2xx';
  if (error === DeliveryErrors.gone) return '410';
  return error.startsWith('http_') ? 'http' : error;
}
