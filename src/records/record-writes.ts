import type { BatchProgress } from '../domain/batch-model';
import type { NotificationEvent } from '../domain/notification';
import type { PaymentResource } from '../domain/payment-model';
import type { Queryable } from './database';
import { WAKE_RELAYS, eventsInsert } from './notification-outbox';

export interface PaymentRecord {
  resource: PaymentResource;
  merchantId: string;
  batchId?: string;
  /** The workflow's count of recorded changes: a write with a lower one than the row's changes nothing. */
  revision: number;
  /** The workflow's clock at the change (ISO): it orders writes before the revision, so a Reset's new run wins. */
  recordedAt: string;
  /** Notifications about this change, queued in the same transaction (the outbox); an event already queued stays. */
  events?: NotificationEvent[];
}

export interface BatchRecord {
  resource: BatchProgress;
  merchantId: string;
  reference: string;
  revision: number;
  recordedAt: string;
  events?: NotificationEvent[];
}

// A row the server has not inserted (a batch item's) is created; an existing one changes only for a newer revision, so
// a retried or late write never moves a record back.
const UPSERT_PAYMENT = `
INSERT INTO payments
  (id, merchant_id, type, reference, status, amount, batch_id, resource, revision, recorded_at, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
ON CONFLICT (id) DO UPDATE SET
  status = EXCLUDED.status, resource = EXCLUDED.resource, revision = EXCLUDED.revision,
  recorded_at = EXCLUDED.recorded_at, updated_at = EXCLUDED.updated_at,
  batch_id = COALESCE(payments.batch_id, EXCLUDED.batch_id)
WHERE (payments.recorded_at, payments.revision) < (EXCLUDED.recorded_at, EXCLUDED.revision)`;

const UPSERT_BATCH = `
INSERT INTO batches (id, merchant_id, reference, status, resource, revision, recorded_at, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())
ON CONFLICT (id) DO UPDATE SET
  status = EXCLUDED.status, resource = EXCLUDED.resource, revision = EXCLUDED.revision,
  recorded_at = EXCLUDED.recorded_at, updated_at = now()
WHERE (batches.recorded_at, batches.revision) < (EXCLUDED.recorded_at, EXCLUDED.revision)`;

// A repair (`records verify`) writes what the workflow shows now over the record it read, only while the row still holds
// that version ($9 revision, $10 recorded_at; both null: there was no row, and one written since is the workflow's).
// Its version is the one read plus one revision, at the later of its time and the resource's last change: past the
// stale row, yet below any later write of the workflow (whose clock and revision are past both).
const REPAIR_PAYMENT = `
INSERT INTO payments
  (id, merchant_id, type, reference, status, amount, batch_id, resource, revision, recorded_at, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, COALESCE($9::integer + 1, 0), GREATEST($10::timestamptz, $12::timestamptz), $11, $12)
ON CONFLICT (id) DO UPDATE SET
  status = EXCLUDED.status, resource = EXCLUDED.resource, revision = EXCLUDED.revision,
  recorded_at = EXCLUDED.recorded_at, updated_at = EXCLUDED.updated_at,
  batch_id = COALESCE(payments.batch_id, EXCLUDED.batch_id)
WHERE payments.revision = $9::integer AND payments.recorded_at = $10::timestamptz`;

const REPAIR_BATCH = `
INSERT INTO batches (id, merchant_id, reference, status, resource, revision, recorded_at, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, COALESCE($6::integer + 1, 0), GREATEST($7::timestamptz, $8::timestamptz), $8, now())
ON CONFLICT (id) DO UPDATE SET
  status = EXCLUDED.status, resource = EXCLUDED.resource, revision = EXCLUDED.revision,
  recorded_at = EXCLUDED.recorded_at, updated_at = now()
WHERE batches.revision = $6::integer AND batches.recorded_at = $7::timestamptz`;

/** The version of the record a repair read (`readVersioned`), or undefined when there was none. */
export interface SeenVersion {
  recordedAt: string;
  revision: number;
}

// Inserted, the first branch answers this run's id; taken already, the second answers the earlier claim's (the
// statement's snapshot does not see its own insert, so never both).
const CLAIM_INITIATION = `
WITH inserted AS (
  INSERT INTO initiation_claims (payment_id, run_id, execution) VALUES ($1, $2, $3)
  ON CONFLICT (payment_id) DO NOTHING RETURNING run_id, execution
)
SELECT run_id, execution, NULL::jsonb AS answer FROM inserted
UNION ALL
SELECT c.run_id, c.execution, a.answer FROM initiation_claims c
LEFT JOIN initiation_answers a ON a.payment_id = c.payment_id AND a.run_id = c.run_id
WHERE c.payment_id = $1`;

/**
 * Records a payment as its workflow last saw it, unless the record already holds this change or a later one, and
 * queues the change's notifications in the same transaction.
 */
