import { isTerminal, newPaymentResource } from '../domain/payment-model';
import type {
  Failure,
  Outcome,
  PaymentEvent,
  PaymentInput,
  PaymentResource,
  PaymentStatus,
  ProviderAck,
  ProviderCallback,
  ResolveInput,
  StatusCheck,
} from '../domain/payment-model';
import { toMinorUnits } from '../domain/money';
import {
  addNotificationQueued,
  addPaymentEvent,
  answerMismatch,
  callbackNote,
  statusConfirms,
} from '../domain/payment-events';
import { approvalOutcome, approvalRefusal } from '../domain/approval-rules';
import type { Approval, ApprovalInput, ApprovalState } from '../domain/approval-rules';

const EARLY = 'came before the initiation answered; judged once it does';

/** What hears of every status change (the workflow's PaymentStatusEffects; a test's recorder). */
export interface PaymentStatusListener {
  statusChanged(state: PaymentState): void;
  /** Any recorded event, with or without a new status (a refused callback, a failed status check…). */
  changed?(state: PaymentState): void;
}

/**
 * The payment's state machine: every transition of the payment status diagram (ARCHITECTURE.md, the API docs),
 * and the events that explain it.
 * Deterministic and free of Temporal calls, so the workflow stays short and the rules are unit-testable.
 */
export class PaymentState {
  readonly resource: PaymentResource;
  /** Callbacks that came while the initiation was still running: judged once it answers. */
  private readonly early: ProviderCallback[] = [];
  /** Callbacks that wait for the status query to confirm them. */
  private readonly unconfirmed: ProviderCallback[] = [];
  /** Whether the provider ever showed it knows the payment: an acknowledgement, a callback, a status it found. */
  private providerKnowsIt = false;
  /** Status checks the provider answered with "no such transaction". */
  private notFoundChecks = 0;
  /** A transaction a callback named whose confirming status query failed: reconciliation asks about it. */
  private unconfirmedTransactionId: string | null = null;
  /** Who created the payment (never one of its approvers), and how many operators must approve it. */
  private readonly approval: Pick<ApprovalState, 'createdBy' | 'required'>;

  constructor(
    private readonly input: PaymentInput,
    private readonly listener: PaymentStatusListener = { statusChanged: () => undefined },
  ) {
    this.resource = newPaymentResource(input);
    this.approval = { createdBy: input.merchantId, required: input.approvalsRequired ?? 0 };
  }

  /** A copy that changes apart from this state, telling `listener`: what a change would make of the payment. */
  fork(listener: PaymentStatusListener): PaymentState {
    const copy = new PaymentState(this.input, listener);
    copy.adopt(this);
    copy.adoptsNamedTransaction = this.adoptsNamedTransaction;
    return copy;
  }

  /** Takes on everything `other` (a fork) holds: the change worked out on it happened. Tells no listener. */
  adopt(other: PaymentState): void {
    const resource = JSON.parse(JSON.stringify(other.resource)) as Record<string, unknown>;
    for (const key of Object.keys(this.resource)) if (!(key in resource)) Reflect.deleteProperty(this.resource, key);
    Object.assign(this.resource, resource);
    this.early.splice(0, this.early.length, ...other.early);
    this.unconfirmed.splice(0, this.unconfirmed.length, ...other.unconfirmed);
    this.providerKnowsIt = other.providerKnowsIt;
    this.notFoundChecks = other.notFoundChecks;
    this.unconfirmedTransactionId = other.unconfirmedTransactionId;
  }

  get status(): PaymentStatus {
    return this.resource.status;
  }

  get terminal(): boolean {
    return isTerminal(this.resource.status);
  }

  /** Why this operator's decision is refused now (nothing waits for one, or not theirs to make), or undefined. */
  decisionRefusal(decision: ApprovalInput): string | undefined {
    if (this.status !== 'awaiting_approval') {
      return `payment is ${this.status}; only awaiting_approval can be approved or rejected`;
    }
    return approvalRefusal(this.approvalState, decision);
  }

