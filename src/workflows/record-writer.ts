import { CancellationScope, condition, log, proxyLocalActivities } from '@temporalio/workflow';
import type { RecordActivities } from '../activities/record-activities';
import type { BatchInput, BatchProgress } from '../domain/batch-model';
import type { PaymentInput, PaymentResource } from '../domain/payment-model';
import type { LocalActivityQueue } from './local-activity-queue';
import { workflowTime } from './time';

// Local: a write costs the history one marker. While PostgreSQL is down it is tried again for as long as it takes (past
// a minute of retries the SDK waits on a timer between tries), so no record is lost; each write carries the whole
// state, so a later one makes up for any before it. A worker without the activity (a test's) gives up at once.
const { recordPayment, recordBatch } = proxyLocalActivities<RecordActivities>({
  startToCloseTimeout: '10s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    nonRetryableErrorTypes: ['NotFoundError'],
  },
});

/**
 * Writes a workflow's record after each change, in order, without holding the workflow up: `record` returns at once;
 * while a write is under way only the latest state waits, so a long outage ends in one write, not one per change.
 */
export class RecordWriter<T> {
  private revision: number;
  private settledRevision: number;
  private last = '';
  private next: { snapshot: T; revision: number; recordedAt: string } | undefined;
  private writing: Promise<void> | undefined;

  /** `startRevision`: the revisions an earlier run (continued as new) already wrote. */
  constructor(
    private readonly subject: string,
    private readonly write: (snapshot: T, revision: number, recordedAt: string) => Promise<void>,
    startRevision = 0,
  ) {
    this.revision = startRevision;
    this.settledRevision = startRevision;
  }

  /** The revision of the latest change recorded (or queued). */
  get latest(): number {
    return this.revision;
  }

  /** Queues a write of `state` (copied now) unless it is what was last queued; answers its revision. */
  record(state: T): number {
    const json = JSON.stringify(state);
    if (json === this.last) return this.revision;
    this.last = json;
    this.revision += 1;
    this.next = { snapshot: JSON.parse(json) as T, revision: this.revision, recordedAt: workflowTime().toISOString() };
    this.writing ??= this.writeQueued();
    return this.revision;
  }

  /** Resolves once the write of `revision` (or a later one) is done, or given up. */
  async written(revision: number): Promise<void> {
    await condition(() => this.settledRevision >= revision);
  }

  /** Resolves once every write queued so far is done (or given up). */
  async drained(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async writeQueued(): Promise<void> {
    // Changes made in the same step (an event, then its new status) are written once, as they stand at its end.
    await Promise.resolve();
    for (let next = this.next; next; next = this.next) {
      this.next = undefined;
      try {
        // Even once the workflow was asked to cancel: the record follows the payment to its end.
        await CancellationScope.nonCancellable(() => this.write(next.snapshot, next.revision, next.recordedAt));
      } catch (err) {
        log.error('record not written', {
          subject: this.subject,
          revision: next.revision,
          error: err instanceof Error ? err.message : String(err),
        });
      }
      this.settledRevision = next.revision;
    }
    this.writing = undefined;
  }
}

/** The record writer of a payment (a batch item's names its batch), its writes in the workflow's `queue`. */
export function paymentRecords(input: PaymentInput, queue: LocalActivityQueue): RecordWriter<PaymentResource> {
  const { paymentId, merchantId, batchId } = input;
  return new RecordWriter<PaymentResource>(paymentId, (resource, revision, recordedAt) =>
    queue.run(() =>
      recordPayment.executeWithOptions({ summary: `record revision ${revision}` }, [
        { resource, merchantId, ...(batchId ? { batchId } : {}), revision, recordedAt },
      ]),
    ),
  );
}

/** The record writer of a batch, counting on from the revisions its earlier runs wrote; writes in its `queue`. */
export function batchRecords(
  input: BatchInput,
  startRevision: number,
  queue: LocalActivityQueue,
): RecordWriter<BatchProgress> {
  const { batchId, merchantId, reference } = input;
  return new RecordWriter<BatchProgress>(
    batchId,
    (resource, revision, recordedAt) =>
      queue.run(() =>
        recordBatch.executeWithOptions({ summary: `record revision ${revision}` }, [
          { resource, merchantId, reference, revision, recordedAt },
        ]),
      ),
    startRevision,
  );
}
