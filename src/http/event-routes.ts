import { z } from 'zod';
import { NOTIFICATION_TYPES } from '../domain/notification';
import { eventDetailSchema, eventListSchema } from '../domain/notification-delivery';
import { AppError } from '../payments/app-errors';
import type { Notifications } from '../payments/notification-deliveries';
import { EVENTS_KEPT_DAYS } from '../payments/notification-deliveries';
import { ApiError } from './http-errors';
import { cursorError } from './pagination';
import { batchId, page, paymentExample, paymentId, temporal, withKey } from './route-parts';
import { checkedRule } from '../domain/requests';
import { route } from './route-spec';

// A merchant's notification events, read from the outbox: catching up after an outage needs no operator.

export interface EventRouteDeps {
  notifications: Notifications;
}

const eventId = z
  .string()
  .regex(/^evt_[A-Za-z0-9_-]{8,64}$/)
  .describe('evt_…');

const eventExample = {
  id: 'evt_3f9c2a7b1d4e4c0f8a6b5d2e1c0f9a8b',
  type: 'payment.succeeded',
  created_at: '2026-05-04T10:15:03.000Z',
  merchant_id: 'acme',
  data: { object: { ...paymentExample, status: 'succeeded' } },
  delivery: {
    event_id: 'evt_3f9c2a7b1d4e4c0f8a6b5d2e1c0f9a8b',
    type: 'payment.succeeded',
    merchant_id: 'acme',
    subject: paymentExample.id,
    status: 'delivered',
    attempts: 2,
    last_error: 'http_503',
    queued_at: '2026-05-04T10:15:03.000Z',
    first_attempt_at: '2026-05-04T10:15:03.050Z',
    next_attempt_at: null,
    finished_at: '2026-05-04T10:16:03.120Z',
    replays: 0,
  },
};

const listEvents = route(
  {
    operationId: 'listEvents',
    method: 'GET',
    path: '/v1/events',
    tag: 'Events',
    summary: 'List notification events',
    description:
      `The notification events of the last ${EVENTS_KEPT_DAYS} days, newest first, each with where its delivery ` +
      'stands: what a merchant reads to catch up after its endpoint was down. Filters combine: `type`, `payment`, ' +
      '`batch`, and `delivered=false` (waiting, being sent, failed or stopped). Page with `limit` and ' +
      '`starting_after` while `has_more` is true.',
    auth: 'merchant',
    forbidden: 'events are read with a merchant key',
    query: z.strictObject({
      type: z.enum(NOTIFICATION_TYPES).optional(),
      payment: paymentId.optional().describe('only events about this payment'),
      batch: checkedRule(batchId, 'not together with `payment`')
        .optional()
        .describe('only events about this payout batch'),
      delivered: z.enum(['false']).optional().describe('`false`: only events not delivered yet'),
      ...page,
    }),
    answers: {
      200: { description: 'One page.', schema: eventListSchema, example: { data: [eventExample], has_more: false } },
    },
    errors: { 400: ['invalid_request'], ...withKey, 403: ['forbidden'], ...temporal },
  },
  async ({ caller, query }, { notifications }: EventRouteDeps) => {
    if (query.payment && query.batch) {
      throw new ApiError(400, 'invalid_request', 'the filter is invalid', [
        { path: 'batch', message: 'cannot be combined with payment: an event is about one or the other' },
      ]);
    }
    try {
      return await notifications.events({
        merchantId: caller.merchantId,
        type: query.type,
        subject: query.payment ?? query.batch,
        undelivered: query.delivered === 'false',
        startingAfter: query.starting_after,
        limit: query.limit,
      });
    } catch (err) {
      if (query.starting_after !== undefined && err instanceof AppError && err.kind === 'not_found') {
        throw cursorError();
      }
      throw err;
    }
  },
);

const getEvent = route(
  {
    operationId: 'getEvent',
    method: 'GET',
    path: '/v1/events/:id',
    tag: 'Events',
    summary: 'Read a notification event',
    description: 'The event as it was (or is to be) delivered, where its delivery stands, and every attempt.',
    auth: 'merchant',
    forbidden: 'events are read with a merchant key',
    params: z.object({ id: eventId }),
    notFound: 'no such event',
    answers: {
      200: {
        description: 'The event and its delivery attempts.',
        schema: eventDetailSchema,
        example: {
          ...eventExample,
          attempts: [
            { attempt: 1, at: '2026-05-04T10:15:03.050Z', duration_ms: 31, status_code: 503, error: 'http_503' },
            { attempt: 2, at: '2026-05-04T10:16:03.090Z', duration_ms: 30, status_code: 200, error: null },
          ],
        },
      },
    },
    errors: { ...withKey, 403: ['forbidden'], 404: ['not_found'], ...temporal },
  },
  ({ caller, params }, { notifications }: EventRouteDeps) => notifications.event(params.id, caller.merchantId),
);

/** The event routes, in the order the OpenAPI document lists them. */
export const EVENT_ROUTES = [listEvents, getEvent];
