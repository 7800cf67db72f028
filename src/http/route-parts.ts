import { z } from 'zod';
import type { ErrorCode } from '../domain/api-resources';
import { PAYMENT_STATUSES } from '../domain/payment-model';
import { checkedRule, PAYMENT_TYPES, referenceSchema } from '../domain/requests';
import type { RouteSpec } from './route-spec';

// The schema pieces, error sets and examples that several *-routes.ts files declare their routes with.

/** Most a page of a list holds. */
export const MAX_PAGE_SIZE = 100;

// No control characters: no id has them, and PostgreSQL refuses a NUL byte in any text (a 500, not a 404).
// eslint-disable-next-line no-control-regex -- the control characters are what it refuses
const ID_TEXT = /^[^\u0000-\u001f\u007f]{1,200}$/;

/** A payment's id in a path. */
export const paymentId = z.string().regex(ID_TEXT).describe('payment-{merchant id}-{reference}');

/** A payout batch's id in a path or a filter. */
export const batchId = z
  .string()
  .regex(/^batch-[^~]{1,200}$/)
  .regex(ID_TEXT)
  .describe('batch-{merchant id}-{reference}');

const instant = z.iso.datetime({ offset: true }).transform((at) => new Date(at));

/** The creation-time range of a list: `created[gte]` (inclusive) and `created[lt]` (exclusive). */
export const createdRange = {
  'created[gte]': instant.optional().describe('created at or after this time (ISO 8601)'),
  'created[lt]': instant.optional().describe('created before this time (ISO 8601)'),
};

/** The filters of the payment lists and exports: status, type, reference, payout batch and the creation range. */
export const paymentFilters = {
  status: z.enum(PAYMENT_STATUSES).optional(),
  type: z.enum(PAYMENT_TYPES).optional(),
  reference: referenceSchema.optional(),
  batch: batchId.optional(),
  ...createdRange,
};

/** A list's query, as the payment reads take it: the cursor and the creation range renamed. */
export function listQuery<Q extends { starting_after?: string; 'created[gte]'?: Date; 'created[lt]'?: Date }>(
  query: Q,
): Omit<Q, 'starting_after' | 'created[gte]' | 'created[lt]'> & {
  startingAfter?: string;
  createdFrom?: Date;
  createdBefore?: Date;
} {
  const { starting_after: startingAfter, 'created[gte]': createdFrom, 'created[lt]': createdBefore, ...rest } = query;
  return { ...rest, startingAfter, createdFrom, createdBefore };
}

/** The paging query parameters of a list. */
export const page = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .default(20)
    .describe(`how many to answer, 1–${MAX_PAGE_SIZE}`),
  starting_after: checkedRule(z.string().regex(ID_TEXT), 'the id of an item this list answered')
    .optional()
    .describe('the last id of the previous page: answers the page after it'),
};

/** The codes of a body that is not the JSON asked for. */
export const malformed = ['invalid_request', 'invalid_json', 'bad_request'] as const satisfies ErrorCode[];
/** The errors of a route that reads a JSON body. */
export const jsonBodyErrors = {
  400: malformed,
  413: ['payload_too_large'],
  415: ['unsupported_media_type'],
} as const satisfies RouteSpec['errors'];
/** The error any route can answer. */
export const always = { 500: ['internal'] } as const satisfies RouteSpec['errors'];
/** The errors of a route that takes an API key. */
export const withKey = { 401: ['unauthorized'], ...always } as const satisfies RouteSpec['errors'];
/** The error of a route that asks Temporal. */
export const temporal = { 503: ['unavailable'] } as const satisfies RouteSpec['errors'];
/** The errors of a route that creates a payment or batch once per merchant reference. */
export const creationErrors = {
  ...jsonBodyErrors,
  ...withKey,
  403: ['forbidden'],
  409: ['conflict', 'reference_purged'],
  503: ['unavailable'],
} as const satisfies RouteSpec['errors'];
/** The errors of a route that applies an operator's action, recorded once applied. */
export const operatorActionErrors = {
  ...jsonBodyErrors,
  ...withKey,
  404: ['not_found'],
  409: ['conflict'],
  500: ['internal', 'action_not_recorded'],
  ...temporal,
} as const satisfies RouteSpec['errors'];

/** A payment, as it is answered. */
export const paymentExample = {
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
  metadata: { order_id: '1001', channel: 'web' },
  events: [
    { at: '2026-05-04T10:00:00.400Z', type: 'initiated', status_code: '2', message: 'Pending' },
    { at: '2026-05-04T10:00:03.100Z', type: 'callback_received', outcome: 'succeeded', status_code: '1' },
    { at: '2026-05-04T10:00:03.200Z', type: 'succeeded' },
  ],
};

const { id, type, reference, status, amount, created_at, metadata } = paymentExample;
/** One page of payments, as the lists answer it: the payment above, summed up. */
export const paymentListExample = {
  data: [{ id, type, reference, status, amount, created_at, closed_at: null, metadata }],
  has_more: false,
};
