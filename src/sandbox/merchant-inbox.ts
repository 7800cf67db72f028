import { z } from 'zod';

/** How the sandbox's merchant answers notifications: 2xx, an error status, no answer in time, or 410 Gone. */
export const receiverModeSchema = z.strictObject({
  mode: z.enum(['ok', 'fail', 'timeout', 'gone']),
  /** The status `fail` answers (default 500). */
  status: z.number().int().min(300).max(599).optional(),
  /** Only the next this many notifications; then `ok` again. */
  times: z.number().int().min(1).max(10_000).optional(),
});
export type ReceiverMode = z.infer<typeof receiverModeSchema>;

/** One notification as the sandbox's merchant received it. */
export interface ReceivedNotification {
  received_at: string;
  /** Whether the signatures verified with the sandbox's secrets: Standard Webhooks' and `Payments-Signature`, each sent (300 s tolerance). */
  verified: boolean;
  verification_error: string | null;
  event_id: string | null;
  type: string | null;
  /** What it answered: a status, or `timeout` when it held the request unanswered. */
  answered: number | 'timeout';
  idempotency_key: string | null;
  /** The Standard Webhooks `webhook-id` header (the event id), when the delivery carried one. */
  webhook_id: string | null;
  event: unknown;
}

/** What the merchant side keeps: the last notifications received and the current answer mode. */
const MAX_KEPT = 2000;

/** The sandbox's merchant: what it received, and how it answers next. */
export class MerchantInbox {
  private readonly received: ReceivedNotification[] = [];
  private mode: ReceiverMode = { mode: 'ok' };

  /** The answer for the next notification (counting down a `times` mode). */
  nextAnswer(): ReceiverMode {
    const current = this.mode;
    if (current.times !== undefined) {
      this.mode = current.times > 1 ? { ...current, times: current.times - 1 } : { mode: 'ok' };
    }
    return current;
  }

  setMode(mode: ReceiverMode): void {
    this.mode = mode;
  }

  currentMode(): ReceiverMode {
    return this.mode;
  }

  record(entry: ReceivedNotification): void {
    this.received.push(entry);
    if (this.received.length > MAX_KEPT) this.received.shift();
  }

  list(): ReceivedNotification[] {
    return [...this.received];
  }

  clear(): void {
    this.received.length = 0;
  }
}
