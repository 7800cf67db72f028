import { z } from 'zod';
import { APPROVAL_DECISIONS } from './approval-rules';
import { BATCH_STATUSES, ITEM_STAGES } from './batch-model';
import { HALT_REASONS } from './halt-watch';
import { PAYMENT_EVENT_TYPES, PAYMENT_STATUSES } from './payment-model';
import { PAYMENT_TYPES } from './requests';

// What the API answers, as zod schemas: the server's types (z.infer), the OpenAPI document (z.toJSONSchema) and the
// typed client (packages/client/) all come from here. Objects are not strict: a client parsing an answer from a newer
// server drops fields it does not know; the document still lists exactly the fields the server sends.

const metadata = z
  .record(z.string(), z.string())
  .optional()
  .describe('the metadata the merchant created it with; absent when none');

const timestamp = z.iso.datetime({ offset: true }).describe('an ISO 8601 UTC time');

const approvalsSchema = z
  .array(z.object({ operator: z.string(), decision: z.enum(APPROVAL_DECISIONS), at: timestamp }))
  .describe("operators' decisions, in order: who approved or rejected it, and when");

export const paymentEventSchema = z
  .object({
    at: timestamp,
    type: z.enum(PAYMENT_EVENT_TYPES),
    message: z.string().optional(),
    status_code: z.string().optional(),
    outcome: z.string().optional(),
    count: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('how many identical callbacks in a row this event stands for, when more than one'),
  })
  .meta({ id: 'PaymentEvent' });

export const failureSchema = z
  .object({
    code: z.string().describe('provider_declined, provider_unreachable, card_data_unavailable, untrusted_input, …'),
    message: z.string(),
  })
  .meta({ id: 'Failure' });

/** The payment as the merchant API and operators see it; card data only as `last4`. */
export const paymentResourceSchema = z
  .object({
    id: z.string().describe('payment-{merchant id}-{reference}; also the Temporal workflow id'),
    type: z.enum(PAYMENT_TYPES),
    reference: z.string(),
    status: z.enum(PAYMENT_STATUSES),
    amount: z.number(),
    created_at: timestamp,
    updated_at: timestamp,
    provider: z.object({
      transaction_id: z.string().nullable(),
      status_code: z.string().nullable(),
      message: z.string().nullable(),
    }),
    next_action: z
      .object({ type: z.literal('redirect'), url: z.string() })
      .nullable()
      .describe('for a card payment: where the payer goes for 3-D Secure'),
    failure: failureSchema.nullable(),
    card: z.object({ last4: z.string() }).optional(),
    metadata,
    approvals: approvalsSchema
      .optional()
      .describe('a bank credit above its approval threshold: who approved or rejected it, and when; absent otherwise'),
    approval_expires_at: timestamp
      .optional()
      .describe('a bank credit waiting for approval fails at this time, nothing sent, unless approved by then'),
    events: z.array(paymentEventSchema),
  })
  .meta({ id: 'Payment' });

/** A payment as lists show it, from Temporal's visibility store (seconds behind the payment itself). */
export const paymentSummarySchema = z
  .object({
    id: z.string(),
    type: z.enum(PAYMENT_TYPES).nullable(),
    reference: z.string().nullable(),
    status: z.enum(PAYMENT_STATUSES).nullable(),
    amount: z.number().nullable(),
    created_at: timestamp,
    closed_at: timestamp.nullable().describe("when the payment's workflow closed (after its late-callback window)"),
    metadata,
  })
  .meta({ id: 'PaymentSummary' });

/** One page of a list: `has_more` says whether `starting_after` the last id finds more. */
export const paymentListSchema = z
  .object({
    data: z.array(paymentSummarySchema),
    has_more: z.boolean().describe('true when a next page exists: ask again with starting_after = the last id'),
  })
  .meta({ id: 'PaymentList' });

export const tallySchema = z.object({ count: z.number().int().min(0), amount: z.number() }).meta({ id: 'Tally' });

