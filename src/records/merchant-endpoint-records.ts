import type { Database } from './database';
import { inTransaction } from './database';
import { announceMerchantChange } from './merchant-key-records';

// Merchants' notification endpoints and their signing secrets (migrations/007_merchants.sql).

/** An endpoint as recorded, with the secrets that sign for it now (newest first). */
export interface EndpointRow {
  id: string;
  merchant_id: string;
  url: string;
  event_types: string[] | null;
  status: 'enabled' | 'disabled';
  created_at: Date;
  updated_at: Date;
  secrets: { secret: string; expires_at: Date | null }[];
}

const SELECT_ENDPOINTS = `
SELECT e.id, e.merchant_id, e.url, e.event_types, e.status, e.created_at, e.updated_at,
  COALESCE((SELECT json_agg(json_build_object('secret', s.secret, 'expires_at', s.expires_at) ORDER BY s.created_at DESC)
            FROM webhook_endpoint_secrets s
            WHERE s.endpoint_id = e.id AND (s.expires_at IS NULL OR s.expires_at > now())), '[]') AS secrets
FROM webhook_endpoints e`;

type RawRow = Omit<EndpointRow, 'secrets'> & { secrets: { secret: string; expires_at: string | null }[] };

function endpoint(row: RawRow): EndpointRow {
  return {
    ...row,
    secrets: row.secrets.map((s) => ({ secret: s.secret, expires_at: s.expires_at ? new Date(s.expires_at) : null })),
  };
}

/** Records a merchant's new endpoint with its first secret. */
export async function insertEndpoint(
  db: Database,
  e: { id: string; merchantId: string; url: string; eventTypes: string[] | null; secret: string },
): Promise<EndpointRow> {
  await inTransaction(db, async (client) => {
    await client.query(`INSERT INTO webhook_endpoints (id, merchant_id, url, event_types) VALUES ($1, $2, $3, $4)`, [
      e.id,
      e.merchantId,
      e.url,
      e.eventTypes,
    ]);
    await client.query(`INSERT INTO webhook_endpoint_secrets (endpoint_id, secret) VALUES ($1, $2)`, [e.id, e.secret]);
    await announceMerchantChange(client);
  });
  const found = await findEndpoint(db, e.merchantId, e.id);
  if (!found) throw new Error(`endpoint ${e.id} vanished right after it was recorded`);
  return found;
}

/** A merchant's endpoint, or undefined when it has none by that id. */
export async function findEndpoint(db: Database, merchantId: string, id: string): Promise<EndpointRow | undefined> {
  const { rows } = await db.query<RawRow>(`${SELECT_ENDPOINTS} WHERE e.merchant_id = $1 AND e.id = $2`, [
    merchantId,
    id,
  ]);
  return rows[0] ? endpoint(rows[0]) : undefined;
}

/** A merchant's endpoints, oldest first. */
export async function listEndpoints(db: Database, merchantId: string): Promise<EndpointRow[]> {
  const { rows } = await db.query<RawRow>(`${SELECT_ENDPOINTS} WHERE e.merchant_id = $1 ORDER BY e.created_at, e.id`, [
    merchantId,
  ]);
  return rows.map(endpoint);
}

/** Every enabled endpoint, for the relays. */
export async function loadEnabledEndpoints(db: Database): Promise<EndpointRow[]> {
  const { rows } = await db.query<RawRow>(`${SELECT_ENDPOINTS} WHERE e.status = 'enabled' ORDER BY e.created_at, e.id`);
  return rows.map(endpoint);
}

/** Changes an endpoint's URL, event types or status; false when the merchant has no such endpoint. */
export async function updateEndpoint(
  db: Database,
  merchantId: string,
  id: string,
  change: { url?: string; eventTypes?: string[] | null; status?: 'enabled' | 'disabled' },
): Promise<boolean> {
  return inTransaction(db, async (client) => {
    const { rowCount } = await client.query(
      `UPDATE webhook_endpoints
       SET url = COALESCE($3, url),
           event_types = CASE WHEN $4 THEN $5::text[] ELSE event_types END,
           status = COALESCE($6, status),
           updated_at = now()
       WHERE merchant_id = $1 AND id = $2`,
      [
        merchantId,
        id,
        change.url ?? null,
        change.eventTypes !== undefined,
        change.eventTypes ?? null,
        change.status ?? null,
      ],
    );
    if (rowCount === 1) await announceMerchantChange(client);
    return rowCount === 1;
  });
}

/** Adds an endpoint's new secret; its other secrets keep signing for `overlapMs` more; false without the endpoint. */
export async function rollEndpointSecret(
  db: Database,
  merchantId: string,
  id: string,
  secret: string,
  overlapMs: number,
): Promise<boolean> {
  return inTransaction(db, async (client) => {
    const found = await client.query(`SELECT 1 FROM webhook_endpoints WHERE merchant_id = $1 AND id = $2 FOR UPDATE`, [
      merchantId,
      id,
    ]);
    if (found.rowCount !== 1) return false;
    await client.query(
      `UPDATE webhook_endpoint_secrets
       SET expires_at = LEAST(COALESCE(expires_at, now() + $2 * interval '1 millisecond'),
                              now() + $2 * interval '1 millisecond')
       WHERE endpoint_id = $1`,
      [id, overlapMs],
    );
    await client.query(`INSERT INTO webhook_endpoint_secrets (endpoint_id, secret) VALUES ($1, $2)`, [id, secret]);
    await announceMerchantChange(client);
    return true;
  });
}

/** What an event that no enabled endpoint takes is left with (`stopped`, no attempt recorded). */
export const NOT_SUBSCRIBED = 'not_subscribed';

/** Sets a claimed event aside, unsent: none of its merchant's endpoints takes its type. */
export async function setAsideEvent(db: Database, eventId: string, attempt: number): Promise<void> {
  await db.query(
    `UPDATE notification_events
     SET status = 'stopped', attempts = attempts - 1, lease_until = NULL, finished_at = now(), last_error = $3
     WHERE id = $1 AND status = 'delivering' AND attempts = $2`,
    [eventId, attempt, NOT_SUBSCRIBED],
  );
}
