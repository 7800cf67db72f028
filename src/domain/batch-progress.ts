import type { Approval } from './approval-rules';
import type { BatchInput, BatchProgress, BatchStatus, ItemOutcome, ItemStage, Tally } from './batch-model';
import type { BatchHalt, HaltWatchCarry } from './halt-watch';

/** The part of a batch's state that a continued-as-new run carries over; amounts in minor units. */
export interface BatchCarry {
  status: BatchStatus;
  startedAt: string;
  finishedAt: string | null;
  nextIndex: number;
  startedMinor: number;
  inFlight: Record<string, number>;
  review: Record<string, number>;
  settled: Record<ItemOutcome, Tally>;
  notStarted: string[] | null;
  /** Who paused the batch: an operator's name or `merchant`; null (or absent, before holds) unless paused. */
  pausedBy?: string | null;
  /** True while the pause is an operator's: only an operator resumes it. */
  operatorHold?: boolean;
  /** The revisions of the batch's record written so far (absent before records: none). */
  recorded?: number;
  /** The nonces of reports and controls acted on, until each expires (signed.ts SeenNonces). */
  nonces?: Record<string, string>;
  /** The batch's latest automatic halt (absent: it never halted). */
  halt?: BatchHalt | null;
  /** What the halt watch has seen of the latest items. */
  haltWatch?: HaltWatchCarry;
  /** Operators' decisions, in order (absent before approvals: none). */
  approvals?: Approval[];
}

/** A batch's state before it has started any item: scheduled, then waiting for its approvals, then running. */
export function startingCarry(now: Date, input?: BatchInput): BatchCarry {
  const zero = (): Tally => ({ count: 0, amount: 0 });
  const waitsFor = (input?.startsAt ? Date.parse(input.startsAt) : 0) > now.getTime();
  return {
    status: waitsFor ? 'scheduled' : (input?.approvalsRequired ?? 0) > 0 ? 'awaiting_approval' : 'running',
    startedAt: now.toISOString(),
    finishedAt: null,
    nextIndex: 0,
    startedMinor: 0,
    inFlight: {},
    review: {},
    settled: { succeeded: zero(), failed: zero(), needs_review: zero() },
    notStarted: null,
  };
}

/** The batch as the API and the CLI show it, from its input and its carried state. */
export function batchProgress(input: BatchInput, carried: BatchCarry): BatchProgress {
  const { settled, inFlight, startedMinor } = carried;
  const inFlightMinor = Object.values(inFlight).reduce((sum, minor) => sum + minor, 0);
  const stages: Record<ItemStage, Tally> = {
    not_started: {
      count: input.itemCount - carried.nextIndex,
      amount: input.totalMinor - startedMinor,
    },
    in_flight: { count: Object.keys(inFlight).length, amount: inFlightMinor },
    succeeded: settled.succeeded,
    failed: settled.failed,
    needs_review: settled.needs_review,
  };
  const major = (t: Tally): Tally => ({ count: t.count, amount: t.amount / 100 });
  return {
    id: input.batchId,
    reference: input.reference,
    status: carried.status,
    concurrency: input.concurrency,
    created_at: input.createdAt,
    started_at: carried.startedAt,
    finished_at: carried.finishedAt,
    total: major({ count: input.itemCount, amount: input.totalMinor }),
    items: Object.fromEntries(Object.entries(stages).map(([stage, t]) => [stage, major(t)])) as Record<
      ItemStage,
      Tally
    >,
    needs_review: Object.keys(carried.review),
    not_started: carried.notStarted,
    paused_by: carried.pausedBy ?? null,
    halt: carried.halt ?? null,
    starts_at: input.startsAt ?? null,
    approvals_required: input.approvalsRequired ?? 0,
    approvals: carried.approvals ?? [],
    approval_expires_at: approvalDeadline(input),
    ...(input.metadata ? { metadata: input.metadata } : {}),
  };
}

/** What a batch shows the moment it is created, before its workflow has run. */
export function newBatchProgress(input: BatchInput, now: Date): BatchProgress {
  return batchProgress(input, startingCarry(now, input));
}

/** When a batch that needs approvals expires without them: the window runs from its start time (or creation). */
export function approvalDeadline(input: BatchInput): string | null {
  if (!input.approvalsRequired || input.approvalWindowMs === undefined) return null;
  const from = Math.max(Date.parse(input.createdAt), input.startsAt ? Date.parse(input.startsAt) : 0);
  return new Date(from + input.approvalWindowMs).toISOString();
}
