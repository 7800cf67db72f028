import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors';

export type Caller = { role: 'merchant'; merchantId: string } | { role: 'operator' };

interface KeyEntry {
  digest: Buffer;
  caller: Caller;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * The codec-endpoint path token of the Temporal Web UI, which cannot send an API key: derived from an operator key,
 * so it never reveals the key and dies with it.
 */
export function uiCodecToken(operatorKey: string): string {
  return createHmac('sha256', operatorKey).update('temporal-ui-codec').digest('base64url');
}

/** Finds who a bearer key belongs to, comparing every key in constant time. */
export class ApiKeys {
  private readonly entries: KeyEntry[];
  private readonly uiTokens: Buffer[];

  constructor(merchants: { merchantId: string; key: string }[], operators: string[]) {
    this.entries = [
      ...merchants.map((m) => ({
        digest: digest(m.key),
        caller: { role: 'merchant', merchantId: m.merchantId } as const,
      })),
      ...operators.map((key) => ({ digest: digest(key), caller: { role: 'operator' } as const })),
    ];
    this.uiTokens = operators.map((key) => digest(uiCodecToken(key)));
  }

  /** The caller of a request, or a 401 when the key is missing or unknown. */
  authenticate(request: FastifyRequest): Caller {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!match?.[1]) throw new ApiError(401, 'unauthorized', 'send `Authorization: Bearer <api key>`');
    const presented = digest(match[1]);
    let found: Caller | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(entry.digest, presented) && !found) found = entry.caller;
    }
    if (!found) throw new ApiError(401, 'unauthorized', 'the API key is not valid');
    return found;
  }

  /** The operator behind a Web UI codec token (see uiCodecToken), or a 401; constant-time like the keys. */
  authenticateUiCodecToken(token: string): Caller {
    const presented = digest(token);
    let valid = false;
    for (const expected of this.uiTokens) valid = timingSafeEqual(expected, presented) || valid;
    if (!valid) throw new ApiError(401, 'unauthorized', 'the codec token is not valid');
    return { role: 'operator' };
  }
}
