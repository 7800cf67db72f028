import type { ActivityOptions } from '@temporalio/workflow';
import {
  CancellationScope,
  condition,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
  sleep,
} from '@temporalio/workflow';
import type { RecordActivities } from '../activities/record-activities';
import type { BatchInput, BatchProgress, ItemSettled } from '../domain/batch-model';
import type { Signed } from '../domain/signed';
import type { NotificationEvent } from '../domain/notification';
import type { PaymentInput, PaymentResource } from '../domain/payment-model';
import type { EventOutbox } from './merchant-notifications';
import { isPatched } from './patches';
import { workflowTime } from './time';

// While PostgreSQL is down a write is tried again for as long as it takes, so no record is lost; each write carries the
// whole state, so a later one makes up for any before it.
const RECORD_WRITE: ActivityOptions = {
  startToCloseTimeout: '10s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    nonRetryableErrorTypes: ['NotFoundError'],
  },
};
// A payment's write is local: it costs the history one marker, in the workflow task that made the change. A worker
// without the activity (a test's) gives up at once.
const { recordPayment, recordBatch: recordBatchLocally } = proxyLocalActivities<RecordActivities>(RECORD_WRITE);
// A batch's is not (patch batch-record-by-activity): a local activity holds the batch's workflow task open while it
// runs, the items' reports pile up meanwhile, and past 100 of them Temporal fails that task while the worker goes on
// with the write; a later task then records the write's answer where a replay cannot reproduce it (docs/chaos.md).
const { recordBatch } = proxyActivities<RecordActivities>(RECORD_WRITE);

/** One write: the record at a revision and the notification events queued with it (one transaction). */
export interface Write<T> {
  snapshot: T;
  revision: number;
  recordedAt: string;
  events: NotificationEvent[];
}

/**
 * Writes a workflow's record after each change, in order, without holding the workflow up: `record` returns at once;
 * while a write is under way only the latest state waits, so a long outage ends in one write, not one per change.
 * Events queued (`queue`) go with the next write, in its transaction: the transactional outbox. One write at a time
 * also keeps the workflow replayable: local activities side by side complete in wall-clock order in a first run but in
 * scheduled order in a replay (seen with SDK 1.24; temporalio/sdk-python#1578 is the same in another core-based SDK).
 */
export class RecordWriter<T> implements EventOutbox {
  private revision: number;
  private settledRevision: number;
  private last = '';
  private current: Omit<Write<T>, 'events'> | undefined;
  private dirty = false;
  private events: NotificationEvent[] = [];
  private writing: Promise<void> | undefined;
  private writingNow = false;
  private deferred: () => boolean = () => false;

  /** `startRevision`: the revisions an earlier run (continued as new) already wrote. */
  constructor(
    private readonly subject: string,
    private readonly write: (write: Write<T>) => Promise<void>,
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
    this.current = {
      snapshot: JSON.parse(json) as T,
      revision: this.revision,
      recordedAt: workflowTime().toISOString(),
    };
    this.dirty = true;
    this.writing ??= this.writeQueued();
    return this.revision;
  }

  /**
   * Holds writes while `predicate` is true: the workflow's own local activity is under way (one local activity at a
   * time, see above), and the write that waits for it is then made once, with its answer.
   */
  deferWhile(predicate: () => boolean): void {
    this.deferred = predicate;
  }

  /** Queues a notification event: it is written with the record's next write (the record as it stands then). */
  queue(event: NotificationEvent): void {
    this.events.push(event);
    this.writing ??= this.writeQueued();
  }

  /**
   * The write that would record `snapshot` next, with the events queued so far and `events`: for a local activity
   * that makes it itself (`adopt` then takes it on, or `supersede` passes it).
   */
  draft(snapshot: T, events: readonly NotificationEvent[]): Write<T> {
    return {
      snapshot: JSON.parse(JSON.stringify(snapshot)) as T,
      revision: this.revision + 1,
      recordedAt: workflowTime().toISOString(),
      events: [...this.events, ...events],
    };
  }

  /** `write` (a draft, nothing recorded since) is the latest change: made already (`made`), else the next write. */
  adopt(write: Write<T>, made: boolean): void {
    const { snapshot, revision, recordedAt, events } = write;
    this.last = JSON.stringify(snapshot);
    this.revision = revision;
    this.current = { snapshot, revision, recordedAt };
    this.dirty = !made;
    this.events = made ? [] : [...events];
    if (made) this.settledRevision = Math.max(this.settledRevision, revision);
    else this.writing ??= this.writeQueued();
  }

