import { lastFour } from './personal-data';
import type { PaymentResource } from './payment-model';
import type { PaymentRequest } from './requests';

// What the Temporal Web UI shows at the top of a payment workflow: its static summary and details, fixed at
// creation, and its current details, which the workflow updates as the payment moves.

/** One line for the workflow list and header: `card payment 40 · order-1002` (the UI renders it as Markdown). */
export function paymentSummary(request: PaymentRequest): string {
  return `${request.type.replace(/_/g, ' ')} ${request.amount} · ${escapeMarkdown(request.reference)}`;
}

/** Markdown details fixed at creation; no personal data beyond a card's last four digits. */
export function paymentStaticDetails(merchantId: string, request: PaymentRequest, createdAt: string): string {
  const lines = [
    `**${request.type}** of **${request.amount}**`,
    `merchant \`${merchantId}\`, reference \`${request.reference}\``,
    request.type === 'card_payment' ? `card •••• ${lastFour(request.card_number)}` : undefined,
    request.type === 'bank_credit' ? `bank ${request.bank_code}` : undefined,
    `created ${createdAt}`,
  ];
  return lines.filter(Boolean).join('  \n');
}

/** The Web UI's "current details" of a payment: its status, what happened last, and the provider's reference. */
export function paymentCurrentDetails(payment: PaymentResource): string {
  // A queued notification is bookkeeping, not news about the payment.
  const last = payment.events.filter((event) => event.type !== 'notification_queued').at(-1);
  const lastText = last && [last.type, last.outcome, last.message].filter(Boolean).join(' · ');
  const lines = [
    `status: **${payment.status}**, updated ${payment.updated_at}`,
    lastText ? `last event: ${lastText}` : undefined,
    payment.provider.transaction_id ? `provider transaction: \`${payment.provider.transaction_id}\`` : undefined,
    payment.failure ? `failure: ${payment.failure.code} · ${payment.failure.message}` : undefined,
    payment.status === 'needs_review' ? 'waiting for an operator: `npm run ops -- resolve <id> …`' : undefined,
    payment.status === 'awaiting_approval'
      ? `waiting for an operator's approval until ${payment.approval_expires_at ?? '-'}: \`npm run ops -- approve <id>\``
      : undefined,
  ];
  return lines.filter(Boolean).join('  \n');
}

/** Keeps a reference like `order_1_2` literal in Markdown. */
function escapeMarkdown(text: string): string {
  return text.replace(/[_*`\\[\]]/g, '\\$&');
}
