import type { PoolClient } from 'pg';
import type { PaymentResource } from '../domain/payment-model';
import { inTransaction } from './database';
import type { Database, Queryable } from './database';

// A merchant's reference is taken in PostgreSQL before anything starts: the same body again answers the same
// resource, another body is a conflict, forever, whatever Temporal has kept of the workflow.

export type KeyScope = 'payment' | 'batch';

/** A merchant's reference for one kind of request, the digest of the request's body, and what it created. */
export interface IdempotencyKey {
  merchantId: string;
  scope: KeyScope;
  reference: string;
  fingerprint: string;
  resourceId: string;
}

/**
 * `taken`: this request is the first with its reference; otherwise the key an earlier request took, `purged` once
 * `records purge` deleted what it created (the key stays: that reference never starts anything again).
 */
export type KeyClaim = { taken: true } | { taken: false; fingerprint: string; resourceId: string; purged: boolean };

/** The key, unless it was taken before: its values are keyValues(key). */
const INSERT_KEY = `INSERT INTO idempotency_keys (merchant_id, scope, reference, fingerprint, resource_id)
  VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`;

/**
 * Takes the key in one transaction with `alongside`, which runs only when the key is new (a batch's items): both are
 * written, or neither. A concurrent request with the same key waits for this one's commit.
 */
export async function takeKey(
  db: Database,
  key: IdempotencyKey,
  alongside?: (client: PoolClient) => Promise<void>,
): Promise<KeyClaim> {
  return inTransaction(db, async (client) => {
    const inserted = await client.query(INSERT_KEY, keyValues(key));
    if (inserted.rowCount === 1) {
      await alongside?.(client);
      return { taken: true };
    }
    return await keptKey(client, key);
  });
}

// The key, and the payment's revision-0 record only when the key is new, in one statement: PostgreSQL runs it as one
// transaction, one round trip where BEGIN, two INSERTs and COMMIT were four. Revision 0 never replaces anything (the
// workflow's own writes, revision 1 on, are newer). The statement's snapshot shows the key only if it was committed
// before the statement began.
const TAKE_PAYMENT_KEY = `
WITH key AS (${INSERT_KEY} RETURNING 1), payment AS (
  INSERT INTO payments
    (id, merchant_id, type, reference, status, amount, batch_id, resource, revision, created_at, updated_at)
  SELECT $6, $1, $7, $3, $8, $9, NULL, $10, 0, $11, $12 WHERE EXISTS (SELECT 1 FROM key)
  ON CONFLICT (id) DO NOTHING
)
SELECT EXISTS (SELECT 1 FROM key) AS taken, k.fingerprint, k.resource_id, k.purged_at IS NOT NULL AS purged
FROM (SELECT 1) AS one
LEFT JOIN idempotency_keys k ON k.merchant_id = $1 AND k.scope = $2 AND k.reference = $3`;

/**
 * Takes a payment's key with its revision-0 record (status `initiating`; its merchant and reference are the key's), as
 * the server creates it before its workflow starts: both are written, or neither, in one statement. A concurrent
 * request with the same key waits for this one's commit.
 */
export async function takePaymentKey(db: Database, key: IdempotencyKey, payment: PaymentResource): Promise<KeyClaim> {
  const { rows } = await db.query<{
    taken: boolean;
    fingerprint: string | null;
    resource_id: string | null;
    purged: boolean;
  }>(TAKE_PAYMENT_KEY, [
    ...keyValues(key),
    payment.id,
    payment.type,
    payment.status,
    payment.amount,
    JSON.stringify(payment),
    payment.created_at,
    payment.updated_at,
  ]);
  const row = rows[0];
  if (row?.taken) return { taken: true };
  if (row?.fingerprint != null && row.resource_id != null) {
    return { taken: false, fingerprint: row.fingerprint, resourceId: row.resource_id, purged: row.purged };
  }
  // Taken by a request that committed while this statement waited for it: a new statement sees it.
  return await keptKey(db, key);
}

/** The key a request took before this one. */
async function keptKey(db: Queryable, key: IdempotencyKey): Promise<KeyClaim> {
  const ids = keyValues(key).slice(0, 3);
  const { rows } = await db.query<{ fingerprint: string; resource_id: string; purged: boolean }>(
    `SELECT fingerprint, resource_id, purged_at IS NOT NULL AS purged FROM idempotency_keys
     WHERE merchant_id = $1 AND scope = $2 AND reference = $3`,
    ids,
  );
  const kept = rows[0];
  if (!kept) throw new Error(`idempotency key ${ids.join('/')} vanished while it was read`);
  return { taken: false, fingerprint: kept.fingerprint, resourceId: kept.resource_id, purged: kept.purged };
}

function keyValues(key: IdempotencyKey): string[] {
  return [key.merchantId, key.scope, key.reference, key.fingerprint, key.resourceId];
}
