import type { SandboxTransaction } from './store';

const STYLE = `
  body { font-family: system-ui, sans-serif; background: #f3f4f6; margin: 0; }
  main { max-width: 26rem; margin: 4rem auto; background: #fff; padding: 2rem; border-radius: .75rem; box-shadow: 0 1px 4px #0002; }
  h1 { font-size: 1.25rem; margin-top: 0; }
  .note { color: #92400e; background: #fef3c7; padding: .5rem .75rem; border-radius: .375rem; font-size: .875rem; }
  dl { display: grid; grid-template-columns: auto 1fr; gap: .25rem 1rem; }
  dt { color: #6b7280; }
  dd { margin: 0; }
  .actions { display: flex; gap: .75rem; margin-top: 1.5rem; }
  button { font-size: 1rem; padding: .6rem 1.4rem; border: 0; border-radius: .375rem; cursor: pointer; color: #fff; }
  .approve { background: #15803d; }
  .decline { background: #b91c1c; }
`;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body>
</html>
`;
}

/** The payer's 3-D Secure page: transaction details with Approve and Decline buttons while the step is pending. */
export function renderThreeDsPage(transaction: SandboxTransaction): string {
  const id = transaction.transaction_id;
  const details = `<dl>
  <dt>Transaction</dt><dd>${id}</dd>
  <dt>Reference</dt><dd>${escapeHtml(transaction.reference)}</dd>
  <dt>Amount</dt><dd>GHS ${transaction.amount.toFixed(2)}</dd>
  <dt>Card</dt><dd>•••• ${escapeHtml(transaction.card_last4 ?? '????')}</dd>
</dl>`;
  const action =
    transaction.three_ds === 'pending'
      ? `<div class="actions">
  <form method="post" action="/sandbox/3ds/${id}/approve"><button class="approve" type="submit">Approve</button></form>
  <form method="post" action="/sandbox/3ds/${id}/decline"><button class="decline" type="submit">Decline</button></form>
</div>`
      : `<p>This 3-D Secure step is already settled (${escapeHtml(transaction.three_ds ?? 'not required')}).</p>
<p><a href="${escapeHtml(transaction.return_url ?? '#')}">Return to the merchant</a></p>`;
  return page(
    '3-D Secure check',
    `<h1>3-D Secure check</h1>
<p class="note">Sandbox provider: no card is charged. Choose how the issuer answers.</p>
${details}
${action}`,
  );
}

/** The page for an unknown or non-card transaction id. */
export function renderUnknownTransactionPage(id: string): string {
  return page('Unknown transaction', `<h1>Unknown transaction</h1><p>No card payment ${escapeHtml(id)} here.</p>`);
}
