import { waitUntil } from './wait-until';

export interface EventuallyOptions {
  timeoutMs: number;
  /** What is waited for, as the failure names it: "payment x succeeded", "the batch cancelled". */
  what: string;
  intervalMs?: number;
  /** Checked before each try: a reason to give up now (the process being waited for exited). */
  stopIf?: () => Error | undefined;
}

/**
 * Retries `check` until it passes (returns without throwing, and not `false`) and answers what it returned; once
 * `timeoutMs` is up it fails naming `what` and the last try's failure (its error, or the value it was not yet).
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  options: EventuallyOptions,
): Promise<Exclude<T, false>> {
  const passed = await waitUntil(
    async () => {
      const value = await check();
      if (value === false) throw new Error('the check answered false');
      return { value: value as Exclude<T, false> };
    },
    {
      timeoutMs: options.timeoutMs,
      intervalMs: options.intervalMs,
      stopIf: options.stopIf,
      timedOut: (lastError) =>
        new Error(`${options.what}: not within ${options.timeoutMs} ms; last try: ${describe(lastError)}`, {
          cause: lastError,
        }),
    },
  );
  return passed.value;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
