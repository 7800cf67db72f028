// Every workflow's type name and id format, for the server, the worker, the CLI and the logs alike.

/** The payment workflow's type name, as callers and the worker know it. */
export const PAYMENT_WORKFLOW = 'paymentWorkflow';
export const PAYOUT_BATCH_WORKFLOW = 'payoutBatchWorkflow';

const PAYMENT_PREFIX = 'payment-';
const BATCH_PREFIX = 'batch-';

/** The workflow ID of a merchant's payment: readable, and unique per merchant and reference. */
export function paymentWorkflowId(merchantId: string, reference: string): string {
  return `${PAYMENT_PREFIX}${merchantId}-${reference}`;
}

/** A batch item's payment id; `~` cannot occur in a reference, so it never collides with a single payment's. */
export function batchItemPaymentId(merchantId: string, batchReference: string, itemReference: string): string {
  return paymentWorkflowId(merchantId, `${batchReference}~${itemReference}`);
}

/** The workflow ID of a merchant's payout batch. */
export function batchWorkflowId(merchantId: string, reference: string): string {
  return `${BATCH_PREFIX}${merchantId}-${reference}`;
}

/** True when the payment id is one of this merchant's (single payments and batch items alike). */
export function isMerchantPayment(merchantId: string, paymentId: string): boolean {
  return paymentId.startsWith(paymentWorkflowId(merchantId, ''));
}

/** True when the batch id is one of this merchant's. */
export function isMerchantBatch(merchantId: string, batchId: string): boolean {
  return batchId.startsWith(batchWorkflowId(merchantId, ''));
}

/** What a workflow id names, in a message: `payout batch batch-…` or `payment payment-…`. */
export function describeWorkflowId(workflowId: string): string {
  return workflowId.startsWith(BATCH_PREFIX) ? `payout batch ${workflowId}` : `payment ${workflowId}`;
}

/** The payment id of batch `batchId`'s item `itemReference`. */
export function batchItemId(batchId: string, itemReference: string): string {
  return `${PAYMENT_PREFIX}${batchId.slice(BATCH_PREFIX.length)}~${itemReference}`;
}

/** True when the payment id is an item of this batch. */
export function isBatchItemOf(batchId: string, paymentId: string): boolean {
  return (
    batchId.startsWith(BATCH_PREFIX) && paymentId.startsWith(`${PAYMENT_PREFIX}${batchId.slice(BATCH_PREFIX.length)}~`)
  );
}
