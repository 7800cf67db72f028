import type { Pool, PoolClient } from 'pg';
import type { NotificationEvent } from '../domain/notification';
import type { DeliveryAttempt, DeliveryRecord, DeliveryStatus } from '../domain/notification-delivery';
import type { Database } from './database';
import { WhereClause } from './where-clause';

// Merchants' notifications as a transactional outbox (migrations/002_notifications.sql): events are inserted in the
// transaction that records their payment's or batch's change; relays (one per worker) take due ones, a lease at a
// time, and record each attempt.

/** The channel a record write wakes the relays on when it queued events. */
export const OUTBOX_CHANNEL = 'notification_events';

const OPEN = `('pending', 'delivering')`;

/**
 * Ends a statement that queues events: it wakes the relays that listen when its transaction commits; a relay that
 * missed it finds the events at its next poll.
 */
export const WAKE_RELAYS = `SELECT pg_notify('${OUTBOX_CHANNEL}', '')`;

/** Queues a payment's or batch's events with the write that records their change; an event already queued stays. */
export async function insertEvents(client: PoolClient, subject: string, events: readonly NotificationEvent[]) {
  if (events.length === 0) return;
  const { sql, values } = eventsInsert(subject, events);
  await client.query(`WITH queued AS (${sql}) ${WAKE_RELAYS}`, values);
}

/** The statement that queues `events` (an event already queued stays), its parameters numbered from `$first`. */
export function eventsInsert(
  subject: string,
  events: readonly NotificationEvent[],
  first = 1,
): { sql: string; values: unknown[] } {
  const values: unknown[] = [];
  const rows = events.map((event) => {
    values.push(event.id, event.merchant_id, event.type, subject, JSON.stringify(event), event.created_at);
    const n = first - 1 + values.length;
    return `($${n - 5}, $${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}, $${n})`;
  });
  const sql = `INSERT INTO notification_events (id, merchant_id, type, subject, body, created_at)
     VALUES ${rows.join(', ')} ON CONFLICT (id) DO NOTHING`;
  return { sql, values };
}

/** An event a relay took: deliver it as attempt `attempt` before its lease runs out. */
export interface ClaimedEvent {
  event: NotificationEvent;
  attempt: number;
  firstAttemptAt: Date;
}

// Due: waiting past its next attempt time, or taken by a relay whose lease ran out (it stopped mid-attempt). A subject's
// event waits while an earlier one of the same subject is open, so a merchant hears of a payment's changes in order.
const CLAIM_DUE = `
WITH due AS (
  SELECT e.id FROM notification_events e
  WHERE e.merchant_id = ANY($1::text[])
    AND e.status IN ${OPEN} AND e.next_attempt_at <= now()
    AND (e.status = 'pending' OR e.lease_until < now())
    AND NOT EXISTS (
      SELECT 1 FROM notification_events p WHERE p.subject = e.subject AND p.seq < e.seq AND p.status IN ${OPEN}
    )
  ORDER BY e.next_attempt_at, e.seq
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)
UPDATE notification_events e
SET status = 'delivering', attempts = e.attempts + 1, lease_until = now() + $3 * interval '1 millisecond',
    first_attempt_at = COALESCE(e.first_attempt_at, now())
FROM due WHERE e.id = due.id
RETURNING e.body, e.attempts, e.first_attempt_at`;

/** Takes up to `limit` due events of these merchants for `leaseMs`; another relay takes none of them meanwhile. */
export async function claimDueEvents(
  db: Database,
  merchants: readonly string[],
  limit: number,
  leaseMs: number,
): Promise<ClaimedEvent[]> {
  if (merchants.length === 0 || limit <= 0) return [];
  const { rows } = await db.query<{ body: NotificationEvent; attempts: number; first_attempt_at: Date }>(CLAIM_DUE, [
    merchants,
    limit,
    leaseMs,
  ]);
  return rows.map((row) => ({ event: row.body, attempt: row.attempts, firstAttemptAt: row.first_attempt_at }));
}

/** How one attempt went, and where the event stands after it. */
export interface AttemptRecord {
  eventId: string;
  attempt: number;
  at: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  /** `pending` retries at `nextAttemptAt`; the others are final (until an operator replays it). */
  status: Exclude<DeliveryStatus, 'delivering'>;
  nextAttemptAt?: Date;
}

/**
 * Records an attempt and the event's new state; false when the event is no longer this attempt's (its lease ran out
 * and another relay took it): that relay's record stands.
 */
export async function recordAttempt(db: Database, a: AttemptRecord): Promise<boolean> {
  const { rowCount } = await db.query(
    `WITH attempt AS (
       INSERT INTO notification_attempts (event_id, attempt, at, duration_ms, status_code, error)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING
     )
     UPDATE notification_events
     SET status = $7, next_attempt_at = COALESCE($8, next_attempt_at), lease_until = NULL,
         last_error = CASE WHEN $7 = 'delivered' THEN last_error ELSE $6 END,
         finished_at = CASE WHEN $7 = 'pending' THEN NULL ELSE now() END
     WHERE id = $1 AND status = 'delivering' AND attempts = $2`,
    [a.eventId, a.attempt, a.at, a.durationMs, a.statusCode, a.error, a.status, a.nextAttemptAt ?? null],
  );
  return rowCount === 1;
}

