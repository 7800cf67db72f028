// The columns of the payments CSV exports, in order: the header row names them, the OpenAPI document describes them,
// the record export selects them. What a finance team reconciles with; no card or personal data.

/** A payment's outcome, in the payments exports and a batch's report alike. */
const OUTCOME_COLUMNS = [
  { name: 'provider_transaction_id', description: "the provider's transaction id; empty when it has none" },
  { name: 'failure_code', description: 'why it failed (`provider_declined`, …); empty when it has not' },
  { name: 'failure_message', description: 'the failure in words; empty when it has not failed' },
] as const;

/** Each column of a payments CSV export, in order, with what it holds. */
export const PAYMENT_EXPORT_COLUMNS = [
  { name: 'id', description: 'the payment id (`GET /v1/payments/{id}`)' },
  { name: 'reference', description: "the merchant's reference" },
  { name: 'type', description: '`mobile_money_debit`, `card_payment` or `bank_credit`' },
  { name: 'status', description: 'the status as `GET` shows it' },
  { name: 'amount', description: 'the amount as stored, with two decimals (`12.50`)' },
  { name: 'created_at', description: 'creation time, ISO 8601 UTC (the order: oldest first, then by id)' },
  { name: 'updated_at', description: 'last change, ISO 8601 UTC' },
  ...OUTCOME_COLUMNS,
  { name: 'batch_id', description: 'the payout batch of an item; empty for a single payment' },
] as const;

export type PaymentExportColumn = (typeof PAYMENT_EXPORT_COLUMNS)[number]['name'];

/** One data row of an export, a cell per column in order; null is an empty cell. */
export type PaymentExportRow = (string | null)[];

/** Each column of a payout batch's report (`report.csv`): every item in upload order, started or not. */
export const BATCH_REPORT_COLUMNS = [
  { name: 'position', description: "the item's place in the upload, from 1" },
  { name: 'reference', description: "the item's reference" },
  { name: 'amount', description: 'the amount, with two decimals (`250.00`)' },
  {
    name: 'status',
    description: "its payment's status as `GET` shows it, or `not_started` when the batch has not started it",
  },
  ...OUTCOME_COLUMNS,
  { name: 'payment_id', description: "the item's payment id (`GET /v1/payments/{id}`), started or not" },
] as const;

export type BatchReportColumn = (typeof BATCH_REPORT_COLUMNS)[number]['name'];
