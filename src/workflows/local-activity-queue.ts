/**
 * Runs a workflow's local activities one at a time, in the order asked. Two chains of local activities running side by
 * side (record writes, notification hand-offs) are not replayable: a first run sees them complete in wall-clock order,
 * a replay in the order they were scheduled, and the next commands then come in another order (seen with SDK 1.24; see
 * temporalio/sdk-python#1578 for the same in another core-based SDK).
 */
export class LocalActivityQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `work` once everything queued before it has finished (or failed). */
  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
