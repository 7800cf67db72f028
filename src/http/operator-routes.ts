import { z } from 'zod';
import { codecTokenAnswerSchema } from '../domain/api-resources';
import { parseDuration } from '../domain/duration';
import { checkedRule } from '../domain/requests';
import { CODEC_TOKEN_MAX_TTL_MS, CODEC_TOKEN_TTL_MS } from '../crypto/codec-tokens';
import { jsonBodyErrors, withKey } from './route-parts';
import { route } from './route-spec';
import type { RouteContext } from './route-spec';

export interface OperatorRouteDeps {
  /** Where the server is reached from outside: the base of the codec URL handed out. */
  publicBaseUrl: string;
}

const TTL_MESSAGE = 'must be a duration from 1s to 24h, like 30m or 8h';
const ttl = checkedRule(
  z
    .string()
    .regex(/^\s*\d+(?:\.\d+)?(?:ms|s|m|h|d)\s*$/, TTL_MESSAGE)
    .transform((text, ctx) => {
      const ms = parseDuration(text);
      if (ms === undefined || ms < 1000 || ms > CODEC_TOKEN_MAX_TTL_MS) {
        ctx.addIssue({ code: 'custom', message: TTL_MESSAGE });
        return z.NEVER;
      }
      return ms;
    }),
  'from 1s to 24h',
).describe('how long the codec URL works: 1s to 24h, default 8h');
const codecTokenRequest = z.strictObject({ ttl: ttl.optional() });

/**
 * `POST /v1/operator/codec-tokens`: an operator (API key) gets a Web UI codec endpoint for themself, decode-only and
 * expiring (`{"ttl":"8h"}`, the default), to paste into the Web UI's Codec Server settings.
 */
const createCodecToken = route(
  {
    operationId: 'createCodecToken',
    method: 'POST',
    path: '/v1/operator/codec-tokens',
    tag: 'Operators',
    summary: 'Get a Web UI codec URL',
    description: 'A decode-only, expiring codec endpoint for the Temporal Web UI; a 404 when the server has none.',
    auth: 'operator',
    forbidden: 'only an operator key can get a codec token',
    body: {
      id: 'CodecTokenRequest',
      schema: () => codecTokenRequest,
      examples: { workday: { ttl: '8h' } },
      required: false,
    },
    answers: {
      201: {
        description: 'The codec URL.',
        schema: codecTokenAnswerSchema,
        example: {
          operator: 'ada.ops',
          codec_endpoint: 'https://payments.example/codec/ui/v1.ada.ops.1780000000.abc',
          expires_at: '2026-05-04T18:00:00.000Z',
        },
      },
    },
    errors: { ...jsonBodyErrors, ...withKey, 403: ['forbidden'], 404: ['not_found'] },
  },
  ({ caller, body, request, reply }, { keys, publicBaseUrl }: OperatorRouteDeps & RouteContext) => {
    const { token, expiresAt } = keys.issueUiCodecToken(caller.name, body.ttl ?? CODEC_TOKEN_TTL_MS);
    request.log.info({ operator: caller.name, expiresAt: expiresAt.toISOString() }, 'Web UI codec token issued');
    return reply.status(201).send({
      operator: caller.name,
      codec_endpoint: `${publicBaseUrl}/codec/ui/${token}`,
      expires_at: expiresAt.toISOString(),
    });
  },
);

/** The operators' own routes. */
export const OPERATOR_ROUTES = [createCodecToken];
