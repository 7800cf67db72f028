import type { PaymentSummary } from '../domain/api-resources';
import type { BatchProgress } from '../domain/batch-model';
import type { PaymentResource, PaymentStatus } from '../domain/payment-model';
import { isTerminal } from '../domain/payment-model';
import type { PaymentType } from '../domain/requests';
import type { Database } from './database';
import { WhereClause } from './where-clause';

// What the merchant API reads: payment records, one by id or a page of them, newest first by (created_at, id).

/**
 * A payment as last recorded, how many changes of its workflow that record holds (0: as the server created it), and
 * the merchant its row names (the reader checks the resource is the one asked for: payments/bound-answers.ts).
 */
export interface RecordedPayment {
  payment: PaymentResource;
  revision: number;
  merchantId: string;
}

/** The recorded payment, or undefined when there is no record of it. */
export async function readPayment(db: Database, paymentId: string): Promise<RecordedPayment | undefined> {
  const { rows } = await db.query<{ resource: PaymentResource; revision: number; merchant_id: string }>(
    'SELECT resource, revision, merchant_id FROM payments WHERE id = $1',
    [paymentId],
  );
  const row = rows[0];
  return row && { payment: row.resource, revision: row.revision, merchantId: row.merchant_id };
}

/** Which payment records a list holds: every field optional but `limit`; `createdFrom` inclusive, `createdBefore` not. */
export interface RecordFilter {
  merchantId?: string;
  status?: PaymentStatus;
  type?: PaymentType;
  reference?: string;
  batchId?: string;
  createdFrom?: Date;
  createdBefore?: Date;
  /** The page starts after this payment (in the list order); it must have a record. */
  startingAfter?: string;
  limit: number;
}

/** One page of payment records, newest first; `hasMore` when a page after its last one exists. */
export interface RecordPage {
  data: PaymentSummary[];
  hasMore: boolean;
}

interface SummaryRow {
  id: string;
  type: PaymentType;
  reference: string;
  status: PaymentStatus;
  amount: string;
  created_at: Date;
  updated_at: Date;
  metadata: Record<string, string> | null;
}

/** True when a payment record with this id exists (a list cursor must name one). */
export async function paymentExists(db: Database, paymentId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM payments WHERE id = $1', [paymentId]);
  return rowCount === 1;
}

/**
 * One page of the payment records matching the filter, newest first by (created_at, id): keyset pagination, so a page
 * costs the same however deep it is, and a cursor always finds the same next page.
 */
export async function listPayments(db: Database, filter: RecordFilter): Promise<RecordPage> {
  const { where, values } = selectionWhere(filter);
  values.push(filter.limit + 1);
  const { rows } = await db.query<SummaryRow>(
    `SELECT id, type, reference, status, amount::text AS amount, created_at, updated_at, resource->'metadata' AS metadata
     FROM payments ${where}
     ORDER BY created_at DESC, id DESC LIMIT $${values.length}`,
    values,
  );
  return { data: rows.slice(0, filter.limit).map(summary), hasMore: rows.length > filter.limit };
}

/** Which payment records a list or an export holds: a record filter without its paging. */
export type RecordSelection = Omit<RecordFilter, 'limit' | 'startingAfter'> & { startingAfter?: string };

/** The WHERE clause (empty for every record) of a selection, and its values as $1, $2… */
export function selectionWhere(filter: RecordSelection): { where: string; values: unknown[] } {
  const where = new WhereClause()
    .add((p) => `merchant_id = ${p}`, filter.merchantId)
    .add((p) => `status = ${p}`, filter.status)
    .add((p) => `type = ${p}`, filter.type)
    .add((p) => `reference = ${p}`, filter.reference)
    .add((p) => `batch_id = ${p}`, filter.batchId)
    .add((p) => `created_at >= ${p}`, filter.createdFrom)
    .add((p) => `created_at < ${p}`, filter.createdBefore)
    .add((p) => `(created_at, id) < (SELECT created_at, id FROM payments WHERE id = ${p})`, filter.startingAfter);
  return { where: where.sql, values: where.values };
}

/** A record as lists show it; a settled payment's `closed_at` is when it settled. */
function summary(row: SummaryRow): PaymentSummary {
  return {
    id: row.id,
    type: row.type,
    reference: row.reference,
    status: row.status,
    amount: Number(row.amount),
    created_at: row.created_at.toISOString(),
    closed_at: isTerminal(row.status) ? row.updated_at.toISOString() : null,
    ...(row.metadata ? { metadata: row.metadata } : {}),
  };
}

/** A batch's progress as last recorded, and the merchant its row names. */
export interface RecordedBatch {
  batch: BatchProgress;
  merchantId: string;
}

/** The batch's progress as last recorded, or undefined when there is no record of it. */
export async function readBatch(db: Database, batchId: string): Promise<RecordedBatch | undefined> {
  const { rows } = await db.query<{ resource: BatchProgress; merchant_id: string }>(
    'SELECT resource, merchant_id FROM batches WHERE id = $1',
    [batchId],
  );
  const row = rows[0];
  return row && { batch: row.resource, merchantId: row.merchant_id };
}

/**
 * A record with what orders its writes (`recordedAt` as PostgreSQL's text, exact to the microsecond): a repair
 * supersedes the record only while it still holds this version.
 */
export interface VersionedRecord<T> {
  resource: T;
  recordedAt: string;
  revision: number;
}

/** The payment's or batch's record with its version, or undefined when there is none. */
export async function readVersioned<T>(
  db: Database,
  table: 'payments' | 'batches',
  id: string,
): Promise<VersionedRecord<T> | undefined> {
  const { rows } = await db.query<{ resource: T; recorded_at: string; revision: number }>(
    `SELECT resource, recorded_at::text AS recorded_at, revision FROM ${table} WHERE id = $1`,
    [id],
  );
  const row = rows[0];
  return row && { resource: row.resource, recordedAt: row.recorded_at, revision: row.revision };
}
