import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { canonicalJson } from '../crypto/canonical-json';
import type { BatchProgress } from '../domain/batch-model';
import { PAYMENT_WORKFLOW, PAYOUT_BATCH_WORKFLOW } from '../domain/ids';
import type { PaymentResource } from '../domain/payment-model';
import { inTransaction } from '../records/database';
import type { Database } from '../records/database';
import { recordOperatorAction } from '../records/operator-actions';
import { readVersioned } from '../records/record-reads';
import type { VersionedRecord } from '../records/record-reads';
import { repairBatchRecord, repairPaymentRecord } from '../records/record-writes';
import { SearchAttributes } from '../workflows/definitions';
import { recordCall, temporalCall } from './app-errors';
import type { Batches } from './payout-batches';
import type { PaymentReads } from './payment-reads';

// `records verify`: the records of the payments and batches still in Temporal's retention, compared with their
// workflows' live state, and those that lag (a restore from backup) or are missing repaired.

export type RecordKind = 'payment' | 'batch';

/** What one kind's verification found. `lagging` and `missing` records are repaired unless it was a dry run. */
export interface VerifyCounts {
  checked: number;
  equal: number;
  lagging: number;
  missing: number;
  repaired: number;
  /** Workflows whose live state could not be read (a query with no worker to answer it): not checked. */
  unreadable: number;
}

/** A record that differed from its workflow, and whether this run repaired it. */
export interface RecordDifference {
  kind: RecordKind;
  id: string;
  found: 'lagging' | 'missing' | 'unreadable';
  repaired: boolean;
  error?: string;
}

export interface VerifyReport {
  dryRun: boolean;
  payments: VerifyCounts;
  batches: VerifyCounts;
  differences: RecordDifference[];
}

export interface VerifyOptions {
  dryRun: boolean;
  /** Who runs it: each repair is recorded as their operator action (`record.repair`). */
  operator: string;
  /** Only workflows started at or after this time. */
  startedFrom?: Date;
  /** Called after each workflow checked, with the counts so far. */
  progress?: (report: VerifyReport) => void;
}

/** Workflows checked at once: enough to hide the round trips, few enough to spare the frontend and the database. */
const CONCURRENCY = 8;

/** Compares the records with the workflows still in Temporal's retention, and repairs those that lag or are missing. */
export class RecordVerification {
  constructor(
    private readonly client: Client,
    private readonly reads: PaymentReads,
    private readonly batches: Batches,
    private readonly records: Database,
    /** The task queue whose workflows it checks (TASK_QUEUE), as the review count does. */
    private readonly taskQueue: string,
  ) {}

  /** Checks every payment, then every batch, of the task queue whose workflow Temporal still holds. */
  async verify(options: VerifyOptions): Promise<VerifyReport> {
    const report: VerifyReport = {
      dryRun: options.dryRun,
      payments: emptyCounts(),
      batches: emptyCounts(),
      differences: [],
    };
    const kinds = [
      ['payment', PAYMENT_WORKFLOW],
      ['batch', PAYOUT_BATCH_WORKFLOW],
    ] as const;
    for (const [kind, workflowType] of kinds) {
      const clauses = [`WorkflowType = '${workflowType}'`, `TaskQueue = ${JSON.stringify(this.taskQueue)}`];
      if (options.startedFrom) clauses.push(`StartTime >= ${JSON.stringify(options.startedFrom.toISOString())}`);
      const infos = this.client.workflow.list({ query: clauses.join(' AND '), pageSize: 1000 });
      await eachAtMost(CONCURRENCY, infos, async (info) => {
        await this.check(kind, info, report, options);
        options.progress?.(report);
      });
    }
    return report;
  }

  private async check(kind: RecordKind, info: WorkflowExecutionInfo, report: VerifyReport, options: VerifyOptions) {
    const { dryRun, operator } = options;
    const counts = kind === 'payment' ? report.payments : report.batches;
    const id = info.workflowId;
    counts.checked += 1;
    // The record first, then the live state: a difference then means the record is the older of the two.
    const table = kind === 'payment' ? 'payments' : 'batches';
    const record = await recordCall(() => readVersioned<PaymentResource | BatchProgress>(this.records, table, id));
    let live: PaymentResource | BatchProgress;
    try {
      live = await (kind === 'payment' ? this.reads.live(id) : this.batches.get(id));
    } catch (err) {
      counts.unreadable += 1;
      const error = err instanceof Error ? err.message : String(err);
      report.differences.push({ kind, id, found: 'unreadable', repaired: false, error });
      return;
    }
    if (record && canonicalJson(record.resource) === canonicalJson(live)) {
      counts.equal += 1;
      return;
    }
    const found = record ? 'lagging' : 'missing';
    counts[found] += 1;
    const repaired = !dryRun && (await this.repair(kind, info, live, record, { found, operator }));
    if (repaired) counts.repaired += 1;
    report.differences.push({ kind, id, found, repaired });
  }

  private async repair(
    kind: RecordKind,
    info: WorkflowExecutionInfo,
    live: PaymentResource | BatchProgress,
    record: VersionedRecord<unknown> | undefined,
    why: { found: 'lagging' | 'missing'; operator: string },
  ): Promise<boolean> {
    const attributes = info.typedSearchAttributes;
    const merchantId = attributes.get(SearchAttributes.merchant);
    if (merchantId === undefined)
      throw new Error(`workflow ${info.workflowId} has no ${SearchAttributes.merchant.name}`);
    const batchId = attributes.get(SearchAttributes.batch);
    // The repair and its operator action in one transaction: both are written, or neither.
    return recordCall(() =>
      inTransaction(this.records, async (client) => {
        const repaired =
          kind === 'batch'
            ? await repairBatchRecord(client, { resource: live as BatchProgress, merchantId }, record)
            : await repairPaymentRecord(
                client,
                { resource: live as PaymentResource, merchantId, ...(batchId ? { batchId } : {}) },
                record,
              );
        if (repaired) {
          await recordOperatorAction(client, {
            operator: why.operator,
            action: 'record.repair',
            subjectId: info.workflowId,
            merchantId,
            detail: { kind, found: why.found, status: live.status },
            outcome: 'repaired',
          });
        }
        return repaired;
      }),
    );
  }
}

function emptyCounts(): VerifyCounts {
  return { checked: 0, equal: 0, lagging: 0, missing: 0, repaired: 0, unreadable: 0 };
}

/** Runs `work` on each item of an async sequence, at most `limit` at a time; rejects with the first failure. */
async function eachAtMost<T>(limit: number, items: AsyncIterable<T>, work: (item: T) => Promise<void>): Promise<void> {
  const iterator = items[Symbol.asyncIterator]();
  let failed = false;
  const lane = async (): Promise<void> => {
    for (;;) {
      if (failed) return;
      const next = await temporalCall(() => iterator.next());
      if (next.done) return;
      await work(next.value).catch((err: unknown) => {
        failed = true;
        throw err;
      });
    }
  };
  await Promise.all(Array.from({ length: limit }, lane));
}
