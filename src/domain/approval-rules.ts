// Plain values only (no zod at run time): the workflow bundle imports this module.

/**
 * A merchant's approval thresholds (APPROVAL_THRESHOLDS), in minor units: a single bank credit above `credit` waits for
 * an approval; a batch always waits for one, and for two different operators when its total is above `second`.
 */
export interface ApprovalThresholds {
  creditMinor: number;
  secondMinor: number;
}

/** How long what needs approval waits for it when APPROVAL_WINDOW is not given: a day. */
export const DEFAULT_APPROVAL_WINDOW_MS = 24 * 3600_000;

/** What an operator decides about a batch (or payment) waiting for approval. */
export type ApprovalDecision = 'approve' | 'reject';
export const APPROVAL_DECISIONS = ['approve', 'reject'] as const satisfies readonly ApprovalDecision[];

/** An operator's decision, as the workflow receives it (signed, kind `approval`). */
export interface ApprovalInput {
  decision: ApprovalDecision;
  operator: string;
}

/** A decision as the resource shows it. */
export interface Approval {
  operator: string;
  decision: ApprovalDecision;
  at: string;
}

/** How many distinct operators must approve a batch of this total: 0 when its merchant has no thresholds. */
export function batchApprovalsRequired(thresholds: ApprovalThresholds | undefined, totalMinor: number): number {
  if (!thresholds) return 0;
  return totalMinor > thresholds.secondMinor ? 2 : 1;
}

/** How many operators must approve a single payment: one for a bank credit above its merchant's `credit`, else 0. */
export function creditApprovalsRequired(
  thresholds: ApprovalThresholds | undefined,
  type: string,
  amountMinor: number,
): number {
  return thresholds && type === 'bank_credit' && amountMinor > thresholds.creditMinor ? 1 : 0;
}

/** Where a subject waiting for approval stands. */
export interface ApprovalState {
  /** Who created it: the merchant whose key did (never one of its approvers). */
  createdBy: string;
  required: number;
  approvals: readonly Approval[];
}

/** Why this operator's decision is refused now, or undefined when it counts. */
export function approvalRefusal(state: ApprovalState, { decision, operator }: ApprovalInput): string | undefined {
  if (operator === state.createdBy) return `${operator} created it and cannot approve or reject it`;
  if (state.approvals.some((approval) => approval.operator === operator)) {
    return `${operator} has already decided on it; another operator must`;
  }
  if (decision === 'approve' && approvedBy(state) >= state.required) return 'it needs no more approvals';
  return undefined;
}

/** How many distinct operators have approved. */
export function approvedBy(state: ApprovalState): number {
  return new Set(state.approvals.filter((a) => a.decision === 'approve').map((a) => a.operator)).size;
}

/** Where the decisions so far leave it: `rejected` at the first rejection, `approved` once enough have approved. */
export function approvalOutcome(state: ApprovalState): 'approved' | 'rejected' | 'waiting' {
  if (state.approvals.some((a) => a.decision === 'reject')) return 'rejected';
  return approvedBy(state) >= state.required ? 'approved' : 'waiting';
}
