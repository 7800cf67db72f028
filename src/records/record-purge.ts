import type { PoolClient } from 'pg';
import { inTransaction } from './database';
import type { Database } from './database';

// `records purge`: finished payment and batch records older than RECORDS_PURGE_AFTER are deleted in bounded chunks,
// each in its own transaction, with the rows that hang off them. Idempotency keys and initiation claims stay: a
// purged reference answers 409 `reference_purged` and a purged payment is never initiated again (docs/records.md).

/**
 * What is deleted with a payment or batch: one statement per table whose rows name it, `$1` the ids (`text[]`).
 * The notification tables (events and delivery attempts) and the kept provider answers join here.
 */
export const PURGED_WITH_SUBJECT: readonly { table: string; sql: string }[] = [
  { table: 'operator_actions', sql: 'DELETE FROM operator_actions WHERE subject_id = ANY($1::text[])' },
  // Their delivery attempts go with them (ON DELETE CASCADE).
  { table: 'notification_events', sql: 'DELETE FROM notification_events WHERE subject = ANY($1::text[])' },
  { table: 'confirmation_answers', sql: 'DELETE FROM confirmation_answers WHERE payment_id = ANY($1::text[])' },
  { table: 'initiation_answers', sql: 'DELETE FROM initiation_answers WHERE payment_id = ANY($1::text[])' },
];

/** Only these statuses are ever purged: a payment or batch in any other may still change. */
const FINISHED_PAYMENT = `status IN ('succeeded', 'failed')`;
const FINISHED_BATCH = `status IN ('completed', 'cancelled')`;

// A single payment (not a batch item), finished, last changed before $1.
const PAYMENT_DUE = `batch_id IS NULL AND ${FINISHED_PAYMENT} AND recorded_at < $1`;
// A finished batch last changed before $1 whose items are all finished and changed before $1 too: an item resolved
// after its batch finished keeps the batch.
const BATCH_DUE = `${FINISHED_BATCH} AND recorded_at < $1 AND NOT EXISTS (
  SELECT 1 FROM payments p WHERE p.batch_id = batches.id AND NOT (p.${FINISHED_PAYMENT} AND p.recorded_at < $1))`;

// Chunks walk the primary key from the last id of the chunk before ($3): each row is looked at once per run.
const PAYMENTS_DUE = `SELECT id, merchant_id, reference FROM payments WHERE ${PAYMENT_DUE} AND id > $3
ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`;
const BATCHES_DUE = `SELECT id, merchant_id, reference FROM batches WHERE ${BATCH_DUE} AND id > $3 ORDER BY id LIMIT $2`;

const MARK_KEYS = `
UPDATE idempotency_keys SET purged_at = now()
WHERE scope = $1 AND purged_at IS NULL
  AND (merchant_id, reference) IN (SELECT * FROM unnest($2::text[], $3::text[]))`;

export interface PurgeCounts {
  payments: number;
  batches: number;
  /** Payments of the purged batches. */
  batchItems: number;
  /** Rows of PURGED_WITH_SUBJECT's tables, by table (not counted by a dry run). */
  related: Record<string, number>;
}

export interface PurgeReport extends PurgeCounts {
  dryRun: boolean;
  /** Records last changed before this time were due. */
  before: string;
}

export interface PurgeOptions {
  /** Finished records last changed before this are deleted. */
  before: Date;
  dryRun: boolean;
  /** Rows per transaction; default 1000. */
  chunkSize?: number;
  /** Called after each chunk, with the counts so far. */
  progress?: (report: PurgeReport) => void;
}

interface Due {
  id: string;
  merchant_id: string;
  reference: string;
}

