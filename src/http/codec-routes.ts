import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import type { ApiKeys } from './auth';
import { ApiError, validationError } from './errors';

export interface CodecRouteDeps {
  codec: PayloadCodec;
  keys: ApiKeys;
  /** Browser origins allowed to call the codec (the Temporal Web UI's). */
  corsOrigins: readonly string[];
}

const CODEC_BODY_LIMIT = 4 * 1024 * 1024;
const base64 = z
  .string()
  .max(CODEC_BODY_LIMIT)
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');
const codecBody = z.object({
  payloads: z
    .array(z.object({ metadata: z.record(z.string().max(256), base64).default({}), data: base64.optional() }))
    .max(10_000),
});
type JsonPayload = z.infer<typeof codecBody>['payloads'][number];

/**
 * Temporal's remote codec protocol for operators: the Web UI and `temporal workflow show --codec-endpoint`
 * send encrypted payloads and get them back readable. Operator keys only.
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

  const authorize = (request: FastifyRequest) => {
    const { uiToken } = request.params as { uiToken?: string };
    const caller = uiToken === undefined ? keys.authenticate(request) : keys.authenticateUiCodecToken(uiToken);
    if (caller.role !== 'operator') throw new ApiError(403, 'forbidden', 'only an operator key can use the codec');
  };

  const route = (action: 'encode' | 'decode') => async (request: FastifyRequest, reply: FastifyReply) => {
    authorize(request);
    const body = codecBody.safeParse(request.body);
    if (!body.success) throw validationError(body.error, 'send {"payloads":[{"metadata":{…},"data":"…"}]}');
    let payloads: Payload[];
    try {
      payloads = await codec[action](body.data.payloads.map(fromJson));
    } catch {
      throw new ApiError(400, 'codec_failed', `the payloads cannot be ${action}d with the configured keys`);
    }
    return reply.send({ payloads: payloads.map(toJson) });
  };

  for (const prefix of ['/codec', '/codec/ui/:uiToken']) {
    for (const action of ['encode', 'decode'] as const) {
      app.post(`${prefix}/${action}`, { bodyLimit: CODEC_BODY_LIMIT }, route(action));
      app.options(`${prefix}/${action}`, (_request, reply) => reply.status(204).send());
    }
  }
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
