import type { PaymentList } from '../domain/api-resources';
import { AppError } from '../payments/app-errors';
import type { PageFilter, PaymentReads } from '../payments/payment-reads';
import { ApiError } from './http-errors';

/** A 400 naming a list's cursor that is not one of the listed payments. */
export function cursorError(field = 'starting_after'): ApiError {
  return new ApiError(400, 'invalid_request', 'the filter is invalid', [
    { path: field, message: 'is not the id of a payment in this list' },
  ]);
}

/** One page of payments as lists answer it: `{data, has_more}`; a cursor naming no payment is a 400. */
export async function listPage(paymentReads: PaymentReads, filter: PageFilter): Promise<PaymentList> {
  try {
    const page = await paymentReads.page(filter);
    return { data: page.data, has_more: page.hasMore };
  } catch (err) {
    if (filter.startingAfter !== undefined && err instanceof AppError && err.kind === 'not_found') throw cursorError();
    throw err;
  }
}
