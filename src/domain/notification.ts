import { z } from 'zod';
import { batchProgressSchema, paymentResourceSchema } from './api-resources';

/** What a merchant is told about, as `type` in a notification event. */
export const NOTIFICATION_TYPES = [
  'payment.approval_required',
  'payment.action_required',
  'payment.succeeded',
  'payment.failed',
  'payment.needs_review',
  'payment.resolved',
  'payment.late_callback',
  'batch.progress',
  'batch.completed',
  'batch.halted',
  'batch.approval_required',
  'batch.approved',
  'batch.rejected',
  'batch.expired',
] as const;

export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/**
 * The JSON body a merchant's notification URL receives: the resource as `GET` returns it at the time of the change,
 * in `data.object` (a payment for `payment.*`, a payout batch for `batch.*`). `id` is the same on every delivery attempt of one event (merchants deduplicate by it).
 */
export const notificationEventSchema = z.strictObject({
  id: z.string().regex(/^evt_[A-Za-z0-9_-]{8,64}$/),
  type: z.enum(NOTIFICATION_TYPES),
  created_at: z.iso.datetime(),
  merchant_id: z.string(),
  data: z.strictObject({ object: z.union([paymentResourceSchema, batchProgressSchema]) }),
});

export type NotificationEvent = z.infer<typeof notificationEventSchema>;