  /** An operator's decision: enough approvals send the payment (`initiating`), a rejection fails it, nothing sent. */
  decided(approval: Approval, now: Date): void {
    if (this.decisionRefusal(approval)) return;
    this.resource.approvals = [...(this.resource.approvals ?? []), approval];
    this.record(now, { type: 'approval_decided', outcome: approval.decision, message: `by ${approval.operator}` });
    const outcome = approvalOutcome(this.approvalState);
    if (outcome === 'approved') this.setStatus('initiating', now);
    if (outcome === 'rejected') {
      this.settle('failed', now, {
        code: 'rejected_by_operator',
        message: `rejected by ${approval.operator}; nothing was sent to the provider`,
      });
    }
  }

  /** Nobody approved it within its window (APPROVAL_WINDOW): it fails, nothing sent. */
  approvalExpired(now: Date): void {
    if (this.status !== 'awaiting_approval') return;
    this.record(now, { type: 'approval_expired', message: `not approved by ${this.resource.approval_expires_at}` });
    this.settle('failed', now, {
      code: 'approval_expired',
      message: 'no operator approved it within the approval window; nothing was sent to the provider',
    });
  }

  private get approvalState(): ApprovalState {
    return { ...this.approval, approvals: this.resource.approvals ?? [] };
  }

  /** The provider acknowledged the initiation: the payment now waits for its callback. */
  initiated(ack: ProviderAck, now: Date): void {
    this.providerKnowsIt = true;
    const provider = this.resource.provider;
    provider.transaction_id ??= ack.transactionId;
    provider.status_code = ack.statusCode;
    provider.message = ack.message;
    this.record(now, { type: 'initiated', status_code: ack.statusCode, message: ack.message });
    if (this.status === 'initiating') this.setStatus('pending', now);
    this.reviewEarlyCallbacks(now);
    if (ack.redirectUrl && !this.terminal) this.resource.next_action = { type: 'redirect', url: ack.redirectUrl };
  }

  /** The provider refused the initiation (it processed nothing): the payment fails with its reason. */
  initiationRejected(failure: Failure, now: Date): void {
    this.record(now, { type: 'initiation_rejected', status_code: failure.code, message: failure.message });
    this.settle('failed', now, failure);
    this.early.length = 0;
  }

  /** The initiation never reached the provider, even after the client's retries: the payment fails, nothing was sent. */
  initiationNotSent(reason: string, now: Date): void {
    this.initiationRejected({ code: 'provider_unreachable', message: reason }, now);
  }

  /** Nobody knows whether the provider acted on the request: never resend, let callbacks or reconciliation tell. */
  initiationUnknown(reason: string, now: Date, code?: string): void {
    this.record(now, { type: 'initiation_unknown', ...(code ? { status_code: code } : {}), message: reason });
    if (this.status === 'initiating') this.setStatus('pending', now);
    // No acknowledged transaction to compare with: callbacks that came early need the status query now.
    this.unconfirmed.push(...this.early.splice(0));
  }

  /**
   * A provider callback (its URL token and the server's signature are checked before it gets here). A URL can leak,
   * so a callback is a hint: one that would settle the payment must match what the provider acknowledged (its
   * transaction id, and its amount when it carries one) and then waits for the status query to confirm it.
   */
  callback(callback: ProviderCallback, now: Date): void {
    this.providerKnowsIt = true;
    const note = callbackNote(this.resource, callback);
    if (note) {
      this.record(now, note);
      return;
    }
    const details = { status_code: callback.statusCode ?? undefined, message: callback.message ?? undefined };
    if (this.status === 'initiating' || this.status === 'awaiting_approval') {
      this.record(now, { type: 'callback_unconfirmed', outcome: callback.state, ...details, message: EARLY });
      this.early.push(callback);
      return;
    }
    this.record(now, {
      type: 'callback_unconfirmed',
      outcome: callback.state,
      ...details,
      message: this.doubt(callback),
    });
    this.unconfirmed.push(callback);
  }

