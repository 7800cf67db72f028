import { z } from 'zod';
import type { BankDirectory } from '../banks/directory';
import { batchProgressSchema, paymentListSchema } from '../domain/api-resources';
import { BATCH_ACTIONS } from '../domain/batch-model';
import { payoutBatchSchema } from '../domain/batch-request';
import { isBatchItemOf, isMerchantBatch } from '../domain/ids';
import { PAYMENT_STATUSES } from '../domain/payment-model';
import { checkedRule, referenceSchema } from '../domain/requests';
import type { Batches } from '../payments/payout-batches';
import { AppError } from '../payments/app-errors';
import type { PaymentReads } from '../payments/payment-reads';
import type { Caller } from './auth';
import { UPLOAD_CSV_COLUMNS, UPLOAD_TYPES, addUploadParsers, assertItemBanks } from './batch-upload';
import { ApiError } from './http-errors';
import { cursorError, listPage } from './pagination';
import {
  creationErrors,
  operatorActionErrors,
  batchId,
  createdRange,
  listQuery,
  page,
  paymentListExample,
  temporal,
  withKey,
} from './route-parts';
import { route } from './route-spec';
import type { Route } from './route-spec';

// Payout batches: merchants submit and watch them; merchants and operators pause, resume and cancel.

export interface BatchRouteDeps {
  batches: Batches;
  paymentReads: PaymentReads;
  banks: BankDirectory;
}

const batchParams = z.object({ id: batchId });
const notFound = 'no such payout batch';

/** A batch as the API answers it, for the OpenAPI document's examples. */
export const batchExample = {
  id: 'batch-acme-payroll-2026-05',
  reference: 'payroll-2026-05',
  status: 'running',
  concurrency: 50,
  created_at: '2026-05-04T10:00:00.000Z',
  started_at: '2026-05-04T10:00:00.100Z',
  finished_at: null,
  total: { count: 2, amount: 560 },
  items: {
    not_started: { count: 0, amount: 0 },
    in_flight: { count: 1, amount: 310 },
    succeeded: { count: 1, amount: 250 },
    failed: { count: 0, amount: 0 },
    needs_review: { count: 0, amount: 0 },
  },
  needs_review: [],
  not_started: null,
  paused_by: null,
  starts_at: null,
  approvals_required: 0,
  approvals: [],
  approval_expires_at: null,
  metadata: { run: 'May payroll' },
};
const batch = { schema: batchProgressSchema, example: batchExample };

const uploadColumns = UPLOAD_CSV_COLUMNS.map(
  ({ name, required, description }) => `- \`${name}\`${required ? '' : ' (optional)'}: ${description}`,
).join('\n');

const createRoute = route(
  {
    operationId: 'createPayoutBatch',
    method: 'POST',
    path: '/v1/payout-batches',
    tag: 'Payout batches',
    summary: 'Submit a payout batch',
    description:
      'Bank credits, every one validated before anything starts; the same reference and body again answers 200 ' +
      'with the same batch. Bodies up to `BATCH_UPLOAD_LIMIT_BYTES` (default 64 MiB, about 100,000 items); larger ' +
      'ones answer 413.\n\n' +
      'The items may also come as a file, the batch reference in the `reference` query parameter (a file carries no ' +
      'metadata): `text/csv` (RFC 4180, UTF-8) whose header row names these columns, in any order:\n\n' +
      `${uploadColumns}\n\n` +
      'or `application/x-ndjson`: one item per line, as a JSON object of the same fields. Every line is checked ' +
      'before anything starts: a 400 lists each bad one (`line 5, column amount`), the first ' +
      '100 of them, its message saying how many in all.',
    auth: 'merchant',
    forbidden: 'batches are created with a merchant key',
    query: z.object({
      reference: checkedRule(referenceSchema, "with a JSON body: absent, or the body's `reference`")
        .optional()
        .describe("the batch's reference for a `text/csv` or `application/x-ndjson` body; a JSON body has its own"),
    }),
    body: {
      id: 'PayoutBatchRequest',
      schema: (rules, merchantId) => payoutBatchSchema(rules.maxAmount(merchantId)),
      invalid: 'the batch is invalid',
      examples: {
        payroll: {
          reference: 'payroll-2026-05',
          items: [
            {
              reference: 'emp-1',
              amount: 250,
              customer_name: 'Kofi Boateng',
              bank_code: 'GH030100',
              account_number: '1234567890',
            },
            {
              reference: 'emp-2',
              amount: 310,
              customer_name: 'Ama Mensah',
              bank_code: 'GH020100',
              account_number: '9876543210',
            },
          ],
          metadata: { run: 'May payroll' },
        },
      },
      alsoAccepts: UPLOAD_TYPES,
      textExamples: {
        'text/csv':
          'reference,amount,customer_name,bank_code,account_number,description\r\n' +
          'emp-1,250.00,Kofi Boateng,GH030100,1234567890,May salary\r\n' +
          'emp-2,310.00,Ama Mensah,GH020100,9876543210,\r\n',
        'application/x-ndjson':
          '{"reference":"emp-1","amount":250,"customer_name":"Kofi Boateng","bank_code":"GH030100","account_number":"1234567890"}\n' +
          '{"reference":"emp-2","amount":310,"customer_name":"Ama Mensah","bank_code":"GH020100","account_number":"9876543210"}\n',
      },
    },
    answers: {
      201: { description: 'A new batch.', ...batch },
      200: { description: 'The batch this reference and body already started.', ...batch },
    },
    errors: creationErrors,
    options: (rules) => ({ bodyLimit: rules.batchUploadLimitBytes }),
  },
  async ({ caller, body, query, request, reply }, { batches, banks }: BatchRouteDeps) => {
    if (query.reference !== undefined && query.reference !== body.reference) {
      throw new ApiError(400, 'invalid_request', 'the batch is invalid', [
        { path: 'query.reference', message: "differs from the body's reference" },
      ]);
    }
    await assertItemBanks(request, banks, body.items);
    const { created, batch } = await batches.create(caller.merchantId, body);
    request.log.info({ batchId: batch.id, created, items: batch.total.count }, 'payout batch submitted');
    return reply.status(created ? 201 : 200).send(batch);
  },
);

