import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Checked before each try: a reason to give up now (the process being waited for exited). */
  stopIf?: () => Error | undefined;
  /** The error thrown once the time is up, given the last try's failure; it may clean up first. */
  timedOut: (lastError: unknown) => Error | Promise<Error>;
}

/** Tries `probe` until it answers a value, the time is up, or `stopIf` gives a reason to stop: every launcher's wait. */
export async function waitUntil<T>(probe: () => Promise<T | undefined>, options: WaitOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const stop = options.stopIf?.();
    if (stop) throw stop;
    let lastError: unknown;
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw await options.timedOut(lastError);
    await sleep(options.intervalMs ?? 250);
  }
}
