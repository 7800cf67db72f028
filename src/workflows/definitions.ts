import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { PaymentResource, ProviderCallback, ResolveInput } from '../domain/payment';

// The one place that names the payment workflow's messages and search attributes for workflow, worker and callers.

export const callbackSignal = defineSignal<[ProviderCallback]>('providerCallback');
export const paymentQuery = defineQuery<PaymentResource>('payment');
export const resolveUpdate = defineUpdate<PaymentResource, [ResolveInput]>('resolve');

export const SearchAttributes = {
  status: defineSearchAttributeKey('PaymentStatus', SearchAttributeType.KEYWORD),
  type: defineSearchAttributeKey('PaymentType', SearchAttributeType.KEYWORD),
  reference: defineSearchAttributeKey('MerchantReference', SearchAttributeType.KEYWORD),
  merchant: defineSearchAttributeKey('MerchantId', SearchAttributeType.KEYWORD),
  amount: defineSearchAttributeKey('Amount', SearchAttributeType.DOUBLE),
} as const;

/** The payment workflow's type name, as callers and the worker know it. */
export const PAYMENT_WORKFLOW = 'paymentWorkflow';

/** The workflow ID of a merchant's payment: readable, and unique per merchant and reference. */
export function paymentWorkflowId(merchantId: string, reference: string): string {
  return `payment-${merchantId}-${reference}`;
}
