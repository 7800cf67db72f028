import { z } from 'zod';
import {
  DEFAULT_OVERLAP_MS,
  createEndpointRequest,
  endpointSecretSchema,
  rollRequest,
  updateEndpointRequest,
  webhookEndpointListSchema,
  webhookEndpointSchema,
} from '../domain/merchant-resources';
import type { MerchantEndpoints } from '../payments/merchant-endpoints';
import { ApiError } from './http-errors';
import { jsonBodyErrors, withKey } from './route-parts';
import { route } from './route-spec';

// A merchant's notification endpoints: where its events go, which types, and the secrets that sign them.

export interface WebhookEndpointRouteDeps {
  endpoints: MerchantEndpoints;
  /** Why an endpoint URL is refused here (production: internalUrlProblem); undefined when it is allowed. */
  endpointUrlProblem?: (url: string) => string | undefined;
}

/** Refuses, as a `400` naming `url`, a URL this deployment does not post to. */
function checkUrl(url: string | undefined, problemOf: ((url: string) => string | undefined) | undefined): void {
  const problem = url === undefined ? undefined : problemOf?.(url);
  if (problem)
    throw new ApiError(400, 'invalid_request', 'the request is invalid', [{ path: 'url', message: problem }]);
}

const merchantOnly = 'webhook endpoints are managed with a merchant key';
const endpointParams = z.strictObject({
  id: z
    .string()
    .regex(/^we_[A-Za-z0-9_-]{12}$/)
    .describe('we_…'),
});
const tag = 'Webhook endpoints';

const endpointExample = {
  id: 'we_3f9c2a7b1d4e4c0f',
  url: 'https://acme.example/payments/notifications',
  event_types: ['payment.succeeded', 'payment.failed'],
  status: 'enabled',
  created_at: '2026-05-04T10:15:03.000Z',
  updated_at: '2026-05-04T10:15:03.000Z',
  secrets: [{ prefix: 'whsec_MfKQ…', expires_at: null }],
};
const secretExample = { endpoint: endpointExample, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };
const byId = { params: endpointParams, notFound: 'no such webhook endpoint' } as const;
const endpointAnswer = { description: 'The endpoint.', schema: webhookEndpointSchema, example: endpointExample };

const createWebhookEndpoint = route(
  {
    operationId: 'createWebhookEndpoint',
    method: 'POST',
    path: '/v1/webhook-endpoints',
    tag,
    summary: 'Add a webhook endpoint',
    description:
      'Notifications of the given event types (all when `event_types` is absent or null) go to `url` from now on, ' +
      'signed with the secret answered here, this once.',
    auth: 'merchant',
    forbidden: merchantOnly,
    body: {
      id: 'CreateWebhookEndpointRequest',
      schema: () => createEndpointRequest,
      examples: { outcomes: { url: endpointExample.url, event_types: endpointExample.event_types } },
    },
    answers: {
      201: { description: 'The endpoint and its secret.', schema: endpointSecretSchema, example: secretExample },
    },
    errors: { ...jsonBodyErrors, ...withKey, 403: ['forbidden'] },
  },
  async ({ caller, body, reply }, { endpoints, endpointUrlProblem }: WebhookEndpointRouteDeps) => {
    checkUrl(body.url, endpointUrlProblem);
    const created = await endpoints.create(caller.merchantId, { url: body.url, eventTypes: body.event_types ?? null });
    return reply.status(201).send({ endpoint: created.endpoint, secret: created.secret });
  },
);

const listWebhookEndpoints = route(
  {
    operationId: 'listWebhookEndpoints',
    method: 'GET',
    path: '/v1/webhook-endpoints',
    tag,
    summary: 'List webhook endpoints',
    auth: 'merchant',
    forbidden: merchantOnly,
    answers: {
      200: { description: 'The endpoints.', schema: webhookEndpointListSchema, example: { data: [endpointExample] } },
    },
    errors: { ...withKey, 403: ['forbidden'] },
  },
  async ({ caller }, { endpoints }: WebhookEndpointRouteDeps) => ({ data: await endpoints.list(caller.merchantId) }),
);

