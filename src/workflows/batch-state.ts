import type {
  BatchAction,
  BatchControl,
  BatchInput,
  BatchProgress,
  BatchStatus,
  ItemSettled,
} from '../domain/batch-model';
import { MERCHANT_PAUSE, SYSTEM_PAUSE, isBatchClosed } from '../domain/batch-model';
import { approvalOutcome, approvalRefusal } from '../domain/approval-rules';
import type { Approval, ApprovalInput, ApprovalState } from '../domain/approval-rules';
import { batchProgress, startingCarry } from '../domain/batch-progress';
import type { BatchCarry } from '../domain/batch-progress';
import type { BatchHalt } from '../domain/halt-watch';

const NOT_STARTED = { pause: 'the batch has not started', resume: 'the batch has not started' };
const NOT_ALLOWED: Partial<Record<BatchStatus, Partial<Record<BatchAction, string>>>> = {
  scheduled: NOT_STARTED,
  awaiting_approval: NOT_STARTED,
  running: { resume: 'the batch is not paused' },
  paused: {},
  cancelling: { pause: 'the batch is being cancelled', resume: 'the batch is being cancelled' },
};

const STATUS_AFTER: Record<BatchAction, BatchStatus> = { pause: 'paused', resume: 'running', cancel: 'cancelling' };

/** A payout batch's bookkeeping: which items run, how they ended, and what the operator asked for. */
export class BatchState {
  private readonly carried: BatchCarry;

  constructor(
    private readonly input: BatchInput,
    carry: BatchCarry | undefined,
    now: Date,
  ) {
    this.carried = carry ?? startingCarry(now, input);
  }

  get status(): BatchStatus {
    return this.carried.status;
  }

  get nextIndex(): number {
    return this.carried.nextIndex;
  }

  /** The payments of the items in flight. */
  get inFlightIds(): string[] {
    return Object.keys(this.carried.inFlight);
  }

  /** How many items may start now. */
  get freeSlots(): number {
    if (this.carried.status !== 'running') return 0;
    const inFlight = Object.keys(this.carried.inFlight).length;
    return Math.max(0, Math.min(this.input.concurrency - inFlight, this.input.itemCount - this.carried.nextIndex));
  }

  /** True when nothing is in flight and nothing more will start. */
  get drained(): boolean {
    if (Object.keys(this.carried.inFlight).length > 0) return false;
    return this.carried.status === 'cancelling' || this.carried.nextIndex >= this.input.itemCount;
  }

  /** Records an item as started, before its payment workflow is asked to start. */
  started(paymentId: string, amountMinor: number): void {
    this.carried.inFlight[paymentId] = amountMinor;
    this.carried.startedMinor += amountMinor;
    this.carried.nextIndex += 1;
  }

  /** Counts an item's report; answers false when it changed nothing (repeated, unknown, or not an outcome). */
  settled({ paymentId, status }: ItemSettled): boolean {
    if (status === 'in_flight') return false;
    const { inFlight, review, settled } = this.carried;
    let amount = inFlight[paymentId];
    if (amount !== undefined) {
      delete inFlight[paymentId];
    } else if (review[paymentId] !== undefined && status !== 'needs_review') {
      amount = review[paymentId];
      delete review[paymentId];
      settled.needs_review.count -= 1;
      settled.needs_review.amount -= amount;
    } else {
      return false;
    }
    settled[status].count += 1;
    settled[status].amount += amount;
    if (status === 'needs_review') review[paymentId] = amount;
    return true;
  }

  /** The batch halts itself: paused as an operator's hold (`system`), so only an operator resumes it. */
  halted(halt: BatchHalt): void {
    this.carried.status = 'paused';
    this.carried.pausedBy = SYSTEM_PAUSE;
    this.carried.operatorHold = true;
    this.carried.halt = halt;
  }

  /** Why the control is refused now, or undefined when it is allowed; an operator's pause is not the merchant's to lift. */
  refusal({ action, operator }: BatchControl): string | undefined {
    const status = this.carried.status;
    if (isBatchClosed(status)) return `the batch is already ${status}`;
    if (action === 'resume' && status === 'paused' && this.carried.operatorHold && operator === undefined)
      return `the batch was paused by an operator (${this.carried.pausedBy ?? 'unknown'}); only an operator can resume it`;
    return NOT_ALLOWED[status]?.[action];
  }

  /**
   * Applies an allowed control; repeating the current one is harmless. An operator's pause takes over a merchant's;
   * a merchant's pause leaves an operator's as it is.
   */
  apply({ action, operator }: BatchControl): void {
    const carried = this.carried;
    if (action === 'pause') {
      if (carried.status === 'paused' && (carried.operatorHold || operator === undefined)) return;
      carried.pausedBy = operator ?? MERCHANT_PAUSE;
      carried.operatorHold = operator !== undefined;
    } else {
      carried.pausedBy = null;
      carried.operatorHold = false;
    }
    carried.status = STATUS_AFTER[action];
  }

  /** Closes the batch once drained: cancelled with the references that never started, or completed. */
  finish(now: Date, notStartedReferences: string[]): void {
    this.carried.status = this.carried.status === 'cancelling' ? 'cancelled' : 'completed';
    this.carried.notStarted = this.carried.status === 'cancelled' ? notStartedReferences : null;
    this.carried.finishedAt = now.toISOString();
  }

  /** Who must decide, and what they decided so far. */
  get approvalState(): ApprovalState {
    const { merchantId, approvalsRequired } = this.input;
    return { createdBy: merchantId, required: approvalsRequired ?? 0, approvals: this.carried.approvals ?? [] };
  }

  /** Why an operator's decision is refused now, or undefined when it counts. */
  decisionRefusal(decision: ApprovalInput): string | undefined {
    const status = this.carried.status;
    if (status !== 'scheduled' && status !== 'awaiting_approval') return `the batch is ${status}: no decision is due`;
    return approvalRefusal(this.approvalState, decision);
  }

  /** Records an allowed decision: a rejection closes the batch; the last approval due starts it unless scheduled. */
  decided(approval: Approval): void {
    this.carried.approvals = [...(this.carried.approvals ?? []), approval];
    const outcome = approvalOutcome(this.approvalState);
    if (outcome === 'rejected') this.close('rejected', approval.at);
    else if (outcome === 'approved' && this.carried.status === 'awaiting_approval') this.carried.status = 'running';
  }

  /** Its start time has come: it runs, or waits for the approvals it still needs. */
  due(): void {
    if (this.carried.status !== 'scheduled') return;
    this.carried.status = approvalOutcome(this.approvalState) === 'approved' ? 'running' : 'awaiting_approval';
  }

  /** The approval window passed without enough approvals: nothing was sent, nothing will be. */
  expire(now: Date): void {
    this.close('expired', now.toISOString());
  }

  private close(status: 'rejected' | 'expired', at: string): void {
    this.carried.status = status;
    this.carried.finishedAt = at;
  }

  carry(): BatchCarry {
    return this.carried;
  }

  progress(): BatchProgress {
    return batchProgress(this.input, this.carried);
  }
}
