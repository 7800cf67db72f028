import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { SearchAttributePair } from '@temporalio/common';
import type { ApprovalInput } from '../domain/approval-rules';
import type { BatchControl, BatchProgress, ItemSettled } from '../domain/batch-model';
import { initialPaymentStatus } from '../domain/payment-model';
import type { PaymentInput, PaymentResource, ProviderCallback, ResolveInput } from '../domain/payment-model';
import type { Signed } from '../domain/signed';

// The one place that names the payment workflow's messages and search attributes for workflow, worker and callers.

// Callers send signed messages (Signed<…>): the workflows act only on those signed for them (see trust.ts).
export const callbackSignal = defineSignal<[Signed<ProviderCallback>]>('providerCallback');
export const paymentQuery = defineQuery<PaymentResource>('payment');
export const resolveUpdate = defineUpdate<PaymentResource, [Signed<ResolveInput>]>('resolve');
/** Answers once the initiation step is over (Update-with-Start: `POST /v1/payments` in one round trip). */
export const initiationUpdate = defineUpdate<PaymentResource>('initiation');
/** An operator's approval or rejection of a bank credit waiting for one (kind `approval`); answers once recorded. */
export const paymentApprovalUpdate = defineUpdate<PaymentResource, [Signed<ApprovalInput>]>('paymentApproval');

export const SearchAttributes = {
  status: defineSearchAttributeKey('PaymentStatus', SearchAttributeType.KEYWORD),
  type: defineSearchAttributeKey('PaymentType', SearchAttributeType.KEYWORD),
  reference: defineSearchAttributeKey('MerchantReference', SearchAttributeType.KEYWORD),
  merchant: defineSearchAttributeKey('MerchantId', SearchAttributeType.KEYWORD),
  amount: defineSearchAttributeKey('Amount', SearchAttributeType.DOUBLE),
  batch: defineSearchAttributeKey('BatchId', SearchAttributeType.KEYWORD),
  batchStatus: defineSearchAttributeKey('BatchStatus', SearchAttributeType.KEYWORD),
} as const;

/** A batch item's report, signed by the worker that recorded it (kind `batch-item-report`) for its batch. */
export const itemSettledSignal = defineSignal<[Signed<ItemSettled>]>('batchItemSettled');
export const batchProgressQuery = defineQuery<BatchProgress>('batchProgress');
export const batchControlUpdate = defineUpdate<BatchProgress, [Signed<BatchControl>]>('batchControl');
/** An operator's approval or rejection of a batch waiting for one (kind `approval`); answers once recorded. */
export const batchApprovalUpdate = defineUpdate<BatchProgress, [Signed<ApprovalInput>]>('batchApproval');

/** The search attributes a payment workflow starts with, single or batch item alike. */
export function paymentSearchAttributes(input: PaymentInput): SearchAttributePair[] {
  const pairs: SearchAttributePair[] = [
    { key: SearchAttributes.status, value: initialPaymentStatus(input) },
    { key: SearchAttributes.type, value: input.request.type },
    { key: SearchAttributes.reference, value: input.request.reference },
    { key: SearchAttributes.merchant, value: input.merchantId },
    { key: SearchAttributes.amount, value: input.request.amount },
  ];
  if (input.batchId) pairs.push({ key: SearchAttributes.batch, value: input.batchId });
  return pairs;
}
