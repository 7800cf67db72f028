import type { CardField } from './personal-data';
import type { BankCreditRequest, CardPaymentRequest, MobileMoneyDebitRequest } from './requests';
import type { Signed } from './signed';
import type { z } from 'zod';
import type { PaymentEventShape, PaymentResourceShape, failureSchema } from './api-resources';

// Plain values only (no zod at run time): the workflow bundle imports this module. The API's resource types are the
// z.infer of domain/api-resources.ts, imported as types, which the bundle never loads.

export type PaymentStatus =
  'awaiting_approval' | 'initiating' | 'pending' | 'reconciling' | 'needs_review' | 'succeeded' | 'failed';
export type Outcome = 'succeeded' | 'failed';
export const PAYMENT_STATUSES = [
  'awaiting_approval',
  'initiating',
  'pending',
  'reconciling',
  'needs_review',
  'succeeded',
  'failed',
] as const satisfies readonly PaymentStatus[];

/** True for the statuses a payment never leaves. */
export function isTerminal(status: PaymentStatus): status is Outcome {
  return status === 'succeeded' || status === 'failed';
}

/** What the provider said about a transaction, in the product's words. */
export type ProviderState = Outcome | 'pending' | 'unknown';

/** The provider's acknowledgement of an initiation request. */
export interface ProviderAck {
  transactionId: string | null;
  statusCode: string;
  message: string;
  redirectUrl: string | null;
}

/** A callback from the provider after the tolerant parse, as signalled to the workflow. */
export interface ProviderCallback {
  state: ProviderState;
  transactionId: string | null;
  statusCode: string | null;
  message: string | null;
  amount: number | null;
}

/** The answer of the provider's status query. */
export interface StatusCheck {
  state: ProviderState | 'not_found';
  transactionId: string | null;
  statusCode: string | null;
  message: string | null;
  /** The amount the provider holds for the transaction, when its answer says (a settling answer must match it). */
  amount?: number | null;
}

/** The events a callback's arrival records: one of these for every callback (repeats counted on it). */
export const CALLBACK_EVENT_TYPES = [
  'callback_received',
  'callback_duplicate',
  'callback_contradicting',
  'callback_unrecognized',
  'callback_rejected',
  'callback_unconfirmed',
] as const;

export const PAYMENT_EVENT_TYPES = [
  'approval_decided',
  'approval_expired',
  'initiated',
  'initiation_rejected',
  'initiation_unknown',
  ...CALLBACK_EVENT_TYPES,
  'callback_confirmed',
  'timed_out',
  'status_checked',
  'needs_review',
  'cancel_requested',
  'notification_queued',
  'resolved',
  'succeeded',
  'failed',
] as const;
export type PaymentEventType = (typeof PAYMENT_EVENT_TYPES)[number];

/** One step of a payment's life as the API shows it (schema: domain/api-resources.ts). */
export type PaymentEvent = PaymentEventShape;

export type Failure = z.infer<typeof failureSchema>;

/** The payment as the merchant API and operators see it; card data only as `last4` (schema: domain/api-resources.ts). */
export type PaymentResource = PaymentResourceShape;

/** A card payment as Temporal sees it: the card data replaced by a one-time vault token and the last four digits. */
export type CardPaymentRef = Omit<CardPaymentRequest, CardField> & { card: { token: string; last4: string } };

/** A payment request as the workflow keeps it: no card data. */
export type StoredPaymentRequest = MobileMoneyDebitRequest | CardPaymentRef | BankCreditRequest;

/** Everything a payment workflow starts from; the server signs it (kind `payment`) for one workflow id. */
export interface PaymentInput {
  paymentId: string;
  merchantId: string;
  request: StoredPaymentRequest;
  createdAt: string;
  /** Per-type callback wait and reconciliation window, fixed at creation so a config change never alters running payments. */
  timing: PaymentTiming;
  /** The payout batch this payment is an item of; the workflow reports its outcome there. */
  batchId?: string;
  /** A bank credit above its merchant's threshold (APPROVAL_THRESHOLDS): operators who must approve it before it is sent. */
  approvalsRequired?: number;
  /** How long it waits for them from its creation (APPROVAL_WINDOW); then it fails, nothing sent. */
  approvalWindowMs?: number;
}

export interface PaymentTiming {
  callbackTimeoutMs: number;
  reconcileForMs: number;
  reconcileIntervalMs: number;
}

/** What the server signs for a payout batch item (kind `batch-item`); only its batch may start it. */
export interface BatchItemOrder {
  paymentId: string;
  merchantId: string;
  batchId: string;
  request: BankCreditRequest;
  timing: PaymentTiming;
}

/** A payment workflow's argument: the server's signed start message, a single payment's or a batch item's. */
export type PaymentMessage = Signed<PaymentInput> | Signed<BatchItemOrder>;

