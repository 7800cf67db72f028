import { z } from 'zod';
import { batchProgressSchema, paymentResourceSchema } from '../domain/api-resources';
import { NOTIFICATION_TYPES, notificationEventSchema } from '../domain/notification';
import type { NotificationType } from '../domain/notification';
import { batchExample } from './batch-routes';
import { paymentExample } from './route-parts';

// The notifications a merchant receives, as the OpenAPI document's top-level `webhooks`: one entry per event type,
// its body the event schema with `type` fixed and `data.object` the resource it tells of.

/** When each event type is sent (the table in docs/api.md). */
const WHEN: Record<NotificationType, string> = {
  'payment.approval_required': 'The bank credit waits for an operator to approve it before it is sent.',
  'payment.action_required': "The payment is `pending` with a `next_action` (a card's 3-D Secure redirect).",
  'payment.succeeded': 'The payment succeeded (callback or status query).',
  'payment.failed': 'The payment failed.',
  'payment.needs_review': 'An operator has to settle the payment.',
  'payment.resolved': 'An operator settled the payment: `data.object.status` is the outcome.',
  'payment.late_callback': 'After the outcome, the provider called back with the opposite one (not applied).',
  'batch.progress': "About every 10 % of a payout batch's items are done (never per item).",
  'batch.completed': 'The batch is done (`completed` or `cancelled`).',
  'batch.halted': 'The batch paused itself: too many failures, or provider-wide errors.',
  'batch.approval_required': "The batch waits for operators' approval before it starts.",
  'batch.approved': 'Enough operators approved the batch: it starts (at its `starts_at` when scheduled).',
  'batch.rejected': 'An operator rejected the batch: nothing was sent.',
  'batch.expired': 'Nobody approved the batch within `APPROVAL_WINDOW`: nothing was sent.',
};

const HEADERS: Record<string, { description: string; pattern?: string }> = {
  'webhook-id': {
    description: "Standard Webhooks: the event's `id`, the same on every attempt (deduplicate by it).",
    pattern: '^evt_[A-Za-z0-9_-]{8,64}$',
  },
  'webhook-timestamp': {
    description: 'Standard Webhooks: when this attempt was signed, in unix seconds; refuse one more than 300 s away.',
    pattern: '^[0-9]{1,12}$',
  },
  'webhook-signature': {
    description:
      'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{raw body}">`, one per ' +
      "secret (space-separated) while a secret rotates. A `whsec_<base64>` secret's key is the decoded bytes; any " +
      'other secret is the key as it is written (a raw secret).',
    pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$',
  },
  'payments-signature': {
    description:
      'Stripe\'s scheme: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, one `v1` per secret.',
    pattern: '^t=[0-9]+(,v1=[0-9a-f]{64})+$',
  },
  'idempotency-key': { description: "The event's `id`, as `webhook-id`." },
};

function componentId(type: NotificationType): string {
  const words = type.split(/[._]/).map((word) => `${word.charAt(0).toUpperCase()}${word.slice(1)}`);
  return `${words.join('')}Notification`;
}

/** Each event type's body: the event schema with its `type` and the resource its `data.object` holds. */
const EVENT_BODIES = NOTIFICATION_TYPES.map((type) => ({
  type,
  id: componentId(type),
  schema: notificationEventSchema.extend({
    type: z.literal(type),
    data: z.strictObject({ object: type.startsWith('batch.') ? batchProgressSchema : paymentResourceSchema }),
  }),
}));

/**
 * The document's `webhooks`, one `post` per notification event type; registers each event body as a component in
 * the registry the answers are converted from, so bodies refer to `Payment` and `PayoutBatch` as answers do.
 */
export function notificationWebhooks(components: z.core.$ZodRegistry<{ id: string }>): Record<string, unknown> {
  for (const { schema, id } of EVENT_BODIES) if (!components.has(schema)) components.add(schema, { id });
  const parameters = Object.entries(HEADERS).map(([name, { description, pattern }]) => ({
    name,
    in: 'header',
    required: true,
    description,
    schema: { type: 'string', ...(pattern ? { pattern } : {}) },
  }));
  return Object.fromEntries(
    EVENT_BODIES.map(({ type, id }) => [
      type,
      {
        post: {
          operationId: `notify${id.replace(/Notification$/, '')}`,
          summary: `${type}: ${WHEN[type]}`,
          description:
            "Sent to the merchant's notification endpoint, signed twice: Standard Webhooks (`webhook-*`) and " +
            '`Payments-Signature`. Verify either on the raw body before parsing it (`verifyNotification` in the ' +
            'client checks both).',
          parameters,
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: { $ref: `#/components/schemas/${id}` }, example: exampleOf(type) },
            },
          },
          responses: {
            '2XX': { description: 'Received and stored: delivered.' },
            '410': { description: 'Gone: this event is not sent again.' },
            default: {
              description:
                'Any other answer, a timeout (10 s) or a network error: retried with backoff for 24 hours, then failed.',
            },
          },
        },
      },
    ]),
  );
}

function exampleOf(type: NotificationType): unknown {
  return {
    id: 'evt_3f9c0a6d2b8e4f1aa7c5d9e0b1c2d3e4',
    type,
    created_at: '2026-05-01T14:03:07.120Z',
    merchant_id: 'demo',
    data: { object: type.startsWith('batch.') ? batchExample : paymentExample },
  };
}
