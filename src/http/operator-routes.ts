import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseDuration } from '../domain/duration';
import type { ApiKeys } from './auth';
import { CODEC_TOKEN_MAX_TTL_MS, CODEC_TOKEN_TTL_MS } from '../crypto/codec-tokens';
import { validationError } from './errors';

export interface OperatorRouteDeps {
  keys: ApiKeys;
  /** Where the server is reached from outside: the base of the codec URL handed out. */
  publicBaseUrl: string;
}

const ttl = z.string().transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === undefined || ms < 1000 || ms > CODEC_TOKEN_MAX_TTL_MS) {
    ctx.addIssue({ code: 'custom', message: 'must be a duration from 1s to 24h, like 30m or 8h' });
    return z.NEVER;
  }
  return ms;
});
const codecTokenRequest = z.strictObject({ ttl: ttl.optional() });

/**
 * `POST /v1/operator/codec-tokens`: an operator (API key) gets a Web UI codec endpoint for themself, decode-only and
 * expiring (`{"ttl":"8h"}`, the default), to paste into the Web UI's Codec Server settings.
 */
export function registerOperatorRoutes(app: FastifyInstance, { keys, publicBaseUrl }: OperatorRouteDeps): void {
  app.post('/v1/operator/codec-tokens', async (request, reply) => {
    const operator = keys.authenticateOperator(request, 'get a codec token');
    const body = codecTokenRequest.safeParse(request.body ?? {});
    if (!body.success) throw validationError(body.error);
    const { token, expiresAt } = keys.issueUiCodecToken(operator.name, body.data.ttl ?? CODEC_TOKEN_TTL_MS);
    request.log.info({ operator: operator.name, expiresAt: expiresAt.toISOString() }, 'Web UI codec token issued');
    return reply.status(201).send({
      operator: operator.name,
      codec_endpoint: `${publicBaseUrl}/codec/ui/${token}`,
      expires_at: expiresAt.toISOString(),
    });
  });
}
