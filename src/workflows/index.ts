export { paymentWorkflow } from './payment';
export { payoutBatchWorkflow } from './batch';
export { batchItemsWorkflow } from './batch-items';
export { notificationDispatcherWorkflow } from './notification-dispatcher';
