import { setMaxListeners } from 'node:events';

/** Timers and sleeps that all stop at once when the sandbox closes. */
export class Timers {
  private readonly pending = new Set<NodeJS.Timeout>();
  private readonly sleepers = new Set<() => void>();
  private readonly controller = new AbortController();

  constructor(private readonly onError: (error: unknown) => void) {
    // Every callback in flight listens to it: hundreds at once under load are expected, not a leak.
    setMaxListeners(0, this.controller.signal);
  }

  /** Aborted when the sandbox closes; in-flight callback requests listen to it. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get closed(): boolean {
    return this.controller.signal.aborted;
  }

  /** Runs a task after `ms` unless closed first; its failure goes to the error handler. */
  after(ms: number, task: () => Promise<void> | void): void {
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      try {
        const result = task();
        if (result) result.catch(this.onError);
      } catch (error) {
        this.onError(error);
      }
    }, ms);
    this.pending.add(timer);
  }

  /** Resolves after `ms`, or as soon as the sandbox closes. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      const wake = (): void => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }

  close(): void {
    this.controller.abort();
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
    for (const wake of [...this.sleepers]) wake();
  }
}
