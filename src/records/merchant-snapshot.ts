import type { Database } from './database';
import { listenOn } from './listen-channel';
import { MERCHANT_CHANNEL } from './merchant-key-records';

/**
 * A copy of merchant data (keys, endpoints) that reads synchronously: loaded at start, loaded again as soon as a
 * change is announced on MERCHANT_CHANNEL (any process: server, CLI), and at least every `maxAgeMs` in case an
 * announcement was missed (no connection to listen on). While PostgreSQL cannot be read, the last copy stands.
 */
export class MerchantSnapshot<T> {
  private current: T;
  private loadedAt = 0;
  private reloading: Promise<void> | undefined;
  private dirty = false;
  private unlisten: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Database,
    private readonly load: (db: Database) => Promise<T>,
    empty: T,
    private readonly options: { maxAgeMs: number; onError?: (err: unknown) => void },
  ) {
    this.current = empty;
  }

  /** The copy as last loaded. */
  get value(): T {
    return this.current;
  }

  /** Loads the copy and starts listening for changes and reloading it. */
  async start(): Promise<void> {
    await this.reload().catch((err: unknown) => this.options.onError?.(err));
    this.timer = setInterval(
      () => {
        if (Date.now() - this.loadedAt >= this.options.maxAgeMs) void this.reload().catch(this.reportError);
        if (!this.unlisten) void this.listen().catch(this.reportError);
      },
      Math.max(50, Math.floor(this.options.maxAgeMs / 2)),
    );
    this.timer.unref();
    await this.listen().catch(this.reportError);
  }

  /** Loads the copy again now (after a change this process made: it holds before the answer goes out). */
  async reload(): Promise<void> {
    if (this.reloading) {
      // A load under way may have read before the change: load once more after it.
      this.dirty = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      try {
        do {
          this.dirty = false;
          const startedAt = Date.now();
          this.current = await this.load(this.db);
          this.loadedAt = startedAt;
        } while (this.dirty);
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  /** Stops listening and reloading. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.unlisten?.();
  }

  private readonly reportError = (err: unknown) => this.options.onError?.(err);

  private async listen(): Promise<void> {
    if (this.unlisten) return;
    this.unlisten = await listenOn(
      this.db,
      MERCHANT_CHANNEL,
      () => void this.reload().catch(this.reportError),
      () => (this.unlisten = undefined),
    );
    // A change announced before LISTEN took hold is read now.
    await this.reload();
  }
}