export interface ResolveInput {
  outcome: Outcome;
  note: string;
  operator?: string;
}

/** The longest an initiation may take, provider retries included (the worker refuses provider time-outs beyond it). */
export const INITIATION_TIMEOUT_MS = 120_000;
/**
 * How long an initiation waits for an unreachable card vault (a Redis restart) before it fails: nothing has been sent
 * yet, so waiting is safe, and part of the initiation's INITIATION_TIMEOUT_MS.
 */
export const VAULT_WAIT_MS = 15_000;

/**
 * A payment's workflow task time-out. Its local activities (the initiation, a callback's confirmation, record writes)
 * run inside one task; past 80 % of this the SDK completes the task as a heartbeat and the workflow's code runs again,
 * while what those activities wrote stays as the first execution wrote it (record and workflow then disagree). 30 s
 * keeps the waits of an outage (VAULT_WAIT_MS, a record write's 10 s) inside one task; the price is that a task handed
 * to a worker as it dies waits 30 s, not 10, before another worker takes it.
 */
export const PAYMENT_TASK_TIMEOUT = '30s';
/** How soon a worker that died mid-initiation or mid-status-check is noticed: the activities heartbeat well within it. */
export const PROVIDER_CALL_HEARTBEAT_TIMEOUT_MS = 10_000;

/**
 * The provider's verdict on a request that did not succeed, in the words used from the wire (ProviderError) through
 * the activity boundary (FailureTypes) to the state machine (`initiationRejected`, `initiationUnknown`,
 * `initiationNotSent`): it refused the request and did nothing (`rejected`), it may have acted on it (`unknown`), or
 * the request never reached it (`not_sent`).
 */
export type ProviderVerdict = 'rejected' | 'unknown' | 'not_sent';

/** A failed initiation's verdict as the worker signs it (kind `initiation-verdict`): a workflow fails a payment on it. */
export interface InitiationVerdict {
  verdict: Exclude<ProviderVerdict, 'unknown'> | 'untrusted';
  failure: Failure | null;
}

/** The ApplicationFailure type that carries each verdict, and a refused start message, across the activity boundary. */
export const FailureTypes = {
  rejected: 'ProviderRejected',
  unknown: 'ProviderUnknown',
  not_sent: 'ProviderNotSent',
  /** A message or input that the server did not sign for this workflow: refused before anything is sent. */
  untrusted: 'UntrustedInput',
} as const satisfies Record<ProviderVerdict | 'untrusted', string>;

/** The status a payment starts in: `awaiting_approval` when operators must approve it first, else `initiating`. */
export function initialPaymentStatus(input: PaymentInput): PaymentStatus {
  return input.approvalsRequired ? 'awaiting_approval' : 'initiating';
}

/** When a payment waiting for approval fails unless approved, or undefined when it needs none. */
export function paymentApprovalDeadline(input: PaymentInput): string | undefined {
  if (!input.approvalsRequired || input.approvalWindowMs === undefined) return undefined;
  return new Date(Date.parse(input.createdAt) + input.approvalWindowMs).toISOString();
}

/**
 * What a payment shows the moment it is created, before its workflow has run: `initiating` (or `awaiting_approval`,
 * with its approvals so far and their deadline), no events.
 */
export function newPaymentResource(input: PaymentInput): PaymentResource {
  const { request } = input;
  const deadline = paymentApprovalDeadline(input);
  return {
    id: input.paymentId,
    type: request.type,
    reference: request.reference,
    status: initialPaymentStatus(input),
    amount: request.amount,
    created_at: input.createdAt,
    updated_at: input.createdAt,
    provider: { transaction_id: null, status_code: null, message: null },
    next_action: null,
    failure: null,
    ...(request.type === 'card_payment' ? { card: { last4: request.card.last4 } } : {}),
    ...(request.metadata ? { metadata: request.metadata } : {}),
    ...(deadline ? { approvals: [], approval_expires_at: deadline } : {}),
    events: [],
  };
}

/** A batch item's payment input: its order, created when its batch started it. */
export function batchItemInput(order: BatchItemOrder, startTime: Date): PaymentInput {
  const { batchId, merchantId, paymentId, request, timing } = order;
  return { paymentId, merchantId, request, timing, batchId, createdAt: startTime.toISOString() };
}

/**
 * The input a payment workflow was started with, read from its start argument outside the workflow, unchecked: only
 * to show a payment whose workflow never ran (the workflow itself checks the signature before it acts on one).
 */
export function startedPaymentInput(message: PaymentMessage, startTime: Date): PaymentInput {
  if (message.kind === 'batch-item') return batchItemInput((message as Signed<BatchItemOrder>).body, startTime);
  return (message as Signed<PaymentInput>).body;
}
