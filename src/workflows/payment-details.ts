import type { PaymentResource } from '../domain/payment';

/** The Web UI's "current details" of a payment: its status, what happened last, and the provider's reference. */
export function currentDetails(payment: PaymentResource): string {
  const last = payment.events.at(-1);
  const lastText = last && [last.type, last.outcome, last.message].filter(Boolean).join(' · ');
  const lines = [
    `status: **${payment.status}**, updated ${payment.updated_at}`,
    lastText ? `last event: ${lastText}` : undefined,
    payment.provider.transaction_id ? `provider transaction: \`${payment.provider.transaction_id}\`` : undefined,
    payment.failure ? `failure: ${payment.failure.code} · ${payment.failure.message}` : undefined,
    payment.status === 'needs_review' ? 'waiting for an operator: `npm run ops -- resolve <id> …`' : undefined,
  ];
  return lines.filter(Boolean).join('  \n');
}
