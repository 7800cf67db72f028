import { z } from 'zod';
import type { BankDirectory } from '../banks/directory';
import { paymentListSchema, paymentResourceSchema } from '../domain/api-resources';
import { isMerchantPayment } from '../domain/ids';
import { paymentRequestSchema, resolutionSchema } from '../domain/requests';
import { AppError } from '../payments/app-errors';
import type { PaymentCommands } from '../payments/payment-commands';
import type { PaymentReads } from '../payments/payment-reads';
import type { Caller } from './auth';
import { assertKnownBanks } from './bank-check';
import { cursorError, listPage } from './pagination';
import {
  creationErrors,
  operatorActionErrors,
  listQuery,
  page,
  paymentExample,
  paymentId,
  paymentFilters,
  paymentListExample,
  temporal,
  withKey,
} from './route-parts';
import { route } from './route-spec';

// The merchant API: create, read and list payments; operators resolve the ones in review.

export interface PaymentRouteDeps {
  payments: PaymentCommands;
  paymentReads: PaymentReads;
  banks: BankDirectory;
}

const paymentParams = z.object({ id: paymentId });
const notFound = 'no such payment';

const example = {
  mobileMoney: {
    type: 'mobile_money_debit',
    reference: 'order-1001',
    amount: 12.5,
    channel: 1,
    phone_number: '233241234567',
    name: 'Ama Mensah',
    metadata: { order_id: '1001', channel: 'web' },
  },
  card: {
    type: 'card_payment',
    reference: 'order-1002',
    amount: 40,
    channel: 1,
    first_name: 'Ama',
    last_name: 'Mensah',
    email: 'ama@example.com',
    phone_number: '+233241234567',
    card_number: '4111111111111111',
    card_cvv: '123',
    expiry_month: '12',
    expiry_year: String(new Date().getUTCFullYear() + 4),
    return_url: 'https://merchant.example/return',
  },
  bankCredit: {
    type: 'bank_credit',
    reference: 'refund-77',
    amount: 250,
    customer_name: 'Kofi Boateng',
    bank_code: 'GH030100',
    account_number: '1234567890',
    description: 'May refund',
  },
};
const payment = { schema: paymentResourceSchema, example: paymentExample };

const createPayment = route(
  {
    operationId: 'createPayment',
    method: 'POST',
    path: '/v1/payments',
    tag: 'Payments',
    summary: 'Create a payment',
    description:
      'Starts a payment once per reference: the same reference and body again answers 200 with the same payment ' +
      'and sends nothing (safe to retry); another body is a 409. Waits up to INITIATION_WAIT for the initiation; a ' +
      "card payment's answer then carries `next_action.url` (3-D Secure). Amounts are at most the merchant's limit " +
      '(MERCHANT_MAX_AMOUNTS); card numbers are Luhn-checked, expiry dates must be current, some mobile-money ' +
      "channels need a `voucher_code`, and a bank credit's `bank_code` must be in the provider's bank list.",
    auth: 'merchant',
    forbidden: 'payments are created with a merchant key',
    body: {
      id: 'PaymentRequest',
      schema: paymentRequestSchema,
      examples: {
        mobile_money_debit: example.mobileMoney,
        card_payment: example.card,
        bank_credit: example.bankCredit,
      },
    },
    answers: {
      201: { description: 'A new payment.', ...payment },
      200: { description: 'The payment this reference and body already started; nothing was sent again.', ...payment },
    },
    errors: creationErrors,
  },
  async ({ caller, body, request, reply }, { payments, banks }: PaymentRouteDeps) => {
    if (body.type === 'bank_credit') await assertKnownBanks(banks, [{ path: 'bank_code', code: body.bank_code }]);
    const { created, payment } = await payments.create(caller.merchantId, body);
    // From here on the request concerns one payment: its later lines ("request completed") carry its id too.
    reply.log = request.log = request.log.child({ paymentId: payment.id, workflowId: payment.id });
    request.log.info({ created, status: payment.status }, 'payment requested');
    return reply.status(created ? 201 : 200).send(payment);
  },
);

