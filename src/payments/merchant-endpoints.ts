import { randomBytes } from 'node:crypto';
import type { NotificationType } from '../domain/notification';
import type { WebhookEndpointResource } from '../domain/merchant-resources';
import type { Database } from '../records/database';
import {
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  rollEndpointSecret,
  updateEndpoint,
} from '../records/merchant-endpoint-records';
import type { EndpointRow } from '../records/merchant-endpoint-records';
import { newWebhookSecret } from '../crypto/webhook-secrets';
import { AppError } from './app-errors';

/**
 * A merchant's notification endpoints: add one (its secret answered once), list them, change the URL or the event
 * types it takes, roll its secret (the old one keeps signing for an overlap), disable or enable it. The relays read
 * the change as PostgreSQL announces it.
 */
export class MerchantEndpoints {
  constructor(private readonly db: Database) {}

  /** Adds an endpoint; answers it with its secret. */
  async create(
    merchantId: string,
    input: { url: string; eventTypes: NotificationType[] | null },
  ): Promise<{ endpoint: WebhookEndpointResource; secret: string }> {
    const secret = newWebhookSecret();
    const id = `we_${randomBytes(9).toString('base64url')}`;
    const row = await insertEndpoint(this.db, { id, merchantId, url: input.url, eventTypes: input.eventTypes, secret });
    return { endpoint: endpointResource(row), secret };
  }

  /** The merchant's endpoints, oldest first. */
  async list(merchantId: string): Promise<WebhookEndpointResource[]> {
    return (await listEndpoints(this.db, merchantId)).map(endpointResource);
  }

  /** Changes an endpoint's URL or event types (null: every type). */
  async update(
    merchantId: string,
    id: string,
    change: { url?: string; eventTypes?: NotificationType[] | null; status?: 'enabled' | 'disabled' },
  ): Promise<WebhookEndpointResource> {
    if (!(await updateEndpoint(this.db, merchantId, id, change))) throw notFound(id);
    return this.get(merchantId, id);
  }

  /** A new secret for the endpoint; the others keep signing for `overlapMs`. */
  async rollSecret(
    merchantId: string,
    id: string,
    overlapMs: number,
  ): Promise<{ endpoint: WebhookEndpointResource; secret: string }> {
    const secret = newWebhookSecret();
    if (!(await rollEndpointSecret(this.db, merchantId, id, secret, overlapMs))) throw notFound(id);
    return { endpoint: await this.get(merchantId, id), secret };
  }

  private async get(merchantId: string, id: string): Promise<WebhookEndpointResource> {
    const row = await findEndpoint(this.db, merchantId, id);
    if (!row) throw notFound(id);
    return endpointResource(row);
  }
}

function notFound(id: string): AppError {
  return new AppError('not_found', `no webhook endpoint ${id}`);
}

function endpointResource(row: EndpointRow): WebhookEndpointResource {
  return {
    id: row.id,
    url: row.url,
    event_types: row.event_types as NotificationType[] | null,
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    // Enough to tell which secret a receiver holds, never enough to sign.
    secrets: row.secrets.map((s) => ({
      prefix: `${s.secret.slice(0, 10)}…`,
      expires_at: s.expires_at?.toISOString() ?? null,
    })),
  };
}
