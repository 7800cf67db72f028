export { paymentWorkflow } from './payment';
