import type { Database } from '../records/database';
import { upsertBatchRecord, upsertPaymentRecord } from '../records/record-writes';
import type { BatchRecord, PaymentRecord } from '../records/record-writes';

/** Builds the activities that write workflows' records to PostgreSQL (the system of record). */
export function createRecordActivities(database: Database) {
  return {
    /** Writes a payment's record at a revision; idempotent, and a late or repeated write never moves it back. */
    async recordPayment(record: PaymentRecord): Promise<void> {
      await upsertPaymentRecord(database, record);
    },

    /** Writes a batch's record at a revision, likewise. */
    async recordBatch(record: BatchRecord): Promise<void> {
      await upsertBatchRecord(database, record);
    },
  };
}

export type RecordActivities = ReturnType<typeof createRecordActivities>;
