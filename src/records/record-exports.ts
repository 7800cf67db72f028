import type { Readable } from 'node:stream';
import QueryStream from 'pg-query-stream';
import { BATCH_REPORT_COLUMNS, PAYMENT_EXPORT_COLUMNS } from '../domain/export-columns';
import type { BatchReportColumn, PaymentExportColumn } from '../domain/export-columns';
import type { Database } from './database';
import { selectionWhere } from './record-reads';
import type { RecordSelection } from './record-reads';

// The CSV exports' reads: payment records (oldest first by (created_at, id), so a range exported twice is the same
// file) or a batch's items (in upload order), streamed through a cursor on one pooled connection, so memory stays the
// same whatever the export's size.

/** The outcome columns' SQL, of the payment record `payment` names (`payments` itself, or its alias). */
const outcome = (payment: string) => ({
  provider_transaction_id: `${payment}.resource->'provider'->>'transaction_id'`,
  failure_code: `${payment}.resource->'failure'->>'code'`,
  failure_message: `${payment}.resource->'failure'->>'message'`,
});

/** Each column's SQL: the times verbatim from the resource, as `GET` answers them; the amount as stored (`12.50`). */
const EXPRESSIONS: Record<PaymentExportColumn, string> = {
  id: 'id',
  reference: 'reference',
  type: 'type',
  status: 'status',
  amount: 'amount::text',
  created_at: "resource->>'created_at'",
  updated_at: "resource->>'updated_at'",
  ...outcome('payments'),
  batch_id: 'batch_id',
};

const SELECT_LIST = PAYMENT_EXPORT_COLUMNS.map(({ name }) => EXPRESSIONS[name]).join(', ');

/** A batch report's columns: the item as uploaded (`batch_items i`), its payment's record (`payments p`) if any. */
const REPORT_EXPRESSIONS: Record<BatchReportColumn, string> = {
  position: '(i.position + 1)::text',
  reference: 'i.reference',
  amount: 'i.amount::text',
  status: "COALESCE(p.status, 'not_started')",
  ...outcome('p'),
  payment_id: 'i.payment_id',
};

const REPORT_SELECT_LIST = BATCH_REPORT_COLUMNS.map(({ name }) => REPORT_EXPRESSIONS[name]).join(', ');

/** Rows fetched from the cursor at a time: what an export holds in memory at most, besides the sockets' buffers. */
const CURSOR_BATCH = 500;
/** A cursor that cannot close (its connection broke without a word) gives its connection up after this. */
const CLOSE_TIMEOUT_MS = 5_000;

/**
 * The payment records of a selection, oldest first, as a readable stream of rows (one array of cells per record, in
 * the columns' order). It holds one connection of the pool, given back when the stream closes: read to the end,
 * failed, or destroyed (the HTTP client went away). Rejects when no connection can be had.
 */
export async function streamPaymentRows(db: Database, selection: RecordSelection): Promise<Readable> {
  const { where, values } = selectionWhere(selection);
  // The comment names the query in pg_stat_activity.
  return streamRows(
    db,
    `/* payments export */ SELECT ${SELECT_LIST} FROM payments ${where} ORDER BY created_at, id`,
    values,
  );
}

/** A batch's items in upload order, each with its payment's outcome (none yet: `not_started`), as `streamPaymentRows`. */
export async function streamBatchReportRows(db: Database, batchId: string): Promise<Readable> {
  return streamRows(
    db,
    `/* batch report */ SELECT ${REPORT_SELECT_LIST} FROM batch_items i LEFT JOIN payments p ON p.id = i.payment_id ` +
      'WHERE i.batch_id = $1 ORDER BY i.position',
    [batchId],
  );
}

/** A query's rows through a cursor on a connection of its own, given back when the stream closes. */
async function streamRows(db: Database, text: string, values: unknown[]): Promise<Readable> {
  const client = await db.connect();
  const rows = new ExportCursor(text, values);
  let failure: Error | undefined;
  let released = false;
  const release = (err?: Error) => {
    if (released) return;
    released = true;
    client.removeListener('end', onEnd);
    client.removeListener('error', onBreak);
    // A connection that failed under the cursor is closed, not handed to the next query.
    client.release(err);
  };
  const onEnd = () => release(new Error('the connection ended during an export'));
  client.once('end', onEnd);
  // A break is also emitted as `error` on the connection, which the pool hears only while it is idle (database.ts).
  const onBreak = (err: Error) => (failure ??= err);
  client.on('error', onBreak);
  rows.once('error', (err) => (failure = err));
  rows.once('close', () => release(failure));
  client.query(rows);
  return rows;
}

/** A query stream whose close does not wait forever: a cursor PostgreSQL never confirms closed fails the stream. */
class ExportCursor extends QueryStream {
  constructor(text: string, values: unknown[]) {
    super(text, values, { rowMode: 'array', batchSize: CURSOR_BATCH });
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    let done = false;
    const finish = (closeError?: Error | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      callback(closeError ?? err);
    };
    const timer = setTimeout(() => finish(new Error('the export cursor did not close')), CLOSE_TIMEOUT_MS).unref();
    super._destroy(err as Error, finish);
  }
}
