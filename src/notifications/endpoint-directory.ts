import type { NotificationType } from '../domain/notification';
import type { Database } from '../records/database';
import { loadEnabledEndpoints } from '../records/merchant-endpoint-records';
import { MerchantSnapshot } from '../records/merchant-snapshot';
import type { MerchantWebhook } from './webhook-post';

/** An enabled endpoint of PostgreSQL as a relay holds it. */
interface StoredEndpoint extends MerchantWebhook {
  id: string;
  eventTypes: ReadonlySet<string> | null;
  /** Events from before it was added are not its own. */
  createdAt: number;
}

/** How often the endpoints are read again when no change was heard (a missed NOTIFY). */
const MAX_AGE_MS = 5_000;

/**
 * Where each merchant's notifications go: its entry of MERCHANT_WEBHOOKS (every event type), and its enabled
 * endpoints in PostgreSQL (the event types each takes), followed as they change, without a restart.
 */
export class EndpointDirectory {
  private readonly snapshot: MerchantSnapshot<ReadonlyMap<string, StoredEndpoint[]>>;

  constructor(
    db: Database,
    private readonly fromEnvironment: ReadonlyMap<string, MerchantWebhook>,
    onError?: (err: unknown) => void,
  ) {
    this.snapshot = new MerchantSnapshot(db, loadEndpoints, new Map(), { maxAgeMs: MAX_AGE_MS, onError });
  }

  /** The merchants with somewhere to send to. */
  merchants(): string[] {
    return [...new Set([...this.fromEnvironment.keys(), ...this.snapshot.value.keys()])];
  }

  /** Where an event goes: every endpoint of its merchant that takes its type and existed when it happened. */
  targets(event: { merchant_id: string; type: NotificationType; created_at: string }): MerchantWebhook[] {
    const happenedAt = Date.parse(event.created_at);
    const stored = (this.snapshot.value.get(event.merchant_id) ?? []).filter(
      (e) => (e.eventTypes === null || e.eventTypes.has(event.type)) && e.createdAt <= happenedAt,
    );
    const configured = this.fromEnvironment.get(event.merchant_id);
    return [...(configured ? [configured] : []), ...stored];
  }

  /** Loads the endpoints and follows their changes. */
  start(): Promise<void> {
    return this.snapshot.start();
  }

  /** Stops following changes. */
  stop(): void {
    this.snapshot.stop();
  }
}

async function loadEndpoints(db: Database): Promise<ReadonlyMap<string, StoredEndpoint[]>> {
  const byMerchant = new Map<string, StoredEndpoint[]>();
  for (const row of await loadEnabledEndpoints(db)) {
    if (row.secrets.length === 0) continue;
    const list = byMerchant.get(row.merchant_id) ?? [];
    list.push({
      id: row.id,
      url: row.url,
      secrets: row.secrets.map((s) => s.secret),
      eventTypes: row.event_types ? new Set(row.event_types) : null,
      createdAt: row.created_at.getTime(),
    });
    byMerchant.set(row.merchant_id, list);
  }
  return byMerchant;
}