const updateWebhookEndpoint = route(
  {
    operationId: 'updateWebhookEndpoint',
    method: 'POST',
    path: '/v1/webhook-endpoints/:id',
    tag,
    summary: 'Change a webhook endpoint',
    description: 'Changes its URL or the event types it receives (null: every type); the fields sent change.',
    auth: 'merchant',
    forbidden: merchantOnly,
    ...byId,
    body: {
      id: 'UpdateWebhookEndpointRequest',
      schema: () => updateEndpointRequest,
      examples: { failures: { event_types: ['payment.failed', 'payment.needs_review'] } },
    },
    answers: { 200: endpointAnswer },
    errors: { ...jsonBodyErrors, ...withKey, 403: ['forbidden'], 404: ['not_found'] },
  },
  async ({ caller, params, body }, { endpoints, endpointUrlProblem }: WebhookEndpointRouteDeps) => {
    checkUrl(body.url, endpointUrlProblem);
    return endpoints.update(caller.merchantId, params.id, { url: body.url, eventTypes: body.event_types });
  },
);

const rollWebhookEndpointSecret = route(
  {
    operationId: 'rollWebhookEndpointSecret',
    method: 'POST',
    path: '/v1/webhook-endpoints/:id/roll-secret',
    tag,
    summary: "Roll a webhook endpoint's secret",
    description:
      'Answers a new secret (`whsec_…`), this once; the old one keeps signing beside it for `overlap` (default ' +
      '24h, `0`: stop now), so a receiver can switch without missing a notification.',
    auth: 'merchant',
    forbidden: merchantOnly,
    ...byId,
    body: { id: 'RollRequest', schema: () => rollRequest, examples: { day: { overlap: '24h' } }, required: false },
    answers: { 201: { description: 'The new secret.', schema: endpointSecretSchema, example: secretExample } },
    errors: { ...jsonBodyErrors, ...withKey, 403: ['forbidden'], 404: ['not_found'] },
  },
  async ({ caller, params, body, reply }, { endpoints }: WebhookEndpointRouteDeps) => {
    const rolled = await endpoints.rollSecret(caller.merchantId, params.id, body.overlap ?? DEFAULT_OVERLAP_MS);
    return reply.status(201).send({ endpoint: rolled.endpoint, secret: rolled.secret });
  },
);

/** A route that turns an endpoint on or off. */
function statusRoute(status: 'enabled' | 'disabled') {
  const verb = status === 'enabled' ? 'enable' : 'disable';
  return route(
    {
      operationId: `${verb}WebhookEndpoint`,
      method: 'POST',
      path: `/v1/webhook-endpoints/:id/${verb}`,
      tag,
      summary: `${verb === 'enable' ? 'Enable' : 'Disable'} a webhook endpoint`,
      description:
        status === 'disabled'
          ? 'Nothing more is sent to it; events it would have taken are set aside when no other endpoint takes them.'
          : 'Notifications go to it again, from the next event on.',
      auth: 'merchant',
      forbidden: merchantOnly,
      ...byId,
      answers: { 200: { ...endpointAnswer, example: { ...endpointExample, status } } },
      errors: { ...withKey, 403: ['forbidden'], 404: ['not_found'] },
    },
    async ({ caller, params }, { endpoints }: WebhookEndpointRouteDeps) =>
      endpoints.update(caller.merchantId, params.id, { status }),
  );
}

/** A merchant's webhook endpoint routes. */
export const WEBHOOK_ENDPOINT_ROUTES = [
  createWebhookEndpoint,
  listWebhookEndpoints,
  updateWebhookEndpoint,
  rollWebhookEndpointSecret,
  statusRoute('disabled'),
  statusRoute('enabled'),
];
