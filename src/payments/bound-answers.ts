import { describeWorkflowId, isMerchantBatch, isMerchantPayment } from '../domain/ids';
import { AppError } from './app-errors';

// An answer is what was asked for: a record (or a workflow's answer) for another id or merchant is never shown.

/** A record or workflow answered with another payment or batch, or another merchant's: a 404, logged as an anomaly. */
export class MismatchedAnswer extends AppError {
  constructor(
    readonly requested: string,
    readonly found: { id: unknown; merchantId?: string },
  ) {
    super('not_found', `no ${describeWorkflowId(requested)}`);
  }
}

/**
 * The resource, when it is the payment or batch `requested` (its id) and, for a record, of the merchant that id names
 * (the merchant its row holds); otherwise a MismatchedAnswer.
 */
export function boundAnswer<T extends { id: string }>(requested: string, resource: T, merchantId?: string): T {
  const owned =
    merchantId === undefined || isMerchantPayment(merchantId, requested) || isMerchantBatch(merchantId, requested);
  if (resource.id !== requested || !owned) {
    throw new MismatchedAnswer(requested, { id: resource.id, ...(merchantId === undefined ? {} : { merchantId }) });
  }
  return resource;
}
