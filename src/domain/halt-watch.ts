import type { FailureKind, ItemSettled } from './batch-model';
import type { PaymentResource } from './payment-model';

// Plain values only (no zod at run time): the workflow bundle imports this module.

/** When a running batch halts itself (settings BATCH_HALT_*, taken when the batch starts). */
export interface HaltRules {
  /** How many of the latest settled items the failure share is taken over; a window not yet full never halts. */
  window: number;
  /** The share of failed items in a full window above which the batch halts, from 0 to 1. */
  failureShare: number;
  /** How many items in a row that met a provider-wide error halt the batch; 0: never. */
  providerErrors: number;
}

export const HALT_REASONS = ['failure_share', 'provider_errors'] as const;
export type HaltReason = (typeof HALT_REASONS)[number];

/** Why and when a batch halted itself, as its resource shows it. */
export interface BatchHalt {
  reason: HaltReason;
  message: string;
  at: string;
}

/** What a continued-as-new run carries of the watch. */
export interface HaltWatchCarry {
  /** The latest settled items, oldest first: true for a failed one. */
  recent: boolean[];
  /** The payments of the provider-wide errors in a row, since the last item that went through or failed on its own. */
  providerRun: string[];
}

// Not about the item: the provider refused who we are, turned us away, failed itself or could not be reached.
const PROVIDER_WIDE_STATUSES = new Set([401, 403, 408, 429]);
const PROVIDER_WIDE_CODES = new Set(['provider_unreachable', 'provider_error', 'not_sent']);

/** True when an HTTP status from the provider is about the provider as a whole (authentication, 5xx), not one item. */
export function isProviderWideStatus(status: number): boolean {
  return PROVIDER_WIDE_STATUSES.has(status) || (status >= 500 && status < 600);
}

/**
 * Whether a payment's failure code is about the item or the provider as a whole: the codes the provider classification
 * gives a provider-wide answer (`http_401`, `http_5xx`, `provider_error`) and those of a request that never reached it.
 */
export function failureKind(code: string): FailureKind {
  if (PROVIDER_WIDE_CODES.has(code)) return 'provider';
  const http = /^http_(\d{3})$/.exec(code);
  return http && isProviderWideStatus(Number(http[1])) ? 'provider' : 'item';
}

/**
 * A batch item's report from its record: its outcome (with its failure's code and kind), or, while it waits for one,
 * the provider-wide error its initiation met; null when there is nothing to report yet.
 */
export function itemReport(resource: PaymentResource): ItemSettled | null {
  const { id: paymentId, status, failure } = resource;
  if (status === 'succeeded' || status === 'needs_review') return { paymentId, status };
  if (status === 'failed') {
    return failure
      ? { paymentId, status, failure: { code: failure.code, kind: failureKind(failure.code) } }
      : { paymentId, status };
  }
  if (status !== 'pending') return null;
  const trouble = resource.events.find(
    (event) =>
      event.type === 'initiation_unknown' && event.status_code && failureKind(event.status_code) === 'provider',
  );
  return trouble?.status_code
    ? { paymentId, status: 'in_flight', failure: { code: trouble.status_code, kind: 'provider' } }
    : null;
}

/** Rules that never halt: a batch started before the watch existed. */
const NEVER: HaltRules = { window: Number.MAX_SAFE_INTEGER, failureShare: 1, providerErrors: 0 };

/**
 * Watches a running batch's item reports for trouble: too many failures among the latest settled items, or a run of
 * provider-wide errors. Pure bookkeeping: the batch workflow pauses itself on the reason it answers.
 */
export class HaltWatch {
  private readonly rules: HaltRules;
  private readonly carried: HaltWatchCarry;

  /** `carried`: the watch's bookkeeping, kept (and changed) in place, so its owner's carried state holds it. */
  constructor(rules: HaltRules | undefined, carried: HaltWatchCarry) {
    this.rules = rules ?? NEVER;
    this.carried = carried;
  }

  /** Takes a report the batch counted (a settled item once, or an item's provider-wide error); answers why to halt. */
  observe(report: ItemSettled, now: Date): BatchHalt | undefined {
    const { recent, providerRun } = this.carried;
    if (report.failure?.kind === 'provider') {
      if (!providerRun.includes(report.paymentId)) providerRun.push(report.paymentId);
    } else if (report.status === 'succeeded' || report.failure?.kind === 'item') {
      // A failure of unknown kind (a report the batch's look at its quiet items made) ends no run.
      providerRun.length = 0;
    }
    if (report.status !== 'in_flight') {
      recent.push(report.status === 'failed');
      if (recent.length > this.rules.window) recent.splice(0, recent.length - this.rules.window);
    }
    return this.reason(now);
  }

  /** Starts over (an operator resumed the batch): what came before the halt does not halt it again. */
  reset(): void {
    this.carried.recent.length = 0;
    this.carried.providerRun.length = 0;
  }

  private reason(now: Date): BatchHalt | undefined {
    const { window, failureShare, providerErrors } = this.rules;
    const { recent, providerRun } = this.carried;
    const at = now.toISOString();
    if (providerErrors > 0 && providerRun.length >= providerErrors) {
      return {
        reason: 'provider_errors',
        message: `${providerRun.length} items in a row met a provider-wide error (authentication, 5xx, unreachable)`,
        at,
      };
    }
    const failed = recent.filter(Boolean).length;
    if (recent.length >= window && failed / recent.length > failureShare) {
      return {
        reason: 'failure_share',
        message: `${failed} of the latest ${recent.length} settled items failed (more than ${Math.round(failureShare * 100)} %)`,
        at,
      };
    }
    return undefined;
  }
}
