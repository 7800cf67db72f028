import { CALLBACK_EVENT_TYPES, isTerminal } from './payment-model';
import type { PaymentEvent, PaymentResource, ProviderCallback, StatusCheck } from './payment-model';
import { toMinorUnits } from './money';
import { newNotificationEvent } from './notification-event';
import type { NotificationEvent } from './notification';

// A payment's events, as its workflow records them and as the server records a callback that comes after the workflow
// has closed: one set of rules for both, so a late callback reads the same whichever recorded it.

/** Distinct events of a kind a flood could repeat (callbacks, status checks) recorded at most; repeats are counted. */
const MAX_REPEATABLE_EVENTS = 200;
/** Settling, review and resolution events are always recorded; this only bounds a runaway history. */
export const MAX_EVENTS = 1000;
/** At most this many notifications per payment or batch (late callbacks could otherwise send without bound). */
export const MAX_NOTIFICATIONS_PER_SUBJECT = 25;
const REPEATABLE = new Set<PaymentEvent['type']>([...CALLBACK_EVENT_TYPES, 'status_checked']);

export type NewPaymentEvent = Omit<PaymentEvent, 'at'>;

/**
 * Adds `event` to the payment at `now`: a repeat of a distinct callback or status event only counts up, so a flood
 * cannot push real events out. Answers whether it was added as a new event.
 */
export function addPaymentEvent(payment: PaymentResource, event: NewPaymentEvent, now: Date): boolean {
  const clean = Object.fromEntries(Object.entries(event).filter(([, v]) => v !== undefined)) as NewPaymentEvent;
  payment.updated_at = now.toISOString();
  if (REPEATABLE.has(clean.type)) {
    const key = repeatKey(clean);
    const repeatable = payment.events.filter((e) => REPEATABLE.has(e.type));
    const earlier = repeatable.find((e) => repeatKey(e) === key);
    if (earlier) {
      earlier.count = (earlier.count ?? 1) + 1;
      return false;
    }
    if (repeatable.length >= MAX_REPEATABLE_EVENTS) return false;
  } else if (payment.events.length >= MAX_EVENTS) {
    return false;
  }
  payment.events.push({ at: now.toISOString(), ...clean });
  return true;
}

function repeatKey(event: NewPaymentEvent): string {
  return [event.type, event.outcome, event.status_code, event.message].join('|');
}

/** Why a callback's or status answer's transaction and amount are not this payment's, or undefined. */
export function answerMismatch(
  payment: PaymentResource,
  transactionId: string | null,
  amount: number | null,
): string | undefined {
  if (amount !== null && toMinorUnits(amount) !== toMinorUnits(payment.amount)) {
    return `amount ${amount} does not match the payment's ${payment.amount}; ignored`;
  }
  const known = payment.provider.transaction_id;
  if (known !== null && transactionId !== null && transactionId !== known) {
    return `transaction ${transactionId} is not the acknowledged ${known}; ignored`;
  }
  return undefined;
}

/**
 * Whether a status answer confirms a callback that would settle a payment (`held`: its transaction and amount before
 * the callback): the same state, the transaction the callback named (else the held one), the payment's amount. The
 * workflow settles by such a callback; the confirmation activity writes the record of that settlement with it.
 */
export function statusConfirms(
  callback: ProviderCallback,
  check: StatusCheck,
  held: { transactionId: string | null; amount: number },
): boolean {
  const expected = callback.transactionId ?? held.transactionId;
  const amount = check.amount ?? null;
  return (
    check.state === callback.state &&
    (check.transactionId === null || check.transactionId === expected) &&
    (amount === null || toMinorUnits(amount) === toMinorUnits(held.amount))
  );
}

/**
 * The event a callback records without moving the payment: one it cannot read, one about another transaction or
 * amount, a pending one, or any callback once the payment has its outcome (the first one wins). Undefined: it may
 * settle the payment.
 */
export function callbackNote(payment: PaymentResource, callback: ProviderCallback): NewPaymentEvent | undefined {
  const details = { status_code: callback.statusCode ?? undefined, message: callback.message ?? undefined };
  if (callback.state === 'unknown') return { type: 'callback_unrecognized', ...details };
  const mismatch = answerMismatch(payment, callback.transactionId, callback.amount);
  if (mismatch) return { type: 'callback_rejected', outcome: callback.state, ...details, message: mismatch };
  if (callback.state === 'pending') return { type: 'callback_received', outcome: 'pending', ...details };
  if (!isTerminal(payment.status)) return undefined;
  const same = callback.state === payment.status;
  return { type: same ? 'callback_duplicate' : 'callback_contradicting', outcome: callback.state, ...details };
}

/** Shows on the payment that a notification was queued for its merchant (`updated_at` stays: nothing changed). */
export function addNotificationQueued(payment: PaymentResource, type: string, eventId: string, now: Date): void {
  if (payment.events.length >= MAX_EVENTS) return;
  payment.events.push({ at: now.toISOString(), type: 'notification_queued', message: `${type} ${eventId}` });
}

/** The notification a payment's change sends (its id from `uuid`), shown on the payment as `notification_queued`. */
function paymentNotification(
  payment: PaymentResource,
  merchantId: string,
  type: NotificationEvent['type'],
  uuid: string,
  now: Date,
): NotificationEvent | undefined {
  const sent = payment.events.filter((e) => e.type === 'notification_queued').length;
  if (sent >= MAX_NOTIFICATIONS_PER_SUBJECT) return undefined;
  const event = newNotificationEvent(uuid, type, merchantId, payment, now);
  addNotificationQueued(payment, type, event.id, now);
  return event;
}

/**
 * A callback that came after the payment's workflow closed, recorded on the payment as its workflow would have: a
 * new contradicting outcome is news to the merchant (`payment.late_callback`), anything else is only shown.
 */
export function withLateCallback(
  payment: PaymentResource,
  merchantId: string,
  callback: ProviderCallback,
  now: Date,
  newUuid: () => string,
): { payment: PaymentResource; notification?: NotificationEvent } {
  const changed = JSON.parse(JSON.stringify(payment)) as PaymentResource;
  const note = callbackNote(changed, callback);
  if (!note) return { payment: changed };
  const added = addPaymentEvent(changed, note, now);
  if (!added || note.type !== 'callback_contradicting') return { payment: changed };
  const notification = paymentNotification(changed, merchantId, 'payment.late_callback', newUuid(), now);
  return notification ? { payment: changed, notification } : { payment: changed };
}
