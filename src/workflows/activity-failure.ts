import { ActivityFailure, ApplicationFailure, log } from '@temporalio/workflow';
import { FailureTypes } from '../domain/payment-model';
import type { Failure, InitiationVerdict, ProviderVerdict } from '../domain/payment-model';
import type { Signed } from '../domain/signed';
import { resultRefusal } from './trust';

/** What an activity's failure says, unwrapped from Temporal's ActivityFailure. */
export interface ActivityFailureReport {
  /** The provider's verdict its ApplicationFailure type carries, `untrusted` for a refused start, else undefined. */
  verdict: ProviderVerdict | 'untrusted' | undefined;
  /** The payment's failure (code and reason) when the activity gave one. */
  failure: Failure | undefined;
  /** Why it failed: the activity's own message, a time-out's, or `fallback`. */
  message: string;
}

const VERDICTS = new Map<string, ProviderVerdict | 'untrusted'>(
  Object.entries(FailureTypes).map(([verdict, type]) => [type, verdict as ProviderVerdict | 'untrusted']),
);

/** Unwraps what an awaited activity threw: its verdict, its failure details and its reason. */
export function activityFailure(err: unknown, fallback = 'failed'): ActivityFailureReport {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  const application = cause instanceof ApplicationFailure ? cause : undefined;
  return {
    verdict: application?.type ? VERDICTS.get(application.type) : undefined,
    failure: application?.details?.[0] as Failure | undefined,
    message: cause instanceof Error ? cause.message : fallback,
  };
}

/**
 * What a failed initiation says, its verdict believed only when the worker signed it for this very activity
 * (`activityId`): a forged or copied `rejected` or `not_sent` fails no payment, it is an unknown outcome, which only
 * the provider's own answer settles.
 */
export function initiationFailure(err: unknown, activityId: string): ActivityFailureReport {
  const report = activityFailure(err, 'unknown');
  if (report.verdict === undefined || report.verdict === 'unknown') return report;
  const signed = report.failure as unknown as Signed<InitiationVerdict> | undefined;
  const refusal =
    resultRefusal(signed, 'initiation-verdict', activityId) ??
    (signed?.body.verdict === report.verdict ? undefined : `it says ${String(signed?.body.verdict)}`);
  if (refusal) {
    log.warn("an initiation's verdict was refused", { refusal });
    return { verdict: 'unknown', failure: undefined, message: `its verdict was refused (${refusal}); outcome unknown` };
  }
  return { verdict: report.verdict, failure: signed?.body.failure ?? undefined, message: report.message };
}
