import { deprecatePatch, patched } from '@temporalio/workflow';

/**
 * One change to workflow code made after 1.0 was frozen (2026-11-25): workflows that started on earlier code replay
 * the old path, new ones take the new (docs/development.md#changing-workflow-code-safely).
 */
export interface WorkflowPatch {
  /** What the workflow passes to `patched`: never reused, never renamed. */
  id: string;
  /** When it was made (ISO date). */
  date: string;
  /** What changed, in a sentence. */
  change: string;
  /** When its old path may go (`deprecatePatch`), then the patch itself: after every run that took the old path closed. */
  deprecateWhen: string;
}

/**
 * Every patch of the workflows since 1.0, oldest first. 1.0 is the code test/histories/1.0 recorded, which CI replays
 * for good; each later change to src/workflows/ (or the domain code it imports) adds an entry here and takes its new
 * path only where `isPatched(id)` says so.
 */
export const PATCHES = [
  {
    id: 'batch-outcome-reports-by-tally',
    date: '2026-11-28',
    change:
      "A batch no longer remembers the nonce of an item's outcome report (its tally counts an outcome once anyway), " +
      'only of a provider-wide error report, so its carried state stays small whatever the number of items.',
    deprecateWhen: 'every payout batch started on 1.0 has closed',
  },
  {
    id: 'item-task-timeout',
    date: '2026-11-28',
    change:
      "A batch starts its items with the single payments' workflow task time-out (PAYMENT_TASK_TIMEOUT, 30 s): a " +
      "10 s task heartbeat re-ran an item's code while its local activities' writes stayed, so records and workflows disagreed.",
    deprecateWhen: 'every payout batch started on 1.0 has closed',
  },
  {
    id: 'one-local-activity-at-a-time',
    date: '2026-11-28',
    change:
      "A payment's own local activity (the initiation, a callback's confirmation) waits for a record write already " +
      "under way: side by side, a replay answered both at the later one's time, and the events stamped in between " +
      'differed from the record by milliseconds.',
    deprecateWhen: 'every payment started on 1.0 has closed',
  },
  {
    id: 'cancelled-record-write-made-again',
    date: '2026-11-28',
    change:
      'A record write the SDK cancelled (evicting the workflow from a full cache, or shutting down, while the write ' +
      'waited to be tried again) is made again after a one-second timer: it was given up, and a workflow whose task ' +
      'then completed kept a record that lagged it for good.',
    deprecateWhen: 'every payment and payout batch started before this patch has closed',
  },
  {
    id: 'callback-names-the-transaction',
    date: '2026-11-28',
    change:
      "A payment whose initiation's answer was lost takes the transaction its own callback named when the status " +
      'query gives a final answer about it that differs from the callback (scenario 77 after a worker kill): the ' +
      'answer settles the payment instead of being ignored, which left it to review.',
    deprecateWhen: 'every payment started before this patch has closed',
  },
  {
    id: 'batch-record-by-activity',
    date: '2026-11-29',
    change:
      "A batch writes its record with an activity, not a local one: a slow write held the batch's workflow task open " +
      'until more than 100 item reports waited, Temporal failed the task, and the write answered in a later one, ' +
      'which no replay reproduces (nondeterminism: the batch stopped).',
    deprecateWhen: 'every payout batch run started before this patch has closed',
  },
  {
    id: 'confirmation-records-the-settlement',
    date: '2026-11-29',
    change:
      "A callback's confirmation (a local activity) also writes the record of the settlement the callback makes when " +
      "the status query agrees, worked out by the workflow before it asks: the callback's workflow task ends with that " +
      'one local activity, not a second one for the record (callback → final status, docs/performance.md).',
    deprecateWhen: 'every payment started before this patch has closed',
  },
  {
    id: 'batch-item-outcome-by-result',
    date: '2026-12-07',
    change:
      "A batch starts its items asking for their outcome as the item's result (a second start argument, which only " +
      'items started so take into account), signed as the report was, instead of a signal: the item completes in the ' +
      "task that records its outcome and the batch counts it from the child's completion; a continued run asks after " +
      'the items it carried from one second on, doubling. Reviews, and outcomes after one, are still signalled.',
    deprecateWhen: 'every payout batch run started before this patch has closed, and every item it started',
  },
] as const satisfies readonly WorkflowPatch[];

/** A listed patch's id: `isPatched` and `deprecated` take nothing else. */
export type PatchId = (typeof PATCHES)[number]['id'];

/** Whether this run takes patch `id`'s new path (Temporal's `patched`, for listed patches only). */
export function isPatched(id: PatchId): boolean {
  return patched(id);
}

/** Marks patch `id`'s old path gone: every run that could take it has closed (Temporal's `deprecatePatch`). */
export function deprecated(id: PatchId): void {
  deprecatePatch(id);
}