  /** The transaction the status query asks about: the acknowledged one, else one a callback named (see confirmation). */
  get transactionIdToCheck(): string | null {
    return this.resource.provider.transaction_id ?? this.unconfirmedTransactionId;
  }

  /** True while a callback waits for the status query to confirm it. */
  get awaitingConfirmation(): boolean {
    return !this.terminal && this.unconfirmed.length > 0;
  }

  /**
   * Whether a final status answer about the transaction a callback named settles a payment that holds none (the
   * workflow answers per its patch; on its own, yes).
   */
  adoptsNamedTransaction: () => boolean = () => true;

  /** The next callback to confirm with the status query, taken off the queue. */
  nextUnconfirmed(): ProviderCallback | undefined {
    return this.unconfirmed.shift();
  }

  /**
   * The status query's answer about a callback that would settle the payment. Null (no status query is configured or
   * fits) keeps callbacks authoritative: one naming the acknowledged transaction settles. An answer settles when it
   * agrees (state, transaction, amount); one that disagrees settles by its own final state when it is about this
   * payment's transaction and amount; anything else leaves the payment waiting (reconciliation asks again).
   */
  confirmation(callback: ProviderCallback, check: StatusCheck | null | { error: string }, now: Date): void {
    if (this.terminal) return;
    const details = { outcome: callback.state, status_code: callback.statusCode ?? undefined };
    const knownMatch =
      callback.transactionId !== null && callback.transactionId === this.resource.provider.transaction_id;
    if (check === null && knownMatch) {
      this.record(now, { type: 'callback_received', ...details, message: 'no status query is configured to confirm' });
      this.settleByCallback(callback, now);
      return;
    }
    // A failed query is asked again in reconciliation, about the transaction the callback named.
    if (check !== null && 'error' in check && callback.transactionId !== null) {
      this.unconfirmedTransactionId ??= callback.transactionId;
      this.record(now, {
        type: 'callback_unconfirmed',
        ...details,
        message: `not confirmed yet (the status query failed: ${check.error}); reconciliation asks again`,
      });
      return;
    }
    if (check === null || 'error' in check) {
      const why = check === null ? 'no status query fits this payment' : `the status query failed: ${check.error}`;
      this.record(now, { type: 'callback_rejected', ...details, message: `not confirmed (${why}); ignored` });
      return;
    }
    if (statusConfirms(callback, check, this.held)) {
      this.resource.provider.transaction_id ??= callback.transactionId;
      this.record(now, { type: 'callback_confirmed', ...details, message: 'the status query says the same' });
      this.settleByCallback(callback, now);
      return;
    }
    const expected = callback.transactionId ?? this.resource.provider.transaction_id;
    const sameTransaction = check.transactionId === null || check.transactionId === expected;
    const amountProblem = this.checkedAmountProblem(check);
    const says = `the status query says ${check.state}${sameTransaction ? '' : ` for transaction ${check.transactionId}`}`;
    // A payment that holds no transaction (its initiation's answer was lost) takes the one its own callback named.
    const named = this.resource.provider.transaction_id === null && expected !== null;
    const ours =
      sameTransaction &&
      !amountProblem &&
      (expected === this.resource.provider.transaction_id || (named && this.adoptsNamedTransaction()));
    if ((check.state === 'succeeded' || check.state === 'failed') && ours) {
      this.resource.provider.transaction_id ??= expected;
      this.record(now, { type: 'callback_rejected', ...details, message: `${says}, which settles the payment` });
      this.settle(check.state, now, { code: 'provider_declined', message: check.message ?? 'failed at the provider' });
      return;
    }
    this.record(now, { type: 'callback_rejected', ...details, message: `${amountProblem ?? says}; ignored` });
  }

