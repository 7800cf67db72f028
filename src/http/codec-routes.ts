import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { z } from 'zod';
import type { ApiKeys } from './auth';
import { ROUTES, codecBody } from './api-spec';
import { ApiError, validationError } from './errors';
import { route } from './route-spec';

export interface CodecRouteDeps {
  codec: PayloadCodec;
  keys: ApiKeys;
  /** Browser origins allowed to call the codec (the Temporal Web UI's). */
  corsOrigins: readonly string[];
}

const CODEC_BODY_LIMIT = 4 * 1024 * 1024;
type JsonPayload = z.infer<typeof codecBody>['payloads'][number];

/**
 * Temporal's remote codec protocol for operators. `/codec/decode` and `/codec/encode` take an operator's API key
 * (`temporal workflow show --codec-endpoint … --codec-auth "Bearer …"`); the Web UI, which cannot send one, uses
 * `/codec/ui/{token}/decode` with an expiring, decode-only token (crypto/codec-tokens.ts). Every call is logged with the
 * operator's name and the workflows concerned, never the payloads.
 */
export function registerCodecRoutes(app: FastifyInstance, { codec, keys, corsOrigins }: CodecRouteDeps): void {
  const allowed = new Set(corsOrigins);
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

  const run = async (
    action: 'encode' | 'decode',
    via: 'api' | 'web-ui',
    operator: string,
    request: FastifyRequest,
    reply: FastifyReply,
  ) => {
    const body = codecBody.safeParse(request.body);
    if (!body.success) throw validationError(body.error, 'send {"payloads":[{"metadata":{…},"data":"…"}]}');
    let payloads: Payload[];
    try {
      payloads = await codec[action](body.data.payloads.map(fromJson));
    } catch {
      throw new ApiError(400, 'codec_failed', `the payloads cannot be ${action}d with the configured keys`);
    }
    const plain = action === 'decode' ? payloads : body.data.payloads.map(fromJson);
    request.log.info(
      { operator, via, namespace: namespaceOf(request), payloads: payloads.length, ...workflowIdsIn(plain) },
      `codec ${action}`,
    );
    return reply.send({ payloads: payloads.map(toJson) });
  };

  const options = { bodyLimit: CODEC_BODY_LIMIT };
  for (const [action, spec] of [
    ['encode', ROUTES.codecEncode],
    ['decode', ROUTES.codecDecode],
  ] as const) {
    route(
      app,
      spec,
      (request, reply) => run(action, 'api', keys.authenticateOperator(request, 'use the codec').name, request, reply),
      options,
    );
  }
  route(
    app,
    ROUTES.codecUiDecode,
    (request, reply) => {
      const { uiToken } = request.params as { uiToken: string };
      return run('decode', 'web-ui', keys.authenticateUiCodecToken(uiToken).name, request, reply);
    },
    options,
  );
  route(
    app,
    ROUTES.codecUiEncode,
    () => {
      throw new ApiError(403, 'forbidden', 'a Web UI codec token only decodes; encoding takes an operator key');
    },
    options,
  );
  for (const spec of [
    ROUTES.codecEncodePreflight,
    ROUTES.codecDecodePreflight,
    ROUTES.codecUiEncodePreflight,
    ROUTES.codecUiDecodePreflight,
  ]) {
    route(app, spec, (_request, reply) => reply.status(204).send());
  }
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
