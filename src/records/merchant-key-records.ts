import type { Database, Queryable } from './database';
import { inTransaction } from './database';

// Merchants and their API keys (migrations/007_merchants.sql). A key's secret is never stored: its SHA-256 is.

/** The channel a change of merchants, keys or endpoints is announced on: servers and relays reload at once. */
export const MERCHANT_CHANNEL = 'merchant_changes';

/** A merchant as recorded. */
export interface MerchantRow {
  id: string;
  name: string | null;
  source: 'api' | 'env';
  created_at: Date;
}

/** A key as recorded (its digest, never the key). */
export interface ApiKeyRow {
  id: string;
  merchant_id: string;
  digest: Buffer;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
}

/** Tells the servers and relays that merchants, keys or endpoints changed (on commit, inside a transaction). */
export async function announceMerchantChange(db: Queryable): Promise<void> {
  await db.query(`NOTIFY ${MERCHANT_CHANNEL}`);
}

/** Records a new merchant and its first key; false when the merchant id is taken. */
export async function insertMerchant(
  db: Database,
  merchant: { id: string; name: string | null },
  key: { id: string; digest: Buffer },
): Promise<boolean> {
  return inTransaction(db, async (client) => {
    const { rowCount } = await client.query(
      `INSERT INTO merchants (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`,
      [merchant.id, merchant.name],
    );
    if (rowCount !== 1) return false;
    await client.query(`INSERT INTO api_keys (id, merchant_id, digest) VALUES ($1, $2, $3)`, [
      key.id,
      merchant.id,
      key.digest,
    ]);
    await announceMerchantChange(client);
    return true;
  });
}

/** Records the merchants of MERCHANT_API_KEYS (source `env`) that are not recorded yet. */
export async function recordBootstrapMerchants(db: Database, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query(`INSERT INTO merchants (id, source) SELECT unnest($1::text[]), 'env' ON CONFLICT (id) DO NOTHING`, [
    ids,
  ]);
}

/** Every merchant, oldest first. */
export async function listMerchants(db: Database): Promise<MerchantRow[]> {
  const { rows } = await db.query<MerchantRow>(
    `SELECT id, name, source, created_at FROM merchants ORDER BY created_at, id`,
  );
  return rows;
}

/** Every key of these merchants (all of them when absent), newest first. */
export async function listApiKeys(db: Database, merchantId?: string): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<ApiKeyRow>(
    `SELECT id, merchant_id, digest, created_at, expires_at, revoked_at FROM api_keys
     WHERE $1::text IS NULL OR merchant_id = $1 ORDER BY created_at DESC, id`,
    [merchantId ?? null],
  );
  return rows;
}

/** The keys that may still work now or later: not revoked, not expired. */
export async function loadLiveApiKeys(db: Database): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<ApiKeyRow>(
    `SELECT id, merchant_id, digest, created_at, expires_at, revoked_at FROM api_keys
     WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
  );
  return rows;
}

/**
 * Adds a merchant's new key; its other live keys keep working for `overlapMs` more (0: stop now). Answers when they
 * stop, or undefined when there is no such merchant.
 */
export async function rollApiKey(
  db: Database,
  merchantId: string,
  key: { id: string; digest: Buffer },
  overlapMs: number,
): Promise<{ oldKeysExpireAt: Date } | undefined> {
  return inTransaction(db, async (client) => {
    const merchant = await client.query(`SELECT 1 FROM merchants WHERE id = $1 FOR UPDATE`, [merchantId]);
    if (merchant.rowCount !== 1) return undefined;
    const { rows } = await client.query<{ at: Date }>(`SELECT now() + $1 * interval '1 millisecond' AS at`, [
      overlapMs,
    ]);
    const at = rows[0]?.at ?? new Date(Date.now() + overlapMs);
    await client.query(
      `UPDATE api_keys SET expires_at = LEAST(COALESCE(expires_at, $2), $2)
       WHERE merchant_id = $1 AND revoked_at IS NULL`,
      [merchantId, at],
    );
    await client.query(`INSERT INTO api_keys (id, merchant_id, digest) VALUES ($1, $2, $3)`, [
      key.id,
      merchantId,
      key.digest,
    ]);
    await announceMerchantChange(client);
    return { oldKeysExpireAt: at };
  });
}

/** Revokes every key of a merchant that still works, at once; the number revoked, or undefined when there is no such merchant. */
export async function revokeApiKeys(db: Database, merchantId: string): Promise<number | undefined> {
  return inTransaction(db, async (client) => {
    const merchant = await client.query(`SELECT 1 FROM merchants WHERE id = $1 FOR UPDATE`, [merchantId]);
    if (merchant.rowCount !== 1) return undefined;
    const { rowCount } = await client.query(
      `UPDATE api_keys SET revoked_at = now()
       WHERE merchant_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
      [merchantId],
    );
    await announceMerchantChange(client);
    return rowCount ?? 0;
  });
}