/** The soonest time a waiting event of these merchants is due, or undefined when none waits. */
export async function nextDueAt(db: Database, merchants: readonly string[]): Promise<Date | undefined> {
  if (merchants.length === 0) return undefined;
  const { rows } = await db.query<{ at: Date | null }>(
    `SELECT min(next_attempt_at) AS at FROM notification_events WHERE status = 'pending' AND merchant_id = ANY($1::text[])`,
    [merchants],
  );
  return rows[0]?.at ?? undefined;
}

interface EventRow {
  id: string;
  body: NotificationEvent;
  type: NotificationEvent['type'];
  merchant_id: string;
  subject: string;
  status: DeliveryStatus;
  attempts: number;
  last_error: string | null;
  created_at: Date;
  next_attempt_at: Date;
  first_attempt_at: Date | null;
  finished_at: Date | null;
  replays: number;
}

/** An event as the outbox holds it: the event itself and where its delivery stands. */
export interface StoredEvent {
  event: NotificationEvent;
  delivery: DeliveryRecord;
}

/** Which events a list holds; newest first by (created_at, id). */
export interface EventFilter {
  merchantId?: string;
  type?: string;
  subject?: string;
  /** Only events not delivered yet (waiting, being sent, failed or stopped). */
  undelivered?: boolean;
  statuses?: readonly DeliveryStatus[];
  createdFrom?: Date;
  /** The page starts after this event (in the list order). */
  startingAfter?: string;
  limit: number;
}

/** One page of events, newest first; `hasMore` when a page after its last one exists. */
export async function listEvents(
  db: Database,
  filter: EventFilter,
): Promise<{ data: StoredEvent[]; hasMore: boolean }> {
  const where = new WhereClause()
    .add((p) => `merchant_id = ${p}`, filter.merchantId)
    .add((p) => `type = ${p}`, filter.type)
    .add((p) => `subject = ${p}`, filter.subject)
    .add((p) => `status = ANY(${p}::text[])`, filter.statuses)
    .add((p) => `created_at >= ${p}`, filter.createdFrom)
    .add(
      (p) => `(created_at, id) < (SELECT created_at, id FROM notification_events WHERE id = ${p})`,
      filter.startingAfter,
    );
  if (filter.undelivered) where.addRaw(`status <> 'delivered'`);
  const { values } = where;
  values.push(filter.limit + 1);
  const { rows } = await db.query<EventRow>(
    `SELECT * FROM notification_events ${where.sql}
     ORDER BY created_at DESC, id DESC LIMIT $${values.length}`,
    values,
  );
  return { data: rows.slice(0, filter.limit).map(stored), hasMore: rows.length > filter.limit };
}

/** One event with its attempts, oldest first; undefined when there is none (of this merchant, when one is named). */
export async function readEvent(
  db: Pool | PoolClient,
  eventId: string,
  merchantId?: string,
): Promise<(StoredEvent & { attempts: DeliveryAttempt[] }) | undefined> {
  const { rows } = await db.query<EventRow>(
    'SELECT * FROM notification_events WHERE id = $1 AND ($2::text IS NULL OR merchant_id = $2)',
    [eventId, merchantId ?? null],
  );
  const row = rows[0];
  if (!row) return undefined;
  const attempts = await db.query<DeliveryAttempt & { at: Date }>(
    `SELECT attempt, at, duration_ms, status_code, error FROM notification_attempts WHERE event_id = $1 ORDER BY attempt`,
    [eventId],
  );
  return { ...stored(row), attempts: attempts.rows.map((a) => ({ ...a, at: a.at.toISOString() })) };
}

/**
 * Queues a failed or stopped event again with a fresh retry window; answers the event as it was before (so a caller
 * can say why nothing happened) and whether it was re-queued.
 */
export async function replayEvent(
  db: Pool | PoolClient,
  eventId: string,
  merchantId?: string,
): Promise<{ before: StoredEvent | undefined; replayed: StoredEvent | undefined }> {
  const { rows } = await db.query<EventRow>(
    `UPDATE notification_events
     SET status = 'pending', next_attempt_at = now(), first_attempt_at = NULL, finished_at = NULL,
         replays = replays + 1
     WHERE id = $1 AND ($2::text IS NULL OR merchant_id = $2) AND status IN ('failed', 'stopped')
     RETURNING *`,
    [eventId, merchantId ?? null],
  );
  if (rows[0]) return { before: undefined, replayed: stored(rows[0]) };
  const found = await readEvent(db, eventId, merchantId);
  return { before: found && { event: found.event, delivery: found.delivery }, replayed: undefined };
}

function stored(row: EventRow): StoredEvent {
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  return {
    event: row.body,
    delivery: {
      event_id: row.id,
      type: row.type,
      merchant_id: row.merchant_id,
      subject: row.subject,
      status: row.status,
      attempts: row.attempts,
      last_error: row.last_error,
      queued_at: row.created_at.toISOString(),
      first_attempt_at: iso(row.first_attempt_at),
      next_attempt_at: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
      finished_at: iso(row.finished_at),
      replays: row.replays,
    },
  };
}