  /** `write` (a draft) was made, but the workflow changed otherwise since: its next write comes after it. */
  supersede(write: Write<T>): void {
    this.revision = Math.max(this.revision, write.revision);
  }

  /** Resolves once the write of `revision` (or a later one) is done, or given up. */
  async written(revision: number): Promise<void> {
    await condition(() => this.settledRevision >= revision);
  }

  /** True when no write is queued or under way. */
  get idle(): boolean {
    return this.writing === undefined;
  }

  /** True while a write's local activity runs (one held by `deferWhile` has not started). */
  get underWay(): boolean {
    return this.writingNow;
  }

  /** Resolves once no write's local activity runs: the next one waits for `deferWhile` if it says so. */
  async betweenWrites(): Promise<void> {
    await condition(() => !this.writingNow);
  }

  /** Resolves once every write queued so far is done (or given up). */
  async drained(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async writeQueued(): Promise<void> {
    // Changes made in the same step (an event, then its new status) are written once, as they stand at its end.
    await Promise.resolve();
    for (;;) {
      if (this.deferred()) await CancellationScope.nonCancellable(() => condition(() => !this.deferred()));
      if (!this.current || (!this.dirty && this.events.length === 0)) break;
      const next: Write<T> = { ...this.current, events: this.events };
      this.dirty = false;
      this.events = [];
      this.writingNow = true;
      try {
        // Even once the workflow was asked to cancel: the record follows the payment to its end.
        await CancellationScope.nonCancellable(() => this.write(next));
      } catch (err) {
        if (isCancellation(err) && isPatched('cancelled-record-write-made-again')) {
          // Not the workflow's doing (the write runs non-cancellable): the SDK cancelled it while it waited to be
          // tried again (PostgreSQL unreachable), evicting the workflow from its full cache or shutting down. Nothing
          // was written: the state goes again once the workflow is back on a worker, after a timer (docs/chaos.md).
          log.warn('record write cancelled by the worker; writing it again', { subject: this.subject });
          this.events = [...next.events, ...this.events];
          this.dirty = true;
          this.writingNow = false;
          await CancellationScope.nonCancellable(() => sleep('1s'));
          continue;
        }
        log.error('record not written', {
          subject: this.subject,
          revision: next.revision,
          lostEvents: next.events.map((event) => event.id),
          error: err instanceof Error ? err.message : String(err),
        });
      }
      this.writingNow = false;
      this.settledRevision = next.revision;
    }
    this.writing = undefined;
  }
}

/** A payment's write as the record activities take it. */
export function paymentRecord(input: PaymentInput, { snapshot, revision, recordedAt, events }: Write<PaymentResource>) {
  const { merchantId, batchId } = input;
  return { resource: snapshot, merchantId, ...(batchId ? { batchId } : {}), revision, recordedAt, events };
}

/**
 * The record writer of a payment (a batch item's names its batch). A batch item's write of an outcome or review
 * answers its report to the batch, signed by the worker for it: `onReport` gets it.
 */
export function paymentRecords(
  input: PaymentInput,
  onReport: (report: Signed<ItemSettled>) => void = () => undefined,
): RecordWriter<PaymentResource> {
  return new RecordWriter<PaymentResource>(input.paymentId, async (write) => {
    const report = await recordPayment.executeWithOptions({ summary: writeSummary(write) }, [
      paymentRecord(input, write),
    ]);
    if (report) onReport(report);
  });
}

/** The record writer of a batch, counting on from the revisions its earlier runs wrote. */
export function batchRecords(input: BatchInput, startRevision: number): RecordWriter<BatchProgress> {
  const { batchId, merchantId, reference } = input;
  const record = isPatched('batch-record-by-activity') ? recordBatch : recordBatchLocally;
  return new RecordWriter<BatchProgress>(
    batchId,
    ({ snapshot, revision, recordedAt, events }) =>
      record.executeWithOptions({ summary: writeSummary({ revision, events }) }, [
        { resource: snapshot, merchantId, reference, revision, recordedAt, events },
      ]),
    startRevision,
  );
}

/** What the Web UI shows for a write: its revision and the notifications it queues. */
export function writeSummary({ revision, events }: Pick<Write<unknown>, 'revision' | 'events'>): string {
  const notify = events.map((event) => event.type).join(', ');
  return `record revision ${revision}${notify ? `, notify ${notify}` : ''}`;
}
