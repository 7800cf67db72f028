export { paymentWorkflow } from './payment-workflow';
export { payoutBatchWorkflow } from './payout-batch-workflow';
export { batchItemsWorkflow } from './batch-items-workflow';