export async function upsertPaymentRecord(db: Queryable, record: PaymentRecord): Promise<void> {
  const upsert = { sql: UPSERT_PAYMENT, values: paymentRow(record, record.revision, record.recordedAt) };
  await withEvents(db, record.resource.id, record.events, upsert);
}

/**
 * Runs a record's upsert alone, or with the events it queues as one statement: one transaction, one round trip (a
 * record write is on the payment's path, inside its workflow task), and the relays woken on its commit.
 */
async function withEvents(
  db: Queryable,
  subject: string,
  events: NotificationEvent[] | undefined,
  upsert: { sql: string; values: unknown[] },
): Promise<void> {
  if (!events || events.length === 0) {
    await db.query(upsert.sql, upsert.values);
    return;
  }
  const queued = eventsInsert(subject, events, upsert.values.length + 1);
  await db.query(`WITH record AS (${upsert.sql}), queued AS (${queued.sql}) ${WAKE_RELAYS}`, [
    ...upsert.values,
    ...queued.values,
  ]);
}

/** A payment statement's parameters, $1 to $12, with the version ($9, $10) each statement reads its own way. */
function paymentRow(
  record: { resource: PaymentResource; merchantId: string; batchId?: string },
  revision: number | null,
  recordedAt: string | null,
): unknown[] {
  const { resource, merchantId, batchId } = record;
  return [
    resource.id,
    merchantId,
    resource.type,
    resource.reference,
    resource.status,
    String(resource.amount),
    batchId ?? null,
    JSON.stringify(resource),
    revision,
    recordedAt,
    resource.created_at,
    resource.updated_at,
  ];
}

/** Records a batch's progress, unless the record already holds this change or a later one; its events likewise. */
export async function upsertBatchRecord(db: Queryable, record: BatchRecord): Promise<void> {
  const { resource, merchantId, reference, revision, recordedAt } = record;
  const values = [
    resource.id,
    merchantId,
    reference,
    resource.status,
    JSON.stringify(resource),
    revision,
    recordedAt,
    resource.created_at,
  ];
  await withEvents(db, resource.id, record.events, { sql: UPSERT_BATCH, values });
}

/**
 * Replaces a lagging or missing payment record with what its workflow shows now; false when the record changed since
 * it was read (the workflow wrote: that write stands).
 */
export async function repairPaymentRecord(
  db: Queryable,
  record: { resource: PaymentResource; merchantId: string; batchId?: string },
  seen: SeenVersion | undefined,
): Promise<boolean> {
  const { rowCount } = await db.query(
    REPAIR_PAYMENT,
    paymentRow(record, seen?.revision ?? null, seen?.recordedAt ?? null),
  );
  return rowCount === 1;
}

/** Replaces a lagging or missing batch record with the batch's progress now; false when it changed since it was read. */
export async function repairBatchRecord(
  db: Queryable,
  record: { resource: BatchProgress; merchantId: string },
  seen: SeenVersion | undefined,
): Promise<boolean> {
  const { resource, merchantId } = record;
  const { rowCount } = await db.query(REPAIR_BATCH, [
    resource.id,
    merchantId,
    resource.reference,
    resource.status,
    JSON.stringify(resource),
    seen?.revision ?? null,
    seen?.recordedAt ?? null,
    resource.created_at,
  ]);
  return rowCount === 1;
}

/** Who claims an initiation: a workflow run, and the one execution of its initiation activity that sends it. */
export interface InitiationClaimant {
  runId: string;
  execution: string;
}

/** A claim's outcome: held by this execution, or taken by another (with the answer it kept, when of the same run). */
export type InitiationClaim<T> = { held: true } | { held: false; earlierAnswer: T | undefined };

/**
 * Takes a payment's one initiation claim for one execution of a run's initiation: held when just taken, or taken by
 * an earlier try of this same execution whose answer was lost; not held when another run or another execution took
 * it (that one may have sent the initiation). Another execution of the same run hands back the answer it kept
 * (keepInitiationAnswer), if it lived to keep one.
 */
export async function claimInitiation<T>(
  db: Queryable,
  paymentId: string,
  claimant: InitiationClaimant,
): Promise<InitiationClaim<T>> {
  const { runId, execution } = claimant;
  const { rows } = await db.query<{ run_id: string; execution: string; answer: T | null }>(CLAIM_INITIATION, [
    paymentId,
    runId,
    execution,
  ]);
  const claim = rows[0];
  if (claim?.run_id === runId && claim.execution === execution) return { held: true };
  return { held: false, earlierAnswer: claim?.run_id === runId ? (claim.answer ?? undefined) : undefined };
}