/** How fast a running batch goes, from its items' records. */
export const batchPaceSchema = z.object({
  items_per_second: z
    .number()
    .nullable()
    .describe(
      "items done per second between the first item's start and the latest item's change; null until one is done",
    ),
  seconds_left: z.number().int().nullable().describe('the time left at that pace; null until there is a pace'),
});
export type BatchPace = z.infer<typeof batchPaceSchema>;

/** A batch as the API and the CLI show it. */
export const batchProgressSchema = z
  .object({
    id: z.string().describe('batch-{merchant id}-{reference}'),
    reference: z.string(),
    status: z.enum(BATCH_STATUSES),
    concurrency: z.number().int(),
    created_at: timestamp,
    started_at: timestamp,
    finished_at: timestamp.nullable(),
    total: tallySchema,
    items: z.object(
      Object.fromEntries(ITEM_STAGES.map((stage) => [stage, tallySchema])) as Record<
        (typeof ITEM_STAGES)[number],
        typeof tallySchema
      >,
    ),
    needs_review: z.array(z.string()).describe('payment ids of the items waiting for an operator'),
    not_started: z
      .array(z.string())
      .nullable()
      .describe(
        'references of the items a cancel kept from starting, the first 1,000 (`report.csv` lists every item); null unless cancelled',
      ),
    paused_by: z
      .string()
      .nullable()
      .describe(
        "who paused the batch: an operator's name, `merchant`, or `system` when it halted itself; null unless paused. A pause by an operator or the system is resumed only by an operator",
      ),
    halt: z
      .object({
        reason: z.enum(HALT_REASONS),
        message: z.string(),
        at: timestamp,
      })
      .nullable()
      .optional()
      .describe(
        'the latest time the batch halted itself (paused by `system`): too many of its latest items failed, or the provider answered a run of provider-wide errors; null when it never did',
      ),
    pace: batchPaceSchema.optional().describe('how fast it goes; only while it runs, as `GET` answers it'),
    starts_at: timestamp.nullable().describe('when its items may start (`scheduled_at`); null: at once'),
    approvals_required: z.number().int().describe('how many different operators must approve it before it starts'),
    approvals: approvalsSchema,
    approval_expires_at: timestamp
      .nullable()
      .describe('when it expires, nothing sent, unless approved by then; null when it needs no approval'),
    metadata,
  })
  .meta({ id: 'PayoutBatch' });

/** Every `error.code` the API answers with. */
export const ERROR_CODES = [
  'invalid_request',
  'invalid_json',
  'bad_request',
  'unparseable_callback',
  'codec_failed',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'reference_purged',
  'callback_expired',
  'method_not_allowed',
  'payload_too_large',
  'uri_too_long',
  'headers_too_large',
  'unsupported_media_type',
  'too_many_callbacks',
  'rate_limited',
  'internal',
  'action_not_recorded',
  'unavailable',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const fieldErrorSchema = z.object({ path: z.string(), message: z.string() }).meta({ id: 'FieldError' });

/** The body of every error answer. */
export const errorEnvelopeSchema = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES),
      message: z.string(),
      fields: z.array(fieldErrorSchema).describe('every bad field of a 400 (items.3.bank_code); empty otherwise'),
    }),
  })
  .meta({ id: 'Error' });

/** `POST /v1/operator/codec-tokens`: a Web UI codec URL for the operator. */
export const codecTokenAnswerSchema = z
  .object({ operator: z.string(), codec_endpoint: z.string(), expires_at: timestamp })
  .meta({ id: 'CodecToken' });

export type PaymentResourceShape = z.infer<typeof paymentResourceSchema>;
export type PaymentEventShape = z.infer<typeof paymentEventSchema>;
export type PaymentSummary = z.infer<typeof paymentSummarySchema>;
export type PaymentList = z.infer<typeof paymentListSchema>;
export type BatchProgressShape = z.infer<typeof batchProgressSchema>;
export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;
export type FieldError = z.infer<typeof fieldErrorSchema>;