  /** The transaction and amount a status answer is checked against (statusConfirms). */
  get held(): { transactionId: string | null; amount: number } {
    return { transactionId: this.resource.provider.transaction_id, amount: this.resource.amount };
  }

  /** Why a status answer's amount is not this payment's (an answer without one is judged on state and transaction). */
  private checkedAmountProblem(check: StatusCheck): string | undefined {
    const amount = check.amount ?? null;
    if (amount === null || toMinorUnits(amount) === toMinorUnits(this.resource.amount)) return undefined;
    return `the status query says amount ${check.amount}, not the payment's ${this.resource.amount}`;
  }

  /** A message that did not come through the front door (unsigned, or signed for something else): recorded only. */
  refusedMessage(what: string, reason: string, now: Date): void {
    this.record(now, { type: 'callback_rejected', message: `${what} refused: ${reason}` });
  }

  /** No callback came in time: reconciliation starts. */
  timedOut(waitedMs: number, now: Date): void {
    this.record(now, { type: 'timed_out', message: `no callback within ${Math.round(waitedMs / 1000)}s` });
    this.setStatus('reconciling', now);
  }

  /** One answer of the provider's status query, or why there was none. */
  statusChecked(attempt: number, check: StatusCheck | { error: string }, now: Date): void {
    if ('error' in check) {
      this.record(now, { type: 'status_checked', outcome: 'error', message: `check ${attempt}: ${check.error}` });
      return;
    }
    // A status answer settles only the acknowledged transaction, for the payment's amount.
    const mismatch =
      check.state === 'not_found'
        ? undefined
        : answerMismatch(this.resource, check.transactionId, check.amount ?? null);
    if (mismatch) {
      this.record(now, { type: 'status_checked', outcome: check.state, message: `check ${attempt}: ${mismatch}` });
      return;
    }
    if (check.state === 'not_found') this.notFoundChecks++;
    else this.providerKnowsIt = true;
    this.resource.provider.transaction_id ??= check.transactionId;
    this.record(now, {
      type: 'status_checked',
      outcome: check.state,
      status_code: check.statusCode ?? undefined,
      message: `check ${attempt}${check.message ? `: ${check.message}` : ''}`,
    });
    if (check.state === 'succeeded' || check.state === 'failed') {
      this.settle(check.state, now, { code: 'provider_declined', message: check.message ?? 'failed at the provider' });
    }
  }

  /**
   * Whether the provider says the request never reached it: the initiation's outcome was unknown, nothing ever came
   * back for it (no acknowledgement, no callback), and at least two status checks by reference found no transaction.
   */
  get neverReachedProvider(): boolean {
    return !this.terminal && !this.providerKnowsIt && this.notFoundChecks >= 2;
  }

  /** Settles a payment the provider never received: failed, nothing was taken, the merchant may try again. */
  notSent(now: Date): void {
    const message =
      `the provider has no transaction for this payment after ${this.notFoundChecks} status checks: ` +
      'the request never reached it and nothing was taken';
    this.settle('failed', now, { code: 'not_sent', message });
  }

  /**
   * Someone asked Temporal to cancel the workflow (`temporal workflow cancel`, the Web UI). A payment is not undone
   * by that: an initiation already running finishes, and what the provider has still settles.
   */
  cancelRequested(now: Date): void {
    const message = this.terminal
      ? 'the payment already has its outcome'
      : this.status === 'initiating' || this.status === 'awaiting_approval'
        ? 'it fails unless its initiation has already started, which then finishes and settles as usual'
        : 'the provider already has the payment: it still settles by callback, reconciliation or review';
    this.record(now, { type: 'cancel_requested', message: `cancellation requested in Temporal; ${message}` });
  }

  /** The cancellation came before any worker started the initiation (or while it awaited approval): nothing was sent. */
  cancelledBeforeInitiation(now: Date): void {
    this.settle('failed', now, {
      code: 'cancelled',
      message: 'cancelled in Temporal before its initiation started; nothing was sent to the provider',
    });
  }

