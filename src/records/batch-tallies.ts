import type { PaymentStatus } from '../domain/payment-model';
import type { Database } from './database';

/** A batch's item payments of one status, as recorded: how many, their amount, and when the first and last moved. */
export interface ItemTally {
  status: PaymentStatus;
  count: number;
  amount: number;
  /** When the earliest of them was created (started). */
  firstCreatedAt: Date;
  /** When the latest of them last changed. */
  lastUpdatedAt: Date;
}

/** The batch's started items counted by status from their payment records (one indexed pass over its items). */
export async function readBatchTallies(db: Database, batchId: string): Promise<ItemTally[]> {
  const { rows } = await db.query<{
    status: PaymentStatus;
    count: number;
    amount: string;
    first_created_at: Date;
    last_updated_at: Date;
  }>(
    `SELECT status, count(*)::int AS count, sum(amount) AS amount,
            min(created_at) AS first_created_at, max(updated_at) AS last_updated_at
       FROM payments WHERE batch_id = $1 GROUP BY status`,
    [batchId],
  );
  return rows.map((row) => ({
    status: row.status,
    count: row.count,
    amount: Number(row.amount),
    firstCreatedAt: row.first_created_at,
    lastUpdatedAt: row.last_updated_at,
  }));
}
