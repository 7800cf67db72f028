// The typed client merchant services import: no server code, only domain/ schemas and types (ESLint enforces it).
export { PaymentsClient } from './payments-client';
export type {
  BatchItemsQuery,
  ListQuery,
  PaymentsClientOptions,
  PayoutBatchInput,
  WaitOptions,
} from './payments-client';
export {
  PaymentsApiError,
  PaymentsError,
  PaymentsNetworkError,
  PaymentsResponseError,
  PaymentsTimeoutError,
} from './client-errors';
export { verifyNotification } from './verify-notification';
export type { NotificationHeaders } from './verify-notification';
export {
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  standardWebhookHeaders,
  verifyStandardWebhook,
  webhookKey,
} from './standard-webhooks';
export type { StandardWebhookHeaders } from './standard-webhooks';
export {
  DEFAULT_TOLERANCE_SECONDS,
  NotificationSignatureError,
  SIGNATURE_HEADER,
  signNotification,
  verifySignature,
} from './notification-signature';
export type { VerifyOptions } from './notification-signature';
export type { ErrorCode, FieldError, PaymentList, PaymentSummary } from '../../../src/domain/api-resources';
export type { BatchProgress } from '../../../src/domain/batch-model';
export type { NotificationEvent, NotificationType } from '../../../src/domain/notification';
export type { PaymentResource, PaymentStatus } from '../../../src/domain/payment-model';
export type { PaymentRequest, PaymentType } from '../../../src/domain/requests';
