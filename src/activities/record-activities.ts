import type { Keyring } from '../crypto/keyring';
import type { ItemSettled } from '../domain/batch-model';
import { itemReport } from '../domain/halt-watch';
import type { Signed } from '../domain/signed';
import type { Database } from '../records/database';
import { upsertBatchRecord, upsertPaymentRecord } from '../records/record-writes';
import type { BatchRecord, PaymentRecord } from '../records/record-writes';
import { signedForWorkflow } from './signed-results';

/** Writes a payment's record (recordPayment); a batch item's outcome or review answers its report, signed for its batch. */
export async function writePaymentRecord(
  database: Database,
  signingKeys: Keyring,
  record: PaymentRecord,
): Promise<Signed<ItemSettled> | null> {
  await upsertPaymentRecord(database, record);
  const { resource, batchId } = record;
  const report = batchId ? itemReport(resource) : null;
  return report && batchId ? signedForWorkflow(signingKeys, 'batch-item-report', batchId, report) : null;
}

/** Builds the activities that write workflows' records to PostgreSQL (the system of record). */
export function createRecordActivities(database: Database, signingKeys: Keyring) {
  return {
    /**
     * Writes a payment's record at a revision; idempotent, and a late or repeated write never moves it back. For a
     * batch item that has reached an outcome or review (or met a provider-wide error on its way), answers its report
     * to the batch, signed for the batch: what is recorded is what the batch counts.
     */
    async recordPayment(record: PaymentRecord): Promise<Signed<ItemSettled> | null> {
      return writePaymentRecord(database, signingKeys, record);
    },

    /** Writes a batch's record at a revision, likewise. */
    async recordBatch(record: BatchRecord): Promise<void> {
      await upsertBatchRecord(database, record);
    },
  };
}

export type RecordActivities = ReturnType<typeof createRecordActivities>;
