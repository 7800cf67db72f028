import { z } from 'zod';
import {
  batchProgressSchema,
  codecTokenAnswerSchema,
  paymentListSchema,
  paymentResourceSchema,
} from '../domain/api-resources';
import type { ErrorCode } from '../domain/api-resources';
import { BATCH_ACTIONS } from '../domain/batch-model';
import { payoutBatchSchema } from '../domain/batch-request';
import { parseDuration } from '../domain/duration';
import { PAYMENT_STATUSES } from '../domain/payment-model';
import { PAYMENT_TYPES, paymentRequestSchema, referenceSchema, resolutionSchema } from '../domain/requests';
import { CALLBACK_ROUTE } from '../crypto/callback-tokens';
import { CODEC_TOKEN_MAX_TTL_MS } from '../crypto/codec-tokens';
import type { RouteSpec } from './route-spec';

// Every route of the server, declared once: the handlers (src/http/*-routes.ts) register and validate with these
// specs, and src/http/openapi.ts turns them into the OpenAPI document served at /openapi.json.

/** Most a page of a list holds. */
export const MAX_PAGE_SIZE = 100;

const paymentId = z.string().min(1).max(200).describe('payment-{merchant id}-{reference}');
const batchId = z
  .string()
  .regex(/^batch-[^~]{1,200}$/)
  .describe('batch-{merchant id}-{reference}');

export const paymentParams = z.object({ id: paymentId });
export const batchParams = z.object({ id: batchId });
export const batchActionParams = z.object({ id: batchId, action: z.enum(BATCH_ACTIONS) });

const page = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .default(20)
    .describe(`how many to answer, 1–${MAX_PAGE_SIZE}`),
  starting_after: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('the last id of the previous page: answers the page after it'),
};

export const paymentListQuery = z.strictObject({
  status: z.enum(PAYMENT_STATUSES).optional(),
  type: z.enum(PAYMENT_TYPES).optional(),
  reference: referenceSchema.optional(),
  ...page,
});

export const batchItemsQuery = z.strictObject({ status: z.enum(PAYMENT_STATUSES).optional(), ...page });

const ttl = z
  .string()
  .transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === undefined || ms < 1000 || ms > CODEC_TOKEN_MAX_TTL_MS) {
      ctx.addIssue({ code: 'custom', message: 'must be a duration from 1s to 24h, like 30m or 8h' });
      return z.NEVER;
    }
    return ms;
  })
  .describe('how long the codec URL works: 1s to 24h, default 8h');
export const codecTokenRequest = z.strictObject({ ttl: ttl.optional() });

const CODEC_BODY_LIMIT = 4 * 1024 * 1024;
const base64 = z
  .string()
  .max(CODEC_BODY_LIMIT)
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');
/** Temporal's remote codec protocol: payloads with base64 metadata and data. */
export const codecBody = z
  .object({
    // Temporal's JSON leaves an empty list out: `{}` is no payloads (an Update without arguments), not an error.
    payloads: z
      .array(z.object({ metadata: z.record(z.string().max(256), base64).default({}), data: base64.optional() }))
      .max(10_000)
      .default([]),
  })
  .meta({ id: 'CodecPayloads' });

const readiness = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    checks: z.object({ temporal: z.boolean(), worker: z.boolean(), provider: z.boolean() }),
    reasons: z.array(z.string()),
  })
  .meta({ id: 'Readiness' });

const liveness = z.object({ status: z.literal('ok') }).meta({ id: 'Liveness' });
const callbackReceived = z.object({ received: z.literal(true) }).meta({ id: 'CallbackReceived' });
const openApiDocumentSchema = z.record(z.string(), z.unknown()).meta({ id: 'OpenApiDocument' });

// Errors every route of a kind can answer.
const malformed = ['invalid_request', 'invalid_json', 'bad_request'] as const satisfies ErrorCode[];
const jsonBodyErrors = {
  400: malformed,
  413: ['payload_too_large'],
  415: ['unsupported_media_type'],
} as const satisfies RouteSpec['errors'];
const always = { 500: ['internal'] } as const satisfies RouteSpec['errors'];
const withKey = { 401: ['unauthorized'], ...always } as const satisfies RouteSpec['errors'];
const temporal = { 503: ['unavailable'] } as const satisfies RouteSpec['errors'];

