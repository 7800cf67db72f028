import type { PaymentRequest } from '../domain/requests';

// What the Temporal Web UI shows at the top of a payment workflow (its static summary and details).

/** One line for the workflow list and header: `card payment 40 · order-1002` (the UI renders it as Markdown). */
export function paymentSummary(request: PaymentRequest): string {
  return `${request.type.replace(/_/g, ' ')} ${request.amount} · ${escapeMarkdown(request.reference)}`;
}

/** Markdown details fixed at creation; no personal data beyond a card's last four digits. */
export function paymentDetails(merchantId: string, request: PaymentRequest, createdAt: string): string {
  const lines = [
    `**${request.type}** of **${request.amount}**`,
    `merchant \`${merchantId}\`, reference \`${request.reference}\``,
    request.type === 'card_payment' ? `card •••• ${request.card_number.slice(-4)}` : undefined,
    request.type === 'bank_credit' ? `bank ${request.bank_code}` : undefined,
    `created ${createdAt}`,
  ];
  return lines.filter(Boolean).join('  \n');
}

/** Keeps a reference like `order_1_2` literal in Markdown. */
function escapeMarkdown(text: string): string {
  return text.replace(/[_*`\\[\]]/g, '\\$&');
}