const listPayments = route(
  {
    operationId: 'listPayments',
    method: 'GET',
    path: '/v1/payments',
    tag: 'Payments',
    summary: 'List payments',
    description:
      "Newest first (creation time, then id). A merchant sees its own payments, an operator everyone's. Page with " +
      '`limit` and `starting_after` (the last id of the previous page) while `has_more` is true. Filters combine: ' +
      'status, type, reference, payout batch, and a creation-time range `created[gte]` ≤ created < `created[lt]`.',
    auth: 'merchant_or_operator',
    query: z.strictObject({ ...paymentFilters, ...page }),
    answers: { 200: { description: 'One page.', schema: paymentListSchema, example: paymentListExample } },
    errors: { 400: ['invalid_request'], ...withKey, ...temporal },
  },
  ({ caller, query }, { paymentReads }: PaymentRouteDeps) => {
    const merchantId = caller.role === 'merchant' ? caller.merchantId : undefined;
    const { batch, ...filter } = listQuery(query);
    if (filter.startingAfter !== undefined) assertVisible(caller, filter.startingAfter, 'starting_after');
    return listPage(paymentReads, { ...filter, batchId: batch, merchantId });
  },
);

const getPayment = route(
  {
    operationId: 'getPayment',
    method: 'GET',
    path: '/v1/payments/:id',
    tag: 'Payments',
    summary: 'Read a payment',
    auth: 'merchant_or_operator',
    params: paymentParams,
    notFound,
    answers: { 200: { description: 'The payment with its events.', ...payment } },
    errors: { ...withKey, 404: ['not_found'], ...temporal },
  },
  ({ caller, params }, { paymentReads }: PaymentRouteDeps) => {
    assertVisible(caller, params.id);
    return paymentReads.get(params.id);
  },
);

const resolvePayment = route(
  {
    operationId: 'resolvePayment',
    method: 'POST',
    path: '/v1/payments/:id/resolve',
    tag: 'Operators',
    summary: 'Resolve a payment in review',
    description: 'An operator settles a `needs_review` payment; anything else is a 409.',
    auth: 'operator',
    forbidden: 'only an operator key can resolve payments',
    params: paymentParams,
    notFound,
    body: {
      id: 'Resolution',
      schema: () => resolutionSchema,
      examples: { failed: { outcome: 'failed', note: 'customer confirmed no debit' } },
    },
    answers: {
      200: {
        description: 'The payment, settled.',
        schema: paymentResourceSchema,
        example: {
          ...paymentExample,
          status: 'failed',
          failure: { code: 'operator_resolved', message: 'customer confirmed no debit (by ada.ops)' },
          events: [
            { at: '2026-05-04T10:20:00.000Z', type: 'needs_review' },
            { at: '2026-05-04T11:00:00.000Z', type: 'resolved', outcome: 'failed' },
          ],
        },
      },
    },
    errors: { ...operatorActionErrors, 403: ['forbidden'] },
  },
  async ({ caller, params, body, request }, { payments }: PaymentRouteDeps) => {
    // The payment's `resolved` event records who (the key's person) and why (the note); the log line only who.
    const resolved = await payments.resolve(params.id, { ...body, operator: caller.name });
    request.log.info({ outcome: body.outcome, operator: caller.name }, 'payment resolved by an operator');
    return resolved;
  },
);

/** The payment routes, in the order the OpenAPI document lists them. */
export const PAYMENT_ROUTES = [createPayment, listPayments, getPayment, resolvePayment];

/** A merchant's own payments only: another's is not found (or, as a list cursor, a bad `starting_after`). */
function assertVisible(caller: Caller, id: string, cursorField?: string): void {
  if (caller.role === 'merchant' && !isMerchantPayment(caller.merchantId, id)) {
    if (cursorField) throw cursorError(cursorField);
    throw new AppError('not_found', `no payment ${id}`);
  }
}