const example = {
  mobileMoney: {
    type: 'mobile_money_debit',
    reference: 'order-1001',
    amount: 12.5,
    channel: 1,
    phone_number: '233241234567',
    name: 'Ama Mensah',
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
  payment: {
    id: 'payment-acme-order-1001',
    type: 'mobile_money_debit',
    reference: 'order-1001',
    status: 'succeeded',
    amount: 12.5,
    created_at: '2026-05-04T10:00:00.000Z',
    updated_at: '2026-05-04T10:00:03.200Z',
    provider: { transaction_id: '100231', status_code: '1', message: 'Approved' },
    next_action: null,
    failure: null,
    events: [
      { at: '2026-05-04T10:00:00.400Z', type: 'initiated', status_code: '2', message: 'Pending' },
      { at: '2026-05-04T10:00:03.100Z', type: 'callback_received', outcome: 'succeeded', status_code: '1' },
      { at: '2026-05-04T10:00:03.200Z', type: 'succeeded' },
    ],
  },
  list: {
    data: [
      {
        id: 'payment-acme-order-1001',
        type: 'mobile_money_debit',
        reference: 'order-1001',
        status: 'succeeded',
        amount: 12.5,
        created_at: '2026-05-04T10:00:00.000Z',
        closed_at: null,
      },
    ],
    has_more: false,
  },
  batch: {
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
  },
};

const payment = { schema: paymentResourceSchema, example: example.payment };
const batch = { schema: batchProgressSchema, example: example.batch };

/** The server's routes, by operation id. */
export const ROUTES = {
  createPayment: {
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
    errors: {
      ...jsonBodyErrors,
      ...withKey,
      403: ['forbidden'],
      409: ['conflict'],
      503: ['unavailable'],
    },
  },
  listPayments: {
    operationId: 'listPayments',
    method: 'GET',
    path: '/v1/payments',
    tag: 'Payments',
    summary: 'List payments',
    description:
      "Newest first (start time, then id). A merchant sees its own payments, an operator everyone's. Page with " +
      '`limit` and `starting_after` (the last id of the previous page) while `has_more` is true.',
    auth: 'merchant_or_operator',
    query: paymentListQuery,
    answers: { 200: { description: 'One page.', schema: paymentListSchema, example: example.list } },
    errors: { 400: ['invalid_request'], ...withKey, ...temporal },
  },
  getPayment: {
    operationId: 'getPayment',
    method: 'GET',
    path: '/v1/payments/:id',
    tag: 'Payments',
    summary: 'Read a payment',
    auth: 'merchant_or_operator',
    params: paymentParams,
    answers: { 200: { description: 'The payment with its events.', ...payment } },
    errors: { ...withKey, 404: ['not_found'], ...temporal },
  },
  resolvePayment: {
    operationId: 'resolvePayment',
    method: 'POST',
    path: '/v1/payments/:id/resolve',
    tag: 'Operators',
    summary: 'Resolve a payment in review',
    description: 'An operator settles a `needs_review` payment; anything else is a 409.',
    auth: 'operator',
    params: paymentParams,
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
          ...example.payment,
          status: 'failed',
          failure: { code: 'operator_resolved', message: 'customer confirmed no debit (by ada.ops)' },
          events: [
            { at: '2026-05-04T10:20:00.000Z', type: 'needs_review' },
            { at: '2026-05-04T11:00:00.000Z', type: 'resolved', outcome: 'failed' },
          ],
        },
      },
    },
    errors: {
      ...jsonBodyErrors,
      ...withKey,
      403: ['forbidden'],
      404: ['not_found'],
      409: ['conflict'],
      ...temporal,
    },
  },
  createPayoutBatch: {
    operationId: 'createPayoutBatch',
    method: 'POST',
    path: '/v1/payout-batches',
    tag: 'Payout batches',
    summary: 'Submit a payout batch',
    description:
      'Up to 10,000 bank credits, validated before anything starts; the same reference and body again answers 200 ' +
      'with the same batch. Bodies up to 8 MiB.',
    auth: 'merchant',
    body: {
      id: 'PayoutBatchRequest',
      schema: (rules, merchantId) => payoutBatchSchema(rules.maxAmount(merchantId)),
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
        },
      },
    },
    answers: {
      201: { description: 'A new batch.', ...batch },
      200: { description: 'The batch this reference and body already started.', ...batch },
    },
    errors: { ...jsonBodyErrors, ...withKey, 403: ['forbidden'], 409: ['conflict'], 503: ['unavailable'] },
  },
  getPayoutBatch: {
    operationId: 'getPayoutBatch',
    method: 'GET',
    path: '/v1/payout-batches/:id',
    tag: 'Payout batches',
    summary: "Read a batch's progress",
    auth: 'merchant_or_operator',
    params: batchParams,
    answers: { 200: { description: 'Its progress.', ...batch } },
    errors: { ...withKey, 404: ['not_found'], ...temporal },
  },
  listPayoutBatchItems: {
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
    query: batchItemsQuery,
    answers: {
      200: {
        description: 'One page.',
        schema: paymentListSchema,
        example: {
          data: [
            {
              ...example.list.data[0],
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
  controlPayoutBatch: {
    operationId: 'controlPayoutBatch',
    method: 'POST',
    path: '/v1/payout-batches/:id/:action',
    tag: 'Payout batches',
    summary: 'Pause, resume or cancel a batch',
    description:
      'Applied as a Temporal Update: answers once applied. Cancel stops starting items and lets those in flight ' +
      'finish. A 409 when the batch is past that point.',
    auth: 'merchant_or_operator',
    params: batchActionParams,
    answers: {
      200: { description: 'The progress after the change.', ...batch, example: { ...example.batch, status: 'paused' } },
    },
    errors: { ...jsonBodyErrors, ...withKey, 404: ['not_found'], 409: ['conflict'], ...temporal },
  },
  createCodecToken: {
    operationId: 'createCodecToken',
    method: 'POST',
    path: '/v1/operator/codec-tokens',
    tag: 'Operators',
    summary: 'Get a Web UI codec URL',
    description: 'A decode-only, expiring codec endpoint for the Temporal Web UI; a 404 when the server has none.',
    auth: 'operator',
    body: {
      id: 'CodecTokenRequest',
      schema: () => codecTokenRequest,
      examples: { workday: { ttl: '8h' } },
      required: false,
    },
    answers: {
      201: {
        description: 'The codec URL.',
        schema: codecTokenAnswerSchema,
        example: {
          operator: 'ada.ops',
          codec_endpoint: 'https://payments.example/codec/ui/v1.ada.ops.1780000000.abc',
          expires_at: '2026-05-04T18:00:00.000Z',
        },
      },
    },
    errors: { ...jsonBodyErrors, ...withKey, 403: ['forbidden'], 404: ['not_found'] },
  },
  ...codecRoutes(),
  ...callbackRoutes(),
  healthz: {
    operationId: 'healthz',
    method: 'GET',
    path: '/healthz',
    tag: 'Health',
    summary: 'Liveness: the process answers',
    auth: 'none',
    answers: { 200: { description: 'Alive.', schema: liveness, example: { status: 'ok' } } },
    errors: always,
  },
  readyz: {
    operationId: 'readyz',
    method: 'GET',
    path: '/readyz',
    tag: 'Health',
    summary: 'Readiness: Temporal reachable, a worker polling, the provider answering',
    auth: 'none',
    answers: {
      200: {
        description: 'Ready.',
        schema: readiness,
        example: { status: 'ready', checks: { temporal: true, worker: true, provider: true }, reasons: [] },
      },
      503: {
        description: 'Not ready: the failed checks with fixed reasons.',
        schema: readiness,
        headers: { 'retry-after': 'seconds to wait before asking again' },
        example: {
          status: 'not_ready',
          checks: { temporal: true, worker: false, provider: true },
          reasons: ['worker: no workflow or activity poller on the task queue'],
        },
      },
    },
    errors: always,
  },
  openApiDocument: {
    operationId: 'openApiDocument',
    method: 'GET',
    path: '/openapi.json',
    tag: 'Reference',
    summary: 'This OpenAPI 3.1 document',
    auth: 'none',
    answers: { 200: { description: 'The document.', schema: openApiDocumentSchema } },
    errors: always,
  },
  docsPage: {
    operationId: 'docsPage',
    method: 'GET',
    path: '/docs',
    tag: 'Reference',
    summary: 'The API reference, rendered (no internet needed)',
    auth: 'none',
    answers: { 200: { description: 'An HTML page.', contentType: 'text/html' } },
    errors: always,
  },
  docsAsset: {
    operationId: 'docsAsset',
    method: 'GET',
    path: '/docs/assets/:file',
    tag: 'Reference',
    summary: "The reference page's scripts and styles",
    auth: 'none',
    params: z.object({ file: z.string().max(100) }),
    answers: { 200: { description: 'A script, style sheet or image.', contentType: 'application/octet-stream' } },
    errors: { 404: ['not_found'], ...always },
  },
} as const satisfies Record<string, RouteSpec>;

function codecRoutes() {
  const tag = 'Codec';
  const payloads = {
    schema: codecBody,
    example: { payloads: [{ metadata: { encoding: 'anNvbi9wbGFpbg==' }, data: 'e30=' }] },
  };
  const body = { id: 'CodecRequest', schema: () => codecBody, examples: { one: payloads.example } };
  const codecErrors = {
    400: [...malformed, 'codec_failed'],
    413: ['payload_too_large'],
    415: ['unsupported_media_type'],
    ...withKey,
    403: ['forbidden'],
  } as const satisfies RouteSpec['errors'];
  const uiToken = z.object({ uiToken: z.string().max(1000) });
  const preflight = (operationId: string, path: string): RouteSpec => ({
    operationId,
    method: 'OPTIONS',
    path,
    tag,
    summary: 'CORS preflight for the Web UI (origins in CODEC_CORS_ORIGINS)',
    auth: 'none',
    ...(path.includes(':uiToken') ? { params: uiToken } : {}),
    answers: { 204: { description: 'Allowed.' } },
    errors: { 403: ['forbidden'], ...always },
  });
  return {
    codecEncode: {
      operationId: 'codecEncode',
      method: 'POST',
      path: '/codec/encode',
      tag,
      summary: "Encode payloads (Temporal's remote codec), operator key",
      auth: 'operator',
      body,
      answers: { 200: { description: 'The encoded payloads.', ...payloads } },
      errors: codecErrors,
    },
    codecDecode: {
      operationId: 'codecDecode',
      method: 'POST',
      path: '/codec/decode',
      tag,
      summary: "Decode payloads (Temporal's remote codec), operator key",
      auth: 'operator',
      body,
      answers: { 200: { description: 'The decoded payloads.', ...payloads } },
      errors: codecErrors,
    },
    codecUiDecode: {
      operationId: 'codecUiDecode',
      method: 'POST',
      path: '/codec/ui/:uiToken/decode',
      tag,
      summary: "The Temporal Web UI's decode, with an expiring token in the URL",
      auth: 'url_token',
      params: uiToken,
      body,
      answers: { 200: { description: 'The decoded payloads.', ...payloads } },
      errors: { ...codecErrors, 404: ['not_found'] },
    },
    codecUiEncode: {
      operationId: 'codecUiEncode',
      method: 'POST',
      path: '/codec/ui/:uiToken/encode',
      tag,
      summary: 'Refused: a Web UI token only decodes',
      auth: 'url_token',
      params: uiToken,
      answers: {},
      errors: { ...jsonBodyErrors, 403: ['forbidden'], ...always },
    },
    codecEncodePreflight: preflight('codecEncodePreflight', '/codec/encode'),
    codecDecodePreflight: preflight('codecDecodePreflight', '/codec/decode'),
    codecUiEncodePreflight: preflight('codecUiEncodePreflight', '/codec/ui/:uiToken/encode'),
    codecUiDecodePreflight: preflight('codecUiDecodePreflight', '/codec/ui/:uiToken/decode'),
  } satisfies Record<string, RouteSpec>;
}

function callbackRoutes() {
  const callback = (method: 'GET' | 'POST'): RouteSpec => ({
    operationId: method === 'POST' ? 'providerCallback' : 'providerCallbackByQuery',
    method,
    path: CALLBACK_ROUTE,
    tag: 'Provider callbacks',
    summary: 'Not for merchants: the provider reports a transaction',
    description:
      'The URL the worker hands the provider at initiation, with an HMAC token of the payment id. Fields are read ' +
      'tolerantly from JSON, a form or the query string. Accepted callbacks are checked by the payment workflow ' +
      'before they settle anything.',
    auth: 'url_token',
    params: z.object({ paymentId: paymentId, token: z.string() }),
    ...(method === 'POST'
      ? {
          body: {
            id: 'ProviderCallback',
            schema: () => z.record(z.string(), z.unknown()),
            examples: { success: { transaction_id: '100231', status: '1', message: 'Approved', amount: 12.5 } },
            alsoAccepts: ['application/x-www-form-urlencoded', 'text/plain'],
            required: false,
          },
        }
      : {}),
    answers: {
      200: { description: 'Accepted (duplicates too).', schema: callbackReceived, example: { received: true } },
    },
    errors: {
      400: ['unparseable_callback', ...malformed],
      404: ['not_found'],
      410: ['callback_expired'],
      413: ['payload_too_large'],
      429: ['too_many_callbacks'],
      ...always,
      ...temporal,
    },
  });
  return { providerCallback: callback('POST'), providerCallbackByQuery: callback('GET') };
}

/** Every route spec, in the order the document lists them. */
export const ALL_ROUTES: readonly RouteSpec[] = Object.values(ROUTES);
