import type { DeliveryRecord, NotificationOrder } from '../domain/notification-delivery';

/** Finished deliveries kept for `ops notifications list` (the oldest go first); failed and stopped ones are kept longer. */
const MAX_DELIVERED = 200;
const MAX_UNDELIVERED = 500;
/** Event ids remembered to drop a second hand-off of the same event. */
const MAX_SEEN = 5000;

/** One event: its record, and the order itself while it may still be sent (dropped once delivered). */
export interface DispatchEntry {
  record: DeliveryRecord;
  order?: NotificationOrder;
}

/** What a dispatcher run carries into the next (continue-as-new): everything not yet delivered, and recent records. */
export interface DispatcherCarry {
  entries: DispatchEntry[];
  queues: [string, string[]][];
  seen: string[];
}

/** How a delivery ended. */
export type DeliveryEnd =
  | { status: 'delivered'; attempts: number }
  | { status: 'failed' | 'stopped'; attempts: number | undefined; error: string };

/**
 * A merchant's notifications: a FIFO per subject (payment or batch), so one subject's events go out in order while
 * different subjects go out in parallel, up to a cap. Deterministic and free of Temporal calls.
 */
export class DispatcherState {
  private readonly entries = new Map<string, DispatchEntry>();
  private readonly queues = new Map<string, string[]>();
  private readonly seen: string[];
  private readonly seenSet: Set<string>;
  private readonly inFlight = new Set<string>();

  constructor(carry?: DispatcherCarry) {
    for (const entry of carry?.entries ?? []) {
      // A delivery cut off by continue-as-new starts again in this run.
      if (entry.record.status === 'delivering') entry.record.status = 'pending';
      this.entries.set(entry.record.event_id, entry);
    }
    for (const [subject, ids] of carry?.queues ?? []) this.queues.set(subject, [...ids]);
    this.seen = [...(carry?.seen ?? [])];
    this.seenSet = new Set(this.seen);
  }

  /** Queues an event behind its subject's earlier ones; false for an event already seen (a repeated hand-off). */
  enqueue(order: NotificationOrder, now: Date): boolean {
    const id = order.event.id;
    if (this.seenSet.has(id) || this.entries.has(id)) return false;
    this.remember(id);
    this.entries.set(id, {
      order,
      record: {
        event_id: id,
        type: order.event.type,
        merchant_id: order.event.merchant_id,
        subject: order.subject,
        status: 'pending',
        attempts: 0,
        last_error: null,
        queued_at: now.toISOString(),
        first_attempt_at: null,
        finished_at: null,
        replays: 0,
      },
    });
    this.queueOf(order.subject).push(id);
    return true;
  }

  /** True when a subject's head event waits and fewer than `cap` deliveries run. */
  canStart(cap: number): boolean {
    if (this.inFlight.size >= cap) return false;
    for (const ids of this.queues.values()) {
      if (ids[0] !== undefined && !this.inFlight.has(ids[0])) return true;
    }
    return false;
  }

  /** The head events to send now (oldest subjects first), at most `cap` in flight; each is marked delivering. */
  start(cap: number, now: Date): DispatchEntry[] {
    const started: DispatchEntry[] = [];
    for (const ids of this.queues.values()) {
      if (this.inFlight.size >= cap) break;
      const head = ids[0];
      const entry = head === undefined ? undefined : this.entries.get(head);
      if (!entry || this.inFlight.has(head!)) continue;
      this.inFlight.add(entry.record.event_id);
      entry.record.status = 'delivering';
      entry.record.first_attempt_at ??= now.toISOString();
      started.push(entry);
    }
    return started;
  }

  /** A delivery ended: the subject's next event may go. */
  finish(eventId: string, end: DeliveryEnd, now: Date): DeliveryRecord | undefined {
    this.inFlight.delete(eventId);
    const entry = this.entries.get(eventId);
    if (!entry) return undefined;
    const { record } = entry;
    record.status = end.status;
    record.attempts += end.attempts ?? 1;
    record.last_error = end.status === 'delivered' ? record.last_error : end.error;
    record.finished_at = now.toISOString();
    if (end.status === 'delivered') delete entry.order;
    const ids = this.queues.get(record.subject);
    if (ids?.[0] === eventId) ids.shift();
    if (ids?.length === 0) this.queues.delete(record.subject);
    this.trim();
    return record;
  }

  /** A delivery cut off before it ended (continue-as-new): it stays at its subject's head, to be sent again. */
  interrupted(eventId: string): void {
    this.inFlight.delete(eventId);
    const entry = this.entries.get(eventId);
    if (entry?.record.status === 'delivering') entry.record.status = 'pending';
  }

  /** Why an operator may not replay this event, or undefined when they may. */
  replayRefusal(eventId: string): string | undefined {
    const entry = this.entries.get(eventId);
    if (!entry) return `no event ${eventId} is kept by this dispatcher`;
    if (entry.record.status !== 'failed' && entry.record.status !== 'stopped') {
      return `event ${eventId} is ${entry.record.status}; only failed or stopped events can be replayed`;
    }
    if (!entry.order) return `event ${eventId} is no longer kept in full`;
    return undefined;
  }

  /** Queues a failed or stopped event again, with a fresh retry window, behind its subject's waiting events. */
  replay(eventId: string): DeliveryRecord | undefined {
    const entry = this.entries.get(eventId);
    if (!entry || this.replayRefusal(eventId)) return undefined;
    Object.assign(entry.record, { status: 'pending', first_attempt_at: null, finished_at: null });
    entry.record.replays += 1;
    // Back to the end of the insertion order, so trimming keeps it.
    this.entries.delete(eventId);
    this.entries.set(eventId, entry);
    this.queueOf(entry.record.subject).push(eventId);
    return entry.record;
  }

  /** Every kept record, oldest first. */
  records(): DeliveryRecord[] {
    return [...this.entries.values()].map((entry) => ({ ...entry.record }));
  }

  /** Events waiting or being sent. */
  get open(): number {
    let count = 0;
    for (const ids of this.queues.values()) count += ids.length;
    return count;
  }

  /** What the next run starts from. */
  carry(): DispatcherCarry {
    return {
      entries: [...this.entries.values()],
      queues: [...this.queues.entries()],
      seen: [...this.seen],
    };
  }

  private queueOf(subject: string): string[] {
    let ids = this.queues.get(subject);
    if (!ids) this.queues.set(subject, (ids = []));
    return ids;
  }

  private remember(id: string): void {
    this.seen.push(id);
    this.seenSet.add(id);
    if (this.seen.length > MAX_SEEN) this.seenSet.delete(this.seen.shift()!);
  }

  /** Drops the oldest finished records beyond the bounds; open ones are never dropped. */
  private trim(): void {
    for (const [status, max] of [
      ['delivered', MAX_DELIVERED],
      ['failed', MAX_UNDELIVERED],
      ['stopped', MAX_UNDELIVERED],
    ] as const) {
      const ids = [...this.entries.values()].filter((e) => e.record.status === status).map((e) => e.record.event_id);
      for (const id of ids.slice(0, Math.max(ids.length - max, 0))) this.entries.delete(id);
    }
  }
}
