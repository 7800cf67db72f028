import { CancellationScope, condition, sleep } from '@temporalio/workflow';

/** A timer for a wait's deadline: waits end on it (`until`) unless woken before; cancelled, it never fires. */
export class DeadlineTimer {
  private readonly scope = new CancellationScope();
  private fired = false;

  constructor(ms: number, summary: string) {
    // Its rejection when cancelled is no news: `fired` stays false.
    this.scope
      .run(() => sleep(ms, { summary }))
      .then(
        () => (this.fired = true),
        () => undefined,
      );
  }

  /** Resolves true once `woken` holds, false once the deadline passes first. */
  async until(woken: () => boolean): Promise<boolean> {
    await condition(() => this.fired || woken());
    return !this.fired;
  }

  /** Calls the timer off: it never fires. */
  cancel(): void {
    this.scope.cancel();
  }
}