  /** Reconciliation could not settle the payment: an operator has to. */
  needsReview(reason: string, now: Date): void {
    this.record(now, { type: 'needs_review', message: reason });
    this.setStatus('needs_review', now);
  }

  /** Why an operator may not resolve the payment now, or undefined when they may. */
  resolveRefusal(): string | undefined {
    return this.status === 'needs_review' ? undefined : `payment is ${this.status}; only needs_review can be resolved`;
  }

  /** An operator settles a payment in review. */
  resolve(input: ResolveInput, now: Date): void {
    this.record(now, {
      type: 'resolved',
      outcome: input.outcome,
      message: input.operator ? `${input.note} (by ${input.operator})` : input.note,
    });
    this.settle(input.outcome, now, { code: 'operator_resolved', message: input.note });
  }

  /**
   * A notification about this payment was queued for its merchant. Recorded without touching `updated_at`
   * (nothing about the payment changed); at most a few per payment (the notifier caps them).
   */
  notificationQueued(type: string, eventId: string, now: Date): void {
    addNotificationQueued(this.resource, type, eventId, now);
  }

  /** Why a callback cannot be this payment's at all: another amount, or another transaction than acknowledged. */
  private mismatch(callback: ProviderCallback): string | undefined {
    return answerMismatch(this.resource, callback.transactionId, callback.amount);
  }

  /** What the status query is asked to confirm about a callback that would settle the payment. */
  private doubt(callback: ProviderCallback): string {
    if (this.resource.provider.transaction_id === null) return 'no acknowledged transaction to match; checking';
    if (callback.transactionId === null) return 'no transaction id; checking with the status query';
    if (callback.state === 'succeeded' && callback.amount === null) return 'success without an amount; checking';
    return 'checking with the status query before it settles';
  }

  /** Callbacks that came before the acknowledgement, judged now that it has come. */
  private reviewEarlyCallbacks(now: Date): void {
    for (const callback of this.early.splice(0)) {
      const mismatch = this.mismatch(callback);
      const details = { outcome: callback.state, status_code: callback.statusCode ?? undefined };
      if (mismatch) {
        this.record(now, { type: 'callback_rejected', ...details, message: mismatch });
      } else if (this.terminal) {
        this.record(now, {
          type: callback.state === this.status ? 'callback_duplicate' : 'callback_contradicting',
          ...details,
        });
      } else {
        this.unconfirmed.push(callback);
      }
    }
  }

  private settleByCallback(callback: ProviderCallback, now: Date): void {
    if (callback.state !== 'succeeded' && callback.state !== 'failed') return;
    this.settle(callback.state, now, {
      code: 'provider_declined',
      message: callback.message ?? 'declined by the provider',
    });
  }

  private settle(outcome: Outcome, now: Date, failure: Failure): void {
    if (this.terminal) return;
    this.resource.failure = outcome === 'failed' ? failure : null;
    if (outcome === 'failed') this.resource.next_action = null;
    this.record(now, { type: outcome });
    this.setStatus(outcome, now);
    // Callbacks still waiting for the status query are judged against the outcome, as later ones are.
    for (const waiting of this.unconfirmed.splice(0)) {
      this.record(now, {
        type: waiting.state === outcome ? 'callback_duplicate' : 'callback_contradicting',
        outcome: waiting.state,
        status_code: waiting.statusCode ?? undefined,
      });
    }
  }

  private setStatus(status: PaymentStatus, now: Date): void {
    this.resource.status = status;
    this.resource.updated_at = now.toISOString();
    this.listener.statusChanged(this);
  }

  private record(now: Date, event: Omit<PaymentEvent, 'at'>): void {
    this.addEvent(now, event);
    this.listener.changed?.(this);
  }

  private addEvent(now: Date, event: Omit<PaymentEvent, 'at'>): void {
    addPaymentEvent(this.resource, event, now);
  }
}