/** The creation route in a scope of its own: only it reads CSV and JSON-lines bodies. */
const createPayoutBatch: Route<BatchRouteDeps> = {
  ...createRoute,
  register: (app, deps) => {
    void app.register((scope, _options, done) => {
      addUploadParsers(scope, deps);
      createRoute.register(scope, deps);
      done();
    });
  },
};

const getPayoutBatch = route(
  {
    operationId: 'getPayoutBatch',
    method: 'GET',
    path: '/v1/payout-batches/:id',
    tag: 'Payout batches',
    summary: "Read a batch's progress",
    auth: 'merchant_or_operator',
    params: batchParams,
    notFound,
    answers: { 200: { description: 'Its progress.', ...batch } },
    errors: { ...withKey, 404: ['not_found'], ...temporal },
  },
  ({ caller, params }, { batches }: BatchRouteDeps) => {
    assertVisible(caller, params.id);
    return batches.read(params.id);
  },
);

const listPayoutBatchItems = route(
  {
    operationId: 'listPayoutBatchItems',
    method: 'GET',
    path: '/v1/payout-batches/:id/items',
    tag: 'Payout batches',
    summary: "List a batch's items",
    description:
      'The payments of the batch that have started, newest first, paged like `GET /v1/payments`. Items a batch ' +
      'has not started yet are not payments yet.',
    auth: 'merchant_or_operator',
    params: batchParams,
    notFound,
    query: z.strictObject({ status: z.enum(PAYMENT_STATUSES).optional(), ...createdRange, ...page }),
    answers: {
      200: {
        description: 'One page.',
        schema: paymentListSchema,
        example: {
          data: [
            {
              ...paymentListExample.data[0],
              id: 'payment-acme-payroll-2026-05~emp-1',
              type: 'bank_credit',
              reference: 'emp-1',
              amount: 250,
            },
          ],
          has_more: true,
        },
      },
    },
    errors: { 400: ['invalid_request'], ...withKey, 404: ['not_found'], ...temporal },
  },
  ({ caller, params, query }, { paymentReads }: BatchRouteDeps) => {
    assertVisible(caller, params.id);
    const filter = listQuery(query);
    if (filter.startingAfter !== undefined && !isBatchItemOf(params.id, filter.startingAfter)) throw cursorError();
    return listPage(paymentReads, { ...filter, batchId: params.id });
  },
);

const controlPayoutBatch = route(
  {
    operationId: 'controlPayoutBatch',
    method: 'POST',
    path: '/v1/payout-batches/:id/:action',
    tag: 'Payout batches',
    summary: 'Pause, resume or cancel a batch',
    description:
      'Applied as a Temporal Update: answers once applied. Cancel stops starting items and lets those in flight ' +
      'finish. A 409 when the batch is past that point.',
    auth: 'merchant_or_operator',
    params: z.object({ id: batchId, action: z.enum(BATCH_ACTIONS) }),
    notFound: 'no such payout batch or action',
    answers: {
      200: {
        description: 'The progress after the change.',
        ...batch,
        example: { ...batchExample, status: 'paused', paused_by: 'merchant' },
      },
    },
    errors: operatorActionErrors,
  },
  async ({ caller, params, request }, { batches }: BatchRouteDeps) => {
    assertVisible(caller, params.id);
    // An operator's control is recorded as an operator action; a merchant's own is the merchant's.
    const operator = caller.role === 'operator' ? caller.name : undefined;
    const batch = await batches.control(params.id, params.action, operator);
    request.log.info({ batchId: batch.id, action: params.action, role: caller.role }, 'payout batch control');
    return batch;
  },
);

/** The payout batch routes, in the order the OpenAPI document lists them. */
export const BATCH_ROUTES = [createPayoutBatch, getPayoutBatch, listPayoutBatchItems, controlPayoutBatch];

function assertVisible(caller: Caller, id: string): void {
  if (caller.role === 'merchant' && !isMerchantBatch(caller.merchantId, id)) {
    throw new AppError('not_found', `no payout batch ${id}`);
  }
}
