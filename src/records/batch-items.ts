import type { PoolClient } from 'pg';
import type { BatchItem } from '../domain/batch-model';
import type { Database } from './database';

// A payout batch's items live here from its creation on: the batch workflow reads them a page at a time, by position.

/**
 * Rows per INSERT: each statement stays well inside the server's query time-out (its pool's `queryTimeoutMs`) and
 * the parameter arrays stay small, whatever the batch size.
 */
const ROWS_PER_INSERT = 1_000;

/**
 * Inserts a batch's items in upload order (position 0 first), in the caller's transaction: a multi-row INSERT per
 * slice, its columns passed as arrays (`unnest`), so 100,000 items take 100 statements, not 100,000.
 */
export async function insertBatchItems(
  client: PoolClient,
  batchId: string,
  items: readonly BatchItem[],
): Promise<void> {
  for (let from = 0; from < items.length; from += ROWS_PER_INSERT) {
    const slice = items.slice(from, from + ROWS_PER_INSERT);
    await client.query(
      `INSERT INTO batch_items (batch_id, position, payment_id, reference, amount, item)
       SELECT $1, position, payment_id, reference, amount, item::json
       FROM unnest($2::integer[], $3::text[], $4::text[], $5::numeric[], $6::text[])
         AS t(position, payment_id, reference, amount, item)`,
      [
        batchId,
        slice.map((_, k) => from + k),
        slice.map((item) => item.body.paymentId),
        slice.map((item) => item.body.request.reference),
        slice.map((item) => item.body.request.amount),
        slice.map((item) => JSON.stringify(item)),
      ],
    );
  }
}

/** Up to `limit` of a batch's items from `fromPosition` on, in upload order, as the server signed them. */
export async function readBatchItems(
  db: Database,
  batchId: string,
  fromPosition: number,
  limit: number,
): Promise<BatchItem[]> {
  return await readColumn<BatchItem>(db, 'item', batchId, fromPosition, limit);
}

/** Up to `limit` references of a batch's items from `fromPosition` on, in upload order. */
export async function readBatchReferences(
  db: Database,
  batchId: string,
  fromPosition: number,
  limit: number,
): Promise<string[]> {
  return await readColumn<string>(db, 'reference', batchId, fromPosition, limit);
}

async function readColumn<T>(
  db: Database,
  column: 'item' | 'reference',
  batchId: string,
  fromPosition: number,
  limit: number,
): Promise<T[]> {
  const { rows } = await db.query<Record<typeof column, T>>(
    `SELECT ${column} FROM batch_items WHERE batch_id = $1 AND position >= $2 ORDER BY position LIMIT $3`,
    [batchId, fromPosition, limit],
  );
  return rows.map((row) => row[column]);
}
