import { randomUUID } from 'node:crypto';
import { isTerminal } from '../domain/payment-model';
import type { PaymentResource, ProviderCallback } from '../domain/payment-model';
import { withLateCallback } from '../domain/payment-events';
import { inTransaction } from './database';
import type { Database } from './database';
import { insertEvents } from './notification-outbox';

/**
 * Records a callback that came after the payment's workflow closed on its settled record, as the workflow would have
 * (domain/payment-events.ts), with its notification in the same transaction. The workflow never writes again, so the
 * change takes the next revision at the record's own time: a run a Reset starts later still writes over it. False
 * when there is no settled record to add it to.
 */
export async function recordLateCallback(
  db: Database,
  paymentId: string,
  callback: ProviderCallback,
  now = new Date(),
): Promise<boolean> {
  return inTransaction(db, async (client) => {
    const { rows } = await client.query<{ merchant_id: string; resource: PaymentResource }>(
      'SELECT merchant_id, resource FROM payments WHERE id = $1 FOR UPDATE',
      [paymentId],
    );
    const row = rows[0];
    if (!row || !isTerminal(row.resource.status)) return false;
    const { payment, notification } = withLateCallback(row.resource, row.merchant_id, callback, now, randomUUID);
    await client.query('UPDATE payments SET resource = $2, updated_at = $3, revision = revision + 1 WHERE id = $1', [
      paymentId,
      JSON.stringify(payment),
      payment.updated_at,
    ]);
    if (notification) await insertEvents(client, paymentId, [notification]);
    return true;
  });
}