// The answer kept and the transaction bound in one round trip, on the first workflow task's path; as in
// BIND_TRANSACTION, the second branch answers a binding made before (the snapshot does not see the first's insert).
const KEEP_INITIATION_ANSWER = `
WITH kept AS (
  INSERT INTO initiation_answers (payment_id, run_id, answer) VALUES ($1, $2, $3) ON CONFLICT (payment_id) DO NOTHING
), inserted AS (
  INSERT INTO provider_transactions (transaction_id, payment_id) SELECT $4::text, $1 WHERE $4::text IS NOT NULL
  ON CONFLICT (transaction_id) DO NOTHING RETURNING payment_id
)
SELECT payment_id FROM inserted
UNION ALL
SELECT payment_id FROM provider_transactions WHERE transaction_id = $4::text`;

/**
 * Keeps what the provider answered the initiation a run claimed, for another execution of that run to answer again,
 * and binds the transaction it names (`transactionId`, as bindTransaction) in the same statement: answers the payment
 * that transaction is bound to (maybe another), or null when there is none to bind.
 */
export async function keepInitiationAnswer<T>(
  db: Queryable,
  paymentId: string,
  runId: string,
  answer: T,
  transactionId: string | null,
): Promise<string | null> {
  const { rows } = await db.query<{ payment_id: string }>(KEEP_INITIATION_ANSWER, [
    paymentId,
    runId,
    JSON.stringify(answer),
    transactionId,
  ]);
  return transactionId === null ? null : await boundPayment(db, transactionId, rows);
}

const KEEP_FIRST_ANSWER = `
WITH inserted AS (
  INSERT INTO confirmation_answers (payment_id, run_id, transaction_id, answer) VALUES ($1, $2, $3, $4)
  ON CONFLICT (payment_id, run_id, transaction_id) DO NOTHING RETURNING answer
)
SELECT answer FROM inserted
UNION ALL
SELECT answer FROM confirmation_answers WHERE payment_id = $1 AND run_id = $2 AND transaction_id = $3`;

/** Which run's confirmations an answer belongs to, and the transaction they asked about (null: by our reference). */
export interface ConfirmationKey {
  paymentId: string;
  runId: string;
  transactionId: string | null;
}

/** Keeps the first status answer given under `key` and answers it: this one, or the one kept before. */
export async function keepFirstAnswer<T>(db: Queryable, key: ConfirmationKey, answer: T): Promise<T> {
  const values = [key.paymentId, key.runId, key.transactionId ?? ''];
  const { rows } = await db.query<{ answer: T }>(KEEP_FIRST_ANSWER, [...values, JSON.stringify(answer)]);
  if (rows[0]) return rows[0].answer;
  // Kept by a concurrent execution that committed while this statement waited for it: a new statement sees it.
  const kept = await db.query<{ answer: T }>(
    'SELECT answer FROM confirmation_answers WHERE payment_id = $1 AND run_id = $2 AND transaction_id = $3',
    values,
  );
  if (!kept.rows[0]) throw new Error(`the answer kept for payment ${key.paymentId} vanished while it was read`);
  return kept.rows[0].answer;
}

const BIND_TRANSACTION = `
WITH inserted AS (
  INSERT INTO provider_transactions (transaction_id, payment_id) VALUES ($1, $2)
  ON CONFLICT (transaction_id) DO NOTHING RETURNING payment_id
)
SELECT payment_id FROM inserted
UNION ALL
SELECT payment_id FROM provider_transactions WHERE transaction_id = $1`;

/** Binds a provider transaction to a payment, once and for good; answers the payment it is bound to (maybe another). */
export async function bindTransaction(db: Queryable, transactionId: string, paymentId: string): Promise<string> {
  const { rows } = await db.query<{ payment_id: string }>(BIND_TRANSACTION, [transactionId, paymentId]);
  return await boundPayment(db, transactionId, rows);
}

/**
 * The payment a binding statement answered; none when another payment's binding, committed while the statement
 * waited for it, is not in the statement's snapshot: a new statement reads it.
 */
async function boundPayment(db: Queryable, transactionId: string, rows: { payment_id: string }[]): Promise<string> {
  if (rows[0]) return rows[0].payment_id;
  const bound = await db.query<{ payment_id: string }>(
    'SELECT payment_id FROM provider_transactions WHERE transaction_id = $1',
    [transactionId],
  );
  if (!bound.rows[0]) throw new Error(`the binding of transaction ${transactionId} vanished while it was read`);
  return bound.rows[0].payment_id;
}

/**
 * Records what the server shows for a payment whose workflow ended before its outcome (terminated, cancelled…): that
 * workflow never writes again. A run a Reset starts afterwards writes later on the workflow's clock and supersedes it.
 */
export async function recordEndedWithoutOutcome(db: Queryable, resource: PaymentResource): Promise<void> {
  await db.query(
    `UPDATE payments SET status = $2, resource = $3, revision = revision + 1, recorded_at = now(), updated_at = $4
     WHERE id = $1 AND status NOT IN ('succeeded', 'failed') AND recorded_at < now()`,
    [resource.id, resource.status, JSON.stringify(resource), resource.updated_at],
  );
}