/** Deletes (or, on a dry run, counts) the finished payment and batch records last changed before `options.before`. */
export async function purgeRecords(db: Database, options: PurgeOptions): Promise<PurgeReport> {
  const report: PurgeReport = {
    dryRun: options.dryRun,
    before: options.before.toISOString(),
    payments: 0,
    batches: 0,
    batchItems: 0,
    related: Object.fromEntries(PURGED_WITH_SUBJECT.map(({ table }) => [table, 0])),
  };
  if (options.dryRun) return countDue(db, report, options.before);
  const limit = options.chunkSize ?? 1000;
  for (let after = ''; ;) {
    const rows = await inTransaction(db, async (client) => {
      const due = (await client.query<Due>(PAYMENTS_DUE, [options.before, limit, after])).rows;
      await deleteSubjects(client, 'payment', due, report);
      report.payments += due.length;
      return due;
    });
    if (rows.length > 0) options.progress?.(report);
    if (rows.length < limit) break;
    after = rows[rows.length - 1]?.id ?? after;
  }
  for (let after = ''; ;) {
    const { rows } = await db.query<Due>(BATCHES_DUE, [options.before, limit, after]);
    for (const batch of rows) await purgeBatch(db, batch, limit, report, options.progress);
    if (rows.length < limit) break;
    after = rows[rows.length - 1]?.id ?? after;
  }
  return report;
}

/** A batch's items, a chunk per transaction, then the batch itself once none is left. */
async function purgeBatch(
  db: Database,
  batch: Due,
  limit: number,
  report: PurgeReport,
  progress: PurgeOptions['progress'],
): Promise<void> {
  for (;;) {
    const done = await inTransaction(db, async (client) => {
      const { rows } = await client.query<Due>(
        'SELECT id, merchant_id, reference FROM payments WHERE batch_id = $1 LIMIT $2 FOR UPDATE',
        [batch.id, limit],
      );
      if (rows.length > 0) {
        await deleteSubjects(client, 'item', rows, report);
        report.batchItems += rows.length;
        return false;
      }
      // The batch goes last: a purge stopped half-way leaves it, and the next run finds it (and its rest) again.
      const items = await client.query('DELETE FROM batch_items WHERE batch_id = $1', [batch.id]);
      report.related.batch_items = (report.related.batch_items ?? 0) + (items.rowCount ?? 0);
      await deleteSubjects(client, 'batch', [batch], report);
      report.batches += 1;
      return true;
    });
    progress?.(report);
    if (done) return;
  }
}

/** Deletes records and what names them, and marks the idempotency keys of what merchants created with a reference. */
async function deleteSubjects(
  client: PoolClient,
  kind: 'payment' | 'item' | 'batch',
  rows: readonly Due[],
  report: PurgeReport,
): Promise<void> {
  if (rows.length === 0) return;
  const ids = rows.map((row) => row.id);
  for (const { table, sql } of PURGED_WITH_SUBJECT) {
    const { rowCount } = await client.query(sql, [ids]);
    report.related[table] = (report.related[table] ?? 0) + (rowCount ?? 0);
  }
  // A batch item's reference is its batch's own, not a key of the merchant's.
  if (kind !== 'item') {
    const scope = kind === 'batch' ? 'batch' : 'payment';
    await client.query(MARK_KEYS, [scope, rows.map((r) => r.merchant_id), rows.map((r) => r.reference)]);
  }
  await client.query(`DELETE FROM ${kind === 'batch' ? 'batches' : 'payments'} WHERE id = ANY($1::text[])`, [ids]);
}

/** What a purge would delete now, counted without deleting. */
async function countDue(db: Database, report: PurgeReport, before: Date): Promise<PurgeReport> {
  const { rows } = await db.query<{ payments: string; batches: string; items: string }>(
    `WITH due_batches AS (SELECT id FROM batches WHERE ${BATCH_DUE})
     SELECT
       (SELECT count(*) FROM payments WHERE ${PAYMENT_DUE}) AS payments,
       (SELECT count(*) FROM due_batches) AS batches,
       (SELECT count(*) FROM payments WHERE batch_id IN (SELECT id FROM due_batches)) AS items`,
    [before],
  );
  const counts = rows[0];
  return {
    ...report,
    related: {},
    payments: Number(counts?.payments ?? 0),
    batches: Number(counts?.batches ?? 0),
    batchItems: Number(counts?.items ?? 0),
  };
}
