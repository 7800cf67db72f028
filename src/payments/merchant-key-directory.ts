import type { Database } from '../records/database';
import { loadLiveApiKeys, recordBootstrapMerchants } from '../records/merchant-key-records';
import { MerchantSnapshot } from '../records/merchant-snapshot';

/** A stored key as the server checks it. */
export interface StoredKey {
  merchantId: string;
  digest: Buffer;
  /** Past it, refused (ms since the epoch); undefined: no end. */
  expiresAt?: number;
}

/** How often the keys are read again when no change was heard (a missed NOTIFY). */
const MAX_AGE_MS = 5_000;

/**
 * The merchants' keys stored in PostgreSQL, by key id, held in memory: a change (a new merchant, a roll, a revoke)
 * is read again as PostgreSQL announces it, so it applies on every server without a restart.
 */
export class MerchantKeyDirectory {
  private readonly snapshot: MerchantSnapshot<ReadonlyMap<string, StoredKey>>;

  /** `bootstrap`: the merchants of MERCHANT_API_KEYS, recorded (source `env`) at the first load that can. */
  constructor(db: Database, options: { bootstrap?: readonly string[]; onError?: (err: unknown) => void } = {}) {
    let recorded = false;
    const load = async (database: Database) => {
      if (!recorded) await recordBootstrapMerchants(database, options.bootstrap ?? []);
      recorded = true;
      return loadKeys(database);
    };
    this.snapshot = new MerchantSnapshot(db, load, new Map(), { maxAgeMs: MAX_AGE_MS, onError: options.onError });
  }

  /** The stored key with this id, if it has not been revoked (expiry is the caller's check). */
  find(id: string): StoredKey | undefined {
    return this.snapshot.value.get(id);
  }

  /** Loads the keys and follows their changes. */
  start(): Promise<void> {
    return this.snapshot.start();
  }

  /** Reads the keys again now (after a change made here). */
  reload(): Promise<void> {
    return this.snapshot.reload();
  }

  /** Stops following changes. */
  stop(): void {
    this.snapshot.stop();
  }
}

async function loadKeys(db: Database): Promise<ReadonlyMap<string, StoredKey>> {
  const rows = await loadLiveApiKeys(db);
  return new Map(
    rows.map((row) => [
      row.id,
      { merchantId: row.merchant_id, digest: row.digest, expiresAt: row.expires_at?.getTime() },
    ]),
  );
}
