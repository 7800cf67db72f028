import type { Bank } from '../domain/bank';

export interface BankDirectoryOptions {
  /** Fetches the provider's current list. */
  load: () => Promise<Bank[]>;
  /** How long a fetched list is used before it is fetched again. */
  refreshMs: number;
  now?: () => number;
  /** Told about a failed refresh; the previous list stays in use. */
  onRefreshFailed?: (err: unknown) => void;
}

const FAILED_REFRESH_RETRY_MS = 30_000;

/** The provider's supported banks, cached: fetched on first use, refreshed when older than `refreshMs`. */
export class BankDirectory {
  private codes: ReadonlySet<string> | undefined;
  private freshUntil = 0;
  private inFlight: Promise<ReadonlySet<string>> | undefined;
  private readonly now: () => number;

  constructor(private readonly options: BankDirectoryOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The supported bank codes; a failed refresh falls back to the last list, and throws only when there is none. */
  async knownCodes(): Promise<ReadonlySet<string>> {
    if (this.codes && this.now() < this.freshUntil) return this.codes;
    this.inFlight ??= this.refresh().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async refresh(): Promise<ReadonlySet<string>> {
    try {
      const banks = await this.options.load();
      this.codes = new Set(banks.map((bank) => bank.code));
      this.freshUntil = this.now() + this.options.refreshMs;
      return this.codes;
    } catch (err) {
      if (!this.codes) throw err;
      this.options.onRefreshFailed?.(err);
      // Keep serving the last list, and ask the provider again a little later rather than on every request.
      this.freshUntil = this.now() + Math.min(FAILED_REFRESH_RETRY_MS, this.options.refreshMs);
      return this.codes;
    }
  }
}
