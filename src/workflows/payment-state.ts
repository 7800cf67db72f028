import { isTerminal } from '../domain/payment';
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
} from '../domain/payment';
import { toMinorUnits } from '../domain/money';

const MAX_EVENTS = 200;

/**
 * The payment's state machine: every transition of PRODUCT.md's status diagram, and the events that explain it.
 * Deterministic and free of Temporal calls, so the workflow stays short and the rules are unit-testable.
 */
export class PaymentState {
  readonly resource: PaymentResource;

  constructor(
    input: PaymentInput,
    private readonly onStatusChange: (status: PaymentStatus) => void = () => undefined,
  ) {
    const { request } = input;
    this.resource = {
      id: input.paymentId,
      type: request.type,
      reference: request.reference,
      status: 'initiating',
      amount: request.amount,
      created_at: input.createdAt,
      updated_at: input.createdAt,
      provider: { transaction_id: null, status_code: null, message: null },
      next_action: null,
      failure: null,
      ...(request.type === 'card_payment' ? { card: { last4: cardLast4(request) } } : {}),
      events: [],
    };
  }

  get status(): PaymentStatus {
    return this.resource.status;
  }

  get terminal(): boolean {
    return isTerminal(this.resource.status);
  }

  /** The provider acknowledged the initiation: the payment now waits for its callback. */
  initiated(ack: ProviderAck, now: Date): void {
    const provider = this.resource.provider;
    provider.transaction_id ??= ack.transactionId;
    provider.status_code = ack.statusCode;
    provider.message = ack.message;
    if (ack.redirectUrl && !this.terminal) this.resource.next_action = { type: 'redirect', url: ack.redirectUrl };
    this.record(now, { type: 'initiated', status_code: ack.statusCode, message: ack.message });
    if (this.status === 'initiating') this.setStatus('pending', now);
  }

  /** The provider definitely refused the initiation (it processed nothing). */
  initiationRejected(failure: Failure, now: Date): void {
    this.record(now, { type: 'initiation_rejected', status_code: failure.code, message: failure.message });
    this.settle('failed', now, failure);
  }

  /** Nobody knows whether the provider acted on the request: never resend, let callbacks or reconciliation tell. */
  initiationUnknown(reason: string, now: Date): void {
    this.record(now, { type: 'initiation_unknown', message: reason });
    if (this.status === 'initiating') this.setStatus('pending', now);
  }

  /** A provider callback, genuine by its token; it may come in any state, also before the initiation returns. */
  callback(callback: ProviderCallback, now: Date): void {
    const details = { status_code: callback.statusCode ?? undefined, message: callback.message ?? undefined };
    if (callback.amount !== null && toMinorUnits(callback.amount) !== toMinorUnits(this.resource.amount)) {
      this.record(now, {
        type: 'callback_unrecognized',
        ...details,
        message: `amount ${callback.amount} does not match the payment's ${this.resource.amount}; ignored`,
      });
      return;
    }
    if (callback.state === 'unknown') {
      this.record(now, { type: 'callback_unrecognized', ...details });
      return;
    }
    this.resource.provider.transaction_id ??= callback.transactionId;
    if (callback.state === 'pending') {
      this.record(now, { type: 'callback_received', outcome: 'pending', ...details });
      return;
    }
    if (this.terminal) {
      const same = callback.state === this.status;
      this.record(now, {
        type: same ? 'callback_duplicate' : 'callback_contradicting',
        outcome: callback.state,
        ...details,
      });
      return;
    }
    this.record(now, { type: 'callback_received', outcome: callback.state, ...details });
    this.settle(callback.state, now, {
      code: 'provider_declined',
      message: callback.message ?? 'declined by the provider',
    });
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

  private settle(outcome: Outcome, now: Date, failure: Failure): void {
    if (this.terminal) return;
    this.resource.failure = outcome === 'failed' ? failure : null;
    if (outcome === 'failed') this.resource.next_action = null;
    this.record(now, { type: outcome });
    this.setStatus(outcome, now);
  }

  private setStatus(status: PaymentStatus, now: Date): void {
    this.resource.status = status;
    this.resource.updated_at = now.toISOString();
    this.onStatusChange(status);
  }

  private record(now: Date, event: Omit<PaymentEvent, 'at'>): void {
    const events = this.resource.events;
    if (events.length >= MAX_EVENTS) return;
    const clean = Object.fromEntries(Object.entries(event).filter(([, v]) => v !== undefined)) as Omit<
      PaymentEvent,
      'at'
    >;
    events.push({ at: now.toISOString(), ...clean });
    this.resource.updated_at = now.toISOString();
  }
}

/**
 * The card's last four digits. Card payments started before the vault carried the card number itself: their
 * histories must still replay (and the digits they keep are the only ones shown).
 */
function cardLast4(request: { card?: { last4: string }; card_number?: string }): string {
  return request.card?.last4 ?? (request.card_number ?? '').slice(-4);
}
