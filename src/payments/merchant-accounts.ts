import { randomBytes } from 'node:crypto';
import { sha256 } from '../crypto/digest';
import type { MerchantResource } from '../domain/merchant-resources';
import type { Database } from '../records/database';
import { insertMerchant, listApiKeys, listMerchants, rollApiKey, revokeApiKeys } from '../records/merchant-key-records';
import type { ApiKeyRow, MerchantRow } from '../records/merchant-key-records';
import { recordOperatorAction } from '../records/operator-actions';
import type { ActionDetail } from '../records/operator-actions';
import { AppError } from './app-errors';

/** A new API key: `mk_{id}_{secret}`, 256 random bits; only its SHA-256 is stored, the id finds it. */
export function newApiKey(): { id: string; key: string; digest: Buffer } {
  const id = randomBytes(6).toString('hex');
  const key = `mk_${id}_${randomBytes(32).toString('base64url')}`;
  return { id, key, digest: sha256(key) };
}

/** The key id of a key of the `mk_{id}_{secret}` form, or undefined. */
export function apiKeyId(key: string): string | undefined {
  return /^mk_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/.exec(key)?.[1];
}

/**
 * The operators' side of merchants: add one (its first key answered once), list them, roll a merchant's key (the
 * old ones keep working for an overlap) or revoke them all, each recorded as the operator's action (`ops actions`),
 * never with a key. `changed` runs before an answer goes out, so this
 * process authenticates with the change already (the others hear of it through PostgreSQL's NOTIFY).
 */
export class MerchantAccounts {
  constructor(
    private readonly db: Database,
    private readonly changed: () => Promise<void> = () => Promise.resolve(),
  ) {}

  /** Adds a merchant and answers its first key; a conflict when the id is taken. */
  async create(
    operator: string,
    id: string,
    name: string | undefined,
  ): Promise<{ merchant: MerchantResource; apiKey: string }> {
    const key = newApiKey();
    if (!(await insertMerchant(this.db, { id, name: name ?? null }, key))) {
      throw new AppError('conflict', `merchant ${id} exists already`);
    }
    await this.changed();
    await this.record(operator, 'merchant.create', id, { key_id: key.id });
    return { merchant: await this.get(id), apiKey: key.key };
  }

  /** Every merchant with its keys' dates. */
  async list(): Promise<MerchantResource[]> {
    const [merchants, keys] = await Promise.all([listMerchants(this.db), listApiKeys(this.db)]);
    return merchants.map((m) => merchantResource(m, keys));
  }

  /** One merchant, or not_found. */
  async get(id: string): Promise<MerchantResource> {
    const found = (await this.list()).find((m) => m.id === id);
    if (!found) throw new AppError('not_found', `no merchant ${id}`);
    return found;
  }

  /** A new key for the merchant; its other keys stop after `overlapMs`. */
  async roll(
    operator: string,
    id: string,
    overlapMs: number,
  ): Promise<{ merchant: MerchantResource; apiKey: string; previousKeysExpireAt: Date }> {
    const key = newApiKey();
    const rolled = await rollApiKey(this.db, id, key, overlapMs);
    if (!rolled) throw new AppError('not_found', `no merchant ${id}`);
    await this.changed();
    await this.record(operator, 'merchant.key_roll', id, { key_id: key.id, overlap_ms: overlapMs });
    return { merchant: await this.get(id), apiKey: key.key, previousKeysExpireAt: rolled.oldKeysExpireAt };
  }

  /** Revokes every key of the merchant now; answers how many. */
  async revoke(operator: string, id: string): Promise<{ merchant: MerchantResource; revoked: number }> {
    const revoked = await revokeApiKeys(this.db, id);
    if (revoked === undefined) throw new AppError('not_found', `no merchant ${id}`);
    await this.changed();
    await this.record(operator, 'merchant.key_revoke', id, { revoked });
    return { merchant: await this.get(id), revoked };
  }

  private async record(operator: string, action: string, merchantId: string, detail: ActionDetail): Promise<void> {
    await recordOperatorAction(this.db, {
      operator,
      action,
      subjectId: merchantId,
      merchantId,
      detail,
      outcome: 'done',
    });
  }
}

function merchantResource(m: MerchantRow, keys: readonly ApiKeyRow[]): MerchantResource {
  return {
    id: m.id,
    name: m.name,
    source: m.source,
    created_at: m.created_at.toISOString(),
    keys: keys
      .filter((k) => k.merchant_id === m.id)
      .map((k) => ({
        id: k.id,
        created_at: k.created_at.toISOString(),
        expires_at: k.expires_at?.toISOString() ?? null,
        revoked_at: k.revoked_at?.toISOString() ?? null,
      })),
  };
}
