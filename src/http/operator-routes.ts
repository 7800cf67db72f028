import type { FastifyInstance } from 'fastify';
import type { ApiKeys } from './auth';
import { CODEC_TOKEN_TTL_MS } from '../crypto/codec-tokens';
import { ROUTES } from './api-spec';
import { validationError } from './errors';
import { route } from './route-spec';

export interface OperatorRouteDeps {
  keys: ApiKeys;
  /** Where the server is reached from outside: the base of the codec URL handed out. */
  publicBaseUrl: string;
}

/**
 * `POST /v1/operator/codec-tokens`: an operator (API key) gets a Web UI codec endpoint for themself, decode-only and
 * expiring (`{"ttl":"8h"}`, the default), to paste into the Web UI's Codec Server settings.
 */
export function registerOperatorRoutes(app: FastifyInstance, { keys, publicBaseUrl }: OperatorRouteDeps): void {
  route(app, ROUTES.createCodecToken, async (request, reply) => {
    const operator = keys.authenticateOperator(request, 'get a codec token');
    const body = ROUTES.createCodecToken.body.schema().safeParse(request.body ?? {});
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
