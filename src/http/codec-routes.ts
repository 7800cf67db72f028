import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import { ApiError } from './http-errors';
import { always, jsonBodyErrors, malformed, withKey } from './route-parts';
import { registerRoutes, route } from './route-spec';
import type { RouteContext, RouteSpec } from './route-spec';

export interface CodecRouteDeps {
  codec: PayloadCodec;
  /** Browser origins allowed to call the codec (the Temporal Web UI's). */
  corsOrigins: readonly string[];
}

const CODEC_BODY_LIMIT = 4 * 1024 * 1024;
const base64 = z
  .string()
  .max(CODEC_BODY_LIMIT)
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');
/** Temporal's remote codec protocol: payloads with base64 metadata and data. */
const codecBody = z
  .object({
    // Temporal's JSON leaves an empty list out: `{}` is no payloads (an Update without arguments), not an error.
    payloads: z
      .array(z.object({ metadata: z.record(z.string().max(256), base64).default({}), data: base64.optional() }))
      .max(10_000)
      .default([]),
  })
  .meta({ id: 'CodecPayloads' });
type CodecPayloads = z.infer<typeof codecBody>;
type JsonPayload = CodecPayloads['payloads'][number];

const tag = 'Codec';
const payloads = {
  schema: codecBody,
  example: { payloads: [{ metadata: { encoding: 'anNvbi9wbGFpbg==' }, data: 'e30=' }] },
};
const body = {
  id: 'CodecRequest',
  schema: () => codecBody,
  examples: { one: payloads.example },
  invalid: 'send {"payloads":[{"metadata":{…},"data":"…"}]}',
};
const codecErrors = {
  400: [...malformed, 'codec_failed'],
  413: ['payload_too_large'],
  415: ['unsupported_media_type'],
  ...withKey,
  403: ['forbidden'],
} as const satisfies RouteSpec['errors'];
// An operator name, an expiry and a MAC (crypto/codec-tokens.ts): the characters those hold, and room to spare.
const uiToken = z.object({ uiToken: z.string().regex(/^[A-Za-z0-9._-]{1,200}$/) });
const options = { bodyLimit: CODEC_BODY_LIMIT };

/** `/codec/encode` and `/codec/decode`, with an operator's key. */
function codecRoute(action: 'encode' | 'decode') {
  return route(
    {
      operationId: action === 'encode' ? 'codecEncode' : 'codecDecode',
      method: 'POST',
      path: `/codec/${action}`,
      tag,
      summary: `${action === 'encode' ? 'Encode' : 'Decode'} payloads (Temporal's remote codec), operator key`,
      auth: 'operator',
      forbidden: 'only an operator key can use the codec',
      body,
      answers: { 200: { description: `The ${action}d payloads.`, ...payloads } },
      errors: codecErrors,
      options,
    },
    ({ caller, body, request, reply }, { codec }: CodecRouteDeps) =>
      run(codec, action, 'api', caller.name, body, request, reply),
  );
}

const codecUiDecode = route(
  {
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
    options,
  },
  {
    verify: ({ uiToken }, { keys }: CodecRouteDeps & RouteContext) => keys.authenticateUiCodecToken(uiToken),
    handle: ({ caller, body, request, reply }, { codec }) =>
      run(codec, 'decode', 'web-ui', caller.name, body, request, reply),
  },
);

const codecUiEncode = route(
  {
    operationId: 'codecUiEncode',
    method: 'POST',
    path: '/codec/ui/:uiToken/encode',
    tag,
    summary: 'Refused: a Web UI token only decodes',
    auth: 'url_token',
    params: uiToken,
    answers: {},
    errors: { ...jsonBodyErrors, 403: ['forbidden'], ...always },
    options,
  },
  {
    // Refused as the request arrives, its body unread.
    verify: () => {
      throw new ApiError(403, 'forbidden', 'a Web UI codec token only decodes; encoding takes an operator key');
    },
    handle: () => undefined,
  },
);

/** The CORS preflight of a codec route: the hook of registerCodecRoutes answers it for an allowed origin. */
function preflight(operationId: string, path: string) {
  return route(
    {
      operationId,
      method: 'OPTIONS',
      path,
      tag,
      summary: 'CORS preflight for the Web UI (origins in CODEC_CORS_ORIGINS)',
      auth: 'none',
      ...(path.includes(':uiToken') ? { params: uiToken } : {}),
      answers: { 204: { description: 'Allowed.' } },
      // A path whose token cannot be one: a 404, as on the route it precedes.
      errors: { 403: ['forbidden'], ...(path.includes(':uiToken') ? { 404: ['not_found'] as const } : {}), ...always },
    },
    ({ reply }) => reply.status(204).send(),
  );
}

