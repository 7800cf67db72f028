export { paymentWorkflow } from './payment-workflow';
export { payoutBatchWorkflow } from './payout-batch-workflow';
