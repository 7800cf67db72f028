import { timingSafeEqual } from 'node:crypto';
import { sha256 } from '../crypto/digest';
import type { FastifyRequest } from 'fastify';
import { signCodecToken, verifyCodecToken } from '../crypto/codec-tokens';
import { apiKeyId } from '../payments/merchant-accounts';
import type { StoredKey } from '../payments/merchant-key-directory';
import { ApiError } from './http-errors';

/** Who makes a request: a merchant, or an operator (a person, by name). */
export type Caller = { role: 'merchant'; merchantId: string } | { role: 'operator'; name: string };

interface KeyEntry {
  digest: Buffer;
  caller: Caller;
}

/** The merchants' keys kept in PostgreSQL, by key id (payments/merchant-key-directory.ts). */
export interface StoredKeys {
  find(id: string): StoredKey | undefined;
}

/**
 * Finds who a bearer key belongs to: the keys of the environment (MERCHANT_API_KEYS, OPERATOR_API_KEYS), every one
 * compared in constant time, then a merchant's stored key by its id (expired ones refused); issues and checks Web UI
 * codec tokens.
 */
export class ApiKeys {
  private readonly entries: KeyEntry[];
  private readonly operatorNames: Set<string>;

  constructor(
    merchants: { merchantId: string; key: string }[],
    operators: { name: string; key: string }[],
    private readonly codecTokenSecret?: string,
    private readonly stored?: StoredKeys,
  ) {
    this.entries = [
      ...merchants.map((m) => ({
        digest: sha256(m.key),
        caller: { role: 'merchant', merchantId: m.merchantId } as const,
      })),
      ...operators.map((o) => ({ digest: sha256(o.key), caller: { role: 'operator', name: o.name } as const })),
    ];
    this.operatorNames = new Set(operators.map((o) => o.name));
  }

  /** The caller of a request, or a 401 when the key is missing or unknown. */
  authenticate(request: FastifyRequest): Caller {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!match?.[1]) throw new ApiError(401, 'unauthorized', 'send `Authorization: Bearer <api key>`');
    const presented = sha256(match[1]);
    let found: Caller | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(entry.digest, presented) && !found) found = entry.caller;
    }
    found ??= this.storedCaller(match[1], presented);
    if (!found) throw new ApiError(401, 'unauthorized', 'the API key is not valid');
    return found;
  }

  /** A decode-only Web UI codec token for an operator, valid for `ttlMs`; 404 when CODEC_TOKEN_SECRET is unset. */
  issueUiCodecToken(operator: string, ttlMs: number, now: number = Date.now()): { token: string; expiresAt: Date } {
    const secret = this.requireCodecTokenSecret();
    const expiresAt = new Date(now + ttlMs);
    return { token: signCodecToken(secret, operator, expiresAt), expiresAt };
  }

  /**
   * The operator behind a Web UI codec token, or a 401: forged, expired, or issued to a name no longer in
   * OPERATOR_API_KEYS (removing a person's entry revokes their tokens).
   */
  authenticateUiCodecToken(token: string): Extract<Caller, { role: 'operator' }> {
    const verified = verifyCodecToken(this.requireCodecTokenSecret(), token);
    if (!verified || !this.operatorNames.has(verified.operator)) {
      throw new ApiError(401, 'unauthorized', 'the codec token is not valid or has expired; ask for a new one');
    }
    return { role: 'operator', name: verified.operator };
  }

  private storedCaller(key: string, presented: Buffer): Caller | undefined {
    const id = apiKeyId(key);
    const stored = id === undefined ? undefined : this.stored?.find(id);
    if (!stored || (stored.expiresAt !== undefined && stored.expiresAt <= Date.now())) return undefined;
    return timingSafeEqual(stored.digest, presented) ? { role: 'merchant', merchantId: stored.merchantId } : undefined;
  }

  private requireCodecTokenSecret(): string {
    if (!this.codecTokenSecret) {
      throw new ApiError(404, 'not_found', 'Web UI codec tokens are off: the server has no CODEC_TOKEN_SECRET');
    }
    return this.codecTokenSecret;
  }
}
