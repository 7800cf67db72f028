import type { PoolClient } from 'pg';
import type { PaymentResource } from '../domain/payment-model';
import { inTransaction } from './database';
import type { Database } from './database';

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

/**
 * Takes the key in one transaction with `alongside`, which runs only when the key is new (the payment's revision-0
 * record): both are written, or neither. A concurrent request with the same key waits for this one's commit.
 */
export async function takeKey(
  db: Database,
  key: IdempotencyKey,
  alongside?: (client: PoolClient) => Promise<void>,
): Promise<KeyClaim> {
  return inTransaction(db, async (client) => {
    const ids = [key.merchantId, key.scope, key.reference];
    const inserted = await client.query(
      `INSERT INTO idempotency_keys (merchant_id, scope, reference, fingerprint, resource_id)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
      [...ids, key.fingerprint, key.resourceId],
    );
    if (inserted.rowCount === 1) {
      await alongside?.(client);
      return { taken: true };
    }
    const { rows } = await client.query<{ fingerprint: string; resource_id: string; purged: boolean }>(
      `SELECT fingerprint, resource_id, purged_at IS NOT NULL AS purged FROM idempotency_keys
       WHERE merchant_id = $1 AND scope = $2 AND reference = $3`,
      ids,
    );
    const kept = rows[0];
    if (!kept) throw new Error(`idempotency key ${ids.join('/')} vanished while it was read`);
    return { taken: false, fingerprint: kept.fingerprint, resourceId: kept.resource_id, purged: kept.purged };
  });
}

/** Inserts a payment's revision-0 record (status `initiating`), as the server creates it before its workflow starts. */
export async function insertNewPayment(
  client: PoolClient,
  merchantId: string,
  payment: PaymentResource,
  batchId?: string,
): Promise<void> {
  // Revision 0 never replaces anything: the workflow's own writes (revision 1 on) are newer.
  await client.query(
    `INSERT INTO payments
       (id, merchant_id, type, reference, status, amount, batch_id, resource, revision, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9, $10)
     ON CONFLICT (id) DO NOTHING`,
    [
      payment.id,
      merchantId,
      payment.type,
      payment.reference,
      payment.status,
      payment.amount,
      batchId ?? null,
      JSON.stringify(payment),
      payment.created_at,
      payment.updated_at,
    ],
  );
}
