import type { BatchItemOrder, PaymentResource, PaymentTiming } from './payment-model';
import { isSigned, messageRefusal } from './signed';
import type { MessageTarget, Signed } from './signed';
import type { z } from 'zod';
import type { BatchProgressShape, tallySchema } from './api-resources';
import type { HaltRules } from './halt-watch';

// Plain values only (no zod at run time): the workflow bundle imports this module; the API's types come as types.

/**
 * `needs_review`: its workflow ended (terminated…) before it finished; its started items run on as payments.
 * `scheduled` waits for `starts_at`, `awaiting_approval` for its operators; `rejected` and `expired` sent nothing.
 */
export type BatchStatus =
  | 'scheduled'
  | 'awaiting_approval'
  | 'running'
  | 'paused'
  | 'cancelling'
  | 'completed'
  | 'cancelled'
  | 'rejected'
  | 'expired'
  | 'needs_review';
export const BATCH_STATUSES = [
  'scheduled',
  'awaiting_approval',
  'running',
  'paused',
  'cancelling',
  'completed',
  'cancelled',
  'rejected',
  'expired',
  'needs_review',
] as const satisfies readonly BatchStatus[];
export type BatchAction = 'pause' | 'resume' | 'cancel';
export const BATCH_ACTIONS = ['pause', 'resume', 'cancel'] as const satisfies readonly BatchAction[];

/** A pause, resume or cancel and who asks for it: an operator by name, or (no `operator`) the batch's merchant. */
export interface BatchControl {
  action: BatchAction;
  operator?: string;
}

/** Who a batch's pause names when its merchant paused it (an operator's pause names the operator). */
export const MERCHANT_PAUSE = 'merchant';
/** Who a batch's pause names when it halted itself: an operator's hold, which only an operator resumes. */
export const SYSTEM_PAUSE = 'system';

/** Where an item stands, as the batch counts it: `needs_review` ends an item for the batch, not for the payment. */
export type ItemOutcome = 'succeeded' | 'failed' | 'needs_review';
export type ItemStage = 'not_started' | 'in_flight' | ItemOutcome;
export const ITEM_STAGES = [
  'not_started',
  'in_flight',
  'succeeded',
  'failed',
  'needs_review',
] as const satisfies readonly ItemStage[];

/** One bank credit of a batch, signed for its own payment workflow: what the records hold and the batch starts. */
export type BatchItem = Signed<BatchItemOrder>;

/** What the batch workflow is started with; the items themselves wait in the records (`batch_items`), never here. */
export interface BatchInput {
  batchId: string;
  merchantId: string;
  reference: string;
  createdAt: string;
  itemCount: number;
  totalMinor: number;
  /** Items the batch reads from the records at a time, and so holds at most: the rest wait in PostgreSQL. */
  pageSize: number;
  concurrency: number;
  timing: PaymentTiming;
  /** History length at which a run continues as new. */
  maxRunEvents: number;
  /** How often the batch asks after items in flight that have not reported. */
  itemCheckMs: number;
  /** When the batch halts itself; absent in a batch started before the halt rules (it never halts). */
  halt?: HaltRules;
  /** When its items may start (`scheduled_at`); absent: at once. */
  startsAt?: string;
  /** How many distinct operators must approve it before it starts (domain/approval-rules.ts); absent: none. */
  approvalsRequired?: number;
  /** How long after `startsAt` (or its creation) it waits for its approvals before it expires. */
  approvalWindowMs?: number;
  /** The merchant's metadata, answered with the batch; absent when none. */
  metadata?: Record<string, string>;
}

/** Whether a failure is about the item itself or about the provider as a whole (authentication, 5xx, unreachable). */
export type FailureKind = 'item' | 'provider';

/**
 * An item payment's report to its batch: its outcome, or `in_flight` for an item still on its way whose initiation met
 * a provider-wide error (only the halt watch counts that). `failure`: a failed item's, or that error's, code and kind.
 */
export interface ItemSettled {
  paymentId: string;
  status: ItemOutcome | 'in_flight';
  failure?: { code: string; kind: FailureKind };
}

/**
 * How a batch asks an item to report, the item's second start argument: `result` returns its outcome, signed, as the
 * workflow's result instead of signalling it (one signal, its delivery and one workflow task fewer per item).
 */
export interface ItemReporting {
  outcome: 'result';
}

/** What a payment workflow returns: the payment, or a batch item's signed outcome when its batch asked for that. */
export type PaymentResult = PaymentResource | Signed<ItemSettled>;

/** The payment a workflow returned; a batch item's that returned its outcome (ItemReporting) has none to give. */
export function returnedPayment(result: PaymentResult): PaymentResource {
  if (isSigned(result)) throw new Error('this batch item returned its outcome to its batch, not the payment');
  return result;
}

/**
 * Why an item's result is no outcome report for batch `target` about item `paymentId` (unsigned, signed for another
 * batch or purpose, or about another item); undefined when the batch may count it.
 */
export function itemResultRefusal(result: unknown, paymentId: string, target: MessageTarget): string | undefined {
  const refusal = messageRefusal(result, 'batch-item-report', target);
  if (refusal) return refusal;
  const reported = (result as Signed<ItemSettled>).body.paymentId;
  return reported === paymentId ? undefined : `it reports ${reported}, not ${paymentId}`;
}

export type Tally = z.infer<typeof tallySchema>;

/** A batch as the API and the CLI show it (schema: domain/api-resources.ts). */
export type BatchProgress = BatchProgressShape;

/** True once the batch will start nothing more and has nothing in flight. */
export function isBatchClosed(status: BatchStatus): boolean {
  return (
    status === 'completed' ||
    status === 'cancelled' ||
    status === 'rejected' ||
    status === 'expired' ||
    status === 'needs_review'
  );
}