/** The codec routes, in the order the OpenAPI document lists them. */
export const CODEC_ROUTES = [
  codecRoute('encode'),
  codecRoute('decode'),
  codecUiDecode,
  codecUiEncode,
  preflight('codecEncodePreflight', '/codec/encode'),
  preflight('codecDecodePreflight', '/codec/decode'),
  preflight('codecUiEncodePreflight', '/codec/ui/:uiToken/encode'),
  preflight('codecUiDecodePreflight', '/codec/ui/:uiToken/decode'),
];

/**
 * Temporal's remote codec protocol for operators. `/codec/decode` and `/codec/encode` take an operator's API key
 * (`temporal workflow show --codec-endpoint … --codec-auth "Bearer …"`); the Web UI, which cannot send one, uses
 * `/codec/ui/{token}/decode` with an expiring, decode-only token (crypto/codec-tokens.ts). Every call is logged with the
 * operator's name and the workflows concerned, never the payloads.
 */
export function registerCodecRoutes(app: FastifyInstance, deps: CodecRouteDeps & RouteContext): void {
  const allowed = new Set(deps.corsOrigins);
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined) return;
    if (!allowed.has(origin)) throw new ApiError(403, 'forbidden', 'this origin may not use the codec');
    void reply.headers({
      'access-control-allow-origin': origin,
      'access-control-allow-methods': 'POST, OPTIONS',
      'access-control-allow-headers': 'authorization, content-type, x-namespace',
      'access-control-max-age': '600',
      vary: 'origin',
    });
    if (request.method === 'OPTIONS') return reply.status(204).send();
  });
  registerRoutes(app, CODEC_ROUTES, deps);
}

async function run(
  codec: PayloadCodec,
  action: 'encode' | 'decode',
  via: 'api' | 'web-ui',
  operator: string,
  body: CodecPayloads,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  let payloads: Payload[];
  try {
    payloads = await codec[action](body.payloads.map(fromJson));
  } catch {
    throw new ApiError(400, 'codec_failed', `the payloads cannot be ${action}d with the configured keys`);
  }
  const plain = action === 'decode' ? payloads : body.payloads.map(fromJson);
  request.log.info(
    { operator, via, namespace: namespaceOf(request), payloads: payloads.length, ...workflowIdsIn(plain) },
    `codec ${action}`,
  );
  return reply.send({ payloads: payloads.map(toJson) });
}

const NAMESPACE = /^[\w.-]{1,255}$/;
const MAX_LOGGED_IDS = 20;

function namespaceOf(request: FastifyRequest): string | undefined {
  const header = request.headers['x-namespace'];
  return typeof header === 'string' && NAMESPACE.test(header) ? header : undefined;
}

/**
 * The workflow ids readable payloads name: `workflowId` (signed envelopes), `paymentId` (payment inputs), `batchId`
 * (batch inputs) and a payment's or batch's own `id` (resources). Ids only: nothing else of the payload is kept.
 */
function workflowIdsIn(payloads: Payload[]): { workflowIds: string[]; workflowIdCount?: number } {
  const ids = new Set<string>();
  for (const payload of payloads) {
    if (Buffer.from(payload.metadata?.encoding ?? []).toString() !== 'json/plain' || !payload.data) continue;
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(payload.data).toString('utf8'));
    } catch {
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const fields = value as Record<string, unknown>;
    for (const key of ['workflowId', 'paymentId', 'batchId']) {
      if (typeof fields[key] === 'string') ids.add(fields[key]);
    }
    if (typeof fields.id === 'string' && /^(?:payment|batch)-/.test(fields.id)) ids.add(fields.id);
  }
  const all = [...ids];
  return all.length > MAX_LOGGED_IDS
    ? { workflowIds: all.slice(0, MAX_LOGGED_IDS), workflowIdCount: all.length }
    : { workflowIds: all };
}

function fromJson(payload: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(payload.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: payload.data === undefined ? undefined : Buffer.from(payload.data, 'base64'),
  };
}

function toJson(payload: Payload): { metadata: Record<string, string>; data: string } {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([k, v]) => [
        k,
        Buffer.from(v ?? new Uint8Array()).toString('base64'),
      ]),
    ),
    data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
  };
}
