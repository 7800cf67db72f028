import { callbackPayload, deliverCallback } from './callbacks';
import { plannedOutcomes, THREE_DS_DECLINED_MESSAGE, type PlannedOutcome } from './scenarios';
import type { CallbackRecord, SandboxTransaction, TransactionStore } from './store';
import type { Timers } from './timers';

/** First try plus five retries. */
const MAX_ATTEMPTS = 6;

export type ThreeDsDecision = 'approve' | 'decline';

/** Moves transactions through their scenario: status changes, callbacks with retries, 3-D Secure. */
export class Lifecycle {
  constructor(
    private readonly store: TransactionStore,
    private readonly timers: Timers,
    private delayMs: number,
    private readonly auto3ds: ThreeDsDecision | undefined,
  ) {}

  /** Changes the callback delay of transactions started from now on (the benchmark's phases differ). */
  setDelay(ms: number): void {
    this.delayMs = ms;
  }

  /** Sets a new transaction going; resolves once a callback-first scenario has made its first delivery attempt. */
  async begin(transaction: SandboxTransaction): Promise<void> {
    if (transaction.scenario === 'callback_first') {
      if (transaction.type === 'card') transaction.three_ds = 'skipped';
      for (const record of this.plan(transaction, plannedOutcomes(transaction.scenario))) {
        await this.fire(transaction, record);
      }
      return;
    }
    if (transaction.type === 'card') {
      this.scheduleAuto3ds(transaction);
      return;
    }
    this.schedule(transaction, plannedOutcomes(transaction.scenario));
  }

  /** Settles a card's pending 3-D Secure step; false when it was not pending. */
  settleThreeDs(transaction: SandboxTransaction, decision: ThreeDsDecision): boolean {
    if (transaction.three_ds !== 'pending') return false;
    transaction.three_ds = decision === 'approve' ? 'approved' : 'declined';
    transaction.updated_at = new Date().toISOString();
    const outcomes: PlannedOutcome[] =
      decision === 'approve'
        ? plannedOutcomes(transaction.scenario)
        : [{ status: '0', message: THREE_DS_DECLINED_MESSAGE, notify: true, afterDelays: 1 }];
    this.schedule(transaction, outcomes);
    return true;
  }

  /** Picks up, after a restart, every outcome still due and every 3-D Secure step auto3ds should settle. */
  resume(): void {
    for (const transaction of this.store.list()) {
      for (const record of transaction.callbacks) {
        if (record.state === 'scheduled') this.timeRecord(transaction, record);
      }
      if (transaction.three_ds === 'pending') this.scheduleAuto3ds(transaction);
    }
  }

  private scheduleAuto3ds(transaction: SandboxTransaction): void {
    const decision = this.auto3ds;
    if (!decision) return;
    const wait = Math.max(0, Date.parse(transaction.created_at) + this.delayMs - Date.now());
    this.timers.after(wait, () => {
      this.settleThreeDs(transaction, decision);
    });
  }

  private schedule(transaction: SandboxTransaction, outcomes: PlannedOutcome[]): void {
    for (const record of this.plan(transaction, outcomes)) this.timeRecord(transaction, record);
  }

  private plan(transaction: SandboxTransaction, outcomes: PlannedOutcome[]): CallbackRecord[] {
    const now = Date.now();
    const records = outcomes.map((outcome): CallbackRecord => ({
      status: outcome.status,
      message: outcome.message,
      notify: outcome.notify,
      due_at: new Date(now + outcome.afterDelays * this.delayMs).toISOString(),
      applied: false,
      state: 'scheduled',
      attempts: 0,
      last_error: null,
      delivered_at: null,
    }));
    transaction.callbacks.push(...records);
    this.store.save();
    return records;
  }

  private timeRecord(transaction: SandboxTransaction, record: CallbackRecord): void {
    const wait = Math.max(0, Date.parse(record.due_at) - Date.now());
    this.timers.after(wait, () => this.fire(transaction, record));
  }

  /** Applies an outcome to the transaction, then makes one delivery attempt and plans the retry if it failed. */
  private async fire(transaction: SandboxTransaction, record: CallbackRecord): Promise<void> {
    if (this.timers.closed || record.state !== 'scheduled') return;
    if (!record.applied) {
      transaction.status = record.status;
      transaction.message = record.message;
      transaction.updated_at = new Date().toISOString();
      record.applied = true;
    }
    const url = transaction.callback_url;
    if (!record.notify || !url) {
      record.state = 'not_sent';
      this.store.save();
      return;
    }
    this.store.save();
    const problem = await deliverCallback(url, callbackPayload(transaction, record), this.timers.signal);
    // An attempt cut short by close() is not counted: the record stays due and a restart delivers it.
    if (this.timers.closed) return;
    record.attempts += 1;
    if (problem === undefined) {
      record.state = 'delivered';
      record.delivered_at = new Date().toISOString();
      record.last_error = null;
    } else if (record.attempts >= MAX_ATTEMPTS) {
      record.state = 'failed';
      record.last_error = problem;
    } else {
      record.last_error = problem;
      record.due_at = new Date(Date.now() + this.delayMs * 2 ** (record.attempts - 1)).toISOString();
      this.timeRecord(transaction, record);
    }
    this.store.save();
  }
}
