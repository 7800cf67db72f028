import type { BatchPace } from '../domain/api-resources';
import type { BatchProgress, ItemStage, Tally } from '../domain/batch-model';
import { isBatchClosed } from '../domain/batch-model';
import type { PaymentStatus } from '../domain/payment-model';
import type { Database } from '../records/database';
import { readBatchTallies } from '../records/batch-tallies';
import type { ItemTally } from '../records/batch-tallies';
import { readBatch } from '../records/record-reads';
import { AppError, recordCall } from './app-errors';
import { boundAnswer } from './bound-answers';

const STAGE_OF: Record<PaymentStatus, ItemStage> = {
  // Only a single payment waits for approval: a batch's items were approved with their batch.
  awaiting_approval: 'not_started',
  initiating: 'in_flight',
  pending: 'in_flight',
  reconciling: 'in_flight',
  succeeded: 'succeeded',
  failed: 'failed',
  needs_review: 'needs_review',
};
const DONE: readonly ItemStage[] = ['succeeded', 'failed', 'needs_review'];

/** A batch as its records show it this moment: its record, its items counted from theirs, and its pace. */
export interface BatchFigures {
  batch: BatchProgress;
  pace: BatchPace;
}

/**
 * The pace of a batch from its items' records: items done per second between the first item's start and the latest
 * item's change, and the time left at that pace; null until an item is done.
 */
export function batchPace(total: number, tallies: readonly ItemTally[]): BatchPace {
  const done = tallies.filter((t) => DONE.includes(STAGE_OF[t.status])).reduce((sum, t) => sum + t.count, 0);
  if (done === 0) return { items_per_second: null, seconds_left: null };
  const first = Math.min(...tallies.map((t) => t.firstCreatedAt.getTime()));
  const last = Math.max(...tallies.map((t) => t.lastUpdatedAt.getTime()));
  const seconds = (last - first) / 1000;
  if (seconds <= 0) return { items_per_second: null, seconds_left: null };
  const rate = done / seconds;
  return { items_per_second: round(rate), seconds_left: Math.ceil((total - done) / rate) };
}

/**
 * Reads a batch's figures from PostgreSQL alone (`ops batch watch`): item counts by stage from the items' own records,
 * which change item by item, where the batch's record changes only every tenth of its items.
 */
export async function readBatchFigures(db: Database, batchId: string): Promise<BatchFigures> {
  const [record, tallies] = await recordCall(() =>
    Promise.all([readBatch(db, batchId), readBatchTallies(db, batchId)]),
  );
  if (!record) throw new AppError('not_found', `no batch ${batchId} in the records`);
  const recorded = boundAnswer(batchId, record.batch, record.merchantId);
  // A closed batch's record is final; while it runs, its items' records are the fresher count.
  const batch = isBatchClosed(recorded.status) ? recorded : { ...recorded, items: stagesOf(recorded, tallies) };
  return { batch, pace: batchPace(recorded.total.count, tallies) };
}

/** The batch with its pace from its items' records (the resource's `pace`); a closed batch needs none. */
export async function withPace(db: Database, batch: BatchProgress): Promise<BatchProgress> {
  if (isBatchClosed(batch.status)) return batch;
  const tallies = await recordCall(() => readBatchTallies(db, batch.id));
  return { ...batch, pace: batchPace(batch.total.count, tallies) };
}

function stagesOf(batch: BatchProgress, tallies: readonly ItemTally[]): Record<ItemStage, Tally> {
  const stages: Record<ItemStage, Tally> = {
    not_started: { ...batch.total },
    in_flight: { count: 0, amount: 0 },
    succeeded: { count: 0, amount: 0 },
    failed: { count: 0, amount: 0 },
    needs_review: { count: 0, amount: 0 },
  };
  for (const { status, count, amount } of tallies) {
    const stage = stages[STAGE_OF[status]];
    stage.count += count;
    stage.amount = round(stage.amount + amount);
    stages.not_started.count -= count;
    stages.not_started.amount = round(stages.not_started.amount - amount);
  }
  return stages;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
