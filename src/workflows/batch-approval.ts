import { ApplicationFailure, allHandlersFinished, condition, setHandler } from '@temporalio/workflow';
import { approvalOutcome } from '../domain/approval-rules';
import type { ApprovalInput } from '../domain/approval-rules';
import type { BatchInput, BatchProgress } from '../domain/batch-model';
import { approvalDeadline } from '../domain/batch-progress';
import type { SeenNonces, Signed } from '../domain/signed';
import type { BatchState } from './batch-state';
import { batchApprovalUpdate } from './definitions';
import type { Notifier } from './merchant-notifications';
import type { RecordWriter } from './record-writer';
import { workflowTime } from './time';
import { handlerRefusal } from './trust';

/** What the waiting phase of a batch works with: the batch's own state, nonces, notifier and records. */
export interface ApprovalPhase {
  input: BatchInput;
  state: BatchState;
  nonces: SeenNonces;
  notifier: Notifier;
  records: RecordWriter<BatchProgress>;
  /** Records the batch's status change and shows it (the batch workflow's `publish`). */
  publish: () => void;
  /** True in the batch's first run: the one that tells the merchant it waits for approval. */
  firstRun: boolean;
}

/**
 * Holds a batch before its first item, then runs it (`run`): `scheduled` until its start time (a durable timer), then
 * `awaiting_approval` until enough different operators approve (a signed Update, once per nonce), one rejects
 * (`rejected`), or the approval window passes (`expired`); then it ends here, nothing sent. A batch with nothing to
 * wait for runs at once, in this very call, as it did before approvals: its history stays the same.
 */
export function approvalAndStart(phase: ApprovalPhase, run: () => Promise<BatchProgress>): Promise<BatchProgress> {
  const { input, state, notifier } = phase;
  setHandler(batchApprovalUpdate, (message) => decide(phase, message), {
    validator: (message) => {
      const refusal =
        handlerRefusal(message, 'approval', phase.nonces) ??
        state.decisionRefusal((message as Signed<ApprovalInput>).body);
      if (refusal) throw ApplicationFailure.nonRetryable(refusal, 'NotAllowed');
    },
  });
  if (state.status !== 'scheduled' && state.status !== 'awaiting_approval') return run();
  if (phase.firstRun && (input.approvalsRequired ?? 0) > 0) {
    notifier.emit('batch.approval_required', state.progress());
  }
  return waitThenRun(phase, run);
}

async function waitThenRun(phase: ApprovalPhase, run: () => Promise<BatchProgress>): Promise<BatchProgress> {
  const { input, state, notifier, publish } = phase;
  if (state.status === 'scheduled') {
    await condition(() => state.status !== 'scheduled', msUntil(input.startsAt));
    if (state.status === 'scheduled') {
      state.due();
      publish();
    }
  }
  if (state.status === 'awaiting_approval') {
    const decided = await condition(() => state.status !== 'awaiting_approval', msUntil(approvalDeadline(input)));
    if (!decided) {
      state.expire(workflowTime());
      publish();
      notifier.emit('batch.expired', state.progress());
    }
  }
  if (state.status !== 'rejected' && state.status !== 'expired') return await run();
  await condition(allHandlersFinished);
  await phase.records.drained();
  return state.progress();
}

/** One operator's decision: counted once; the merchant hears when it approves or rejects the batch. */
async function decide(phase: ApprovalPhase, message: Signed<ApprovalInput>): Promise<BatchProgress> {
  const { state, nonces, notifier, records } = phase;
  // Two copies can pass the validator before either is handled: only the first acts.
  if (!nonces.refusal(message) && !state.decisionRefusal(message.body)) {
    nonces.remember(message, workflowTime());
    const before = approvalOutcome(state.approvalState);
    state.decided({
      operator: message.body.operator,
      decision: message.body.decision,
      at: workflowTime().toISOString(),
    });
    phase.publish();
    const after = approvalOutcome(state.approvalState);
    if (after !== before && after !== 'waiting') notifier.emit(`batch.${after}`, state.progress());
  }
  await records.written(records.latest);
  return state.progress();
}

/** What the Web UI's current details add while a batch waits: when it starts, and its approvals so far. */
export function waitingDetails(progress: BatchProgress): string {
  if (progress.status === 'scheduled') return ` · starts ${progress.starts_at ?? 'now'}`;
  if (progress.status !== 'awaiting_approval') return '';
  const approved = progress.approvals.filter((a) => a.decision === 'approve').length;
  return ` · ${approved}/${progress.approvals_required} approvals, until ${progress.approval_expires_at ?? '-'}`;
}

/** Milliseconds from now until `at` (at least 1: a time already past fires at once); `at` absent: now. */
function msUntil(at: string | null | undefined): number {
  return Math.max(1, (at ? Date.parse(at) : 0) - workflowTime().getTime());
}
