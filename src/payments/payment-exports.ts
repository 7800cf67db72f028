import type { Readable } from 'node:stream';
import type { Database } from '../records/database';
import { streamBatchReportRows, streamPaymentRows } from '../records/record-exports';
import type { RecordSelection } from '../records/record-reads';
import { AppError, recordCall } from './app-errors';

/**
 * Each export holds one connection of the exports' own pool (as many as this) for as long as its client reads: past
 * this many at once, another export is answered 503 rather than left waiting for a connection.
 */
export const MAX_RUNNING_EXPORTS = 4;

/** The CSV exports' rows: payment records streamed from PostgreSQL, oldest first, a few exports at a time. */
export class PaymentExports {
  private running = 0;

  constructor(
    private readonly records: Database,
    private readonly maxRunning = MAX_RUNNING_EXPORTS,
  ) {}

  /**
   * The rows of the records a selection holds (one `PaymentExportRow` per record), as an object stream that gives its
   * connection back when it closes. `unavailable` when PostgreSQL is, or when too many exports run already.
   */
  rows(selection: Omit<RecordSelection, 'startingAfter'>): Promise<Readable> {
    return this.stream(() => streamPaymentRows(this.records, selection));
  }

  /** A batch's report: one row per item in upload order (`BATCH_REPORT_COLUMNS`), as `rows` streams them. */
  batchReport(batchId: string): Promise<Readable> {
    return this.stream(() => streamBatchReportRows(this.records, batchId));
  }

  private async stream(open: () => Promise<Readable>): Promise<Readable> {
    if (this.running >= this.maxRunning) {
      throw new AppError('unavailable', `${this.maxRunning} exports are running already; try again shortly`);
    }
    this.running++;
    try {
      const rows = await recordCall(open);
      rows.once('close', () => this.running--);
      return rows;
    } catch (err) {
      this.running--;
      throw err;
    }
  }
}
