import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { FailureTypes } from '../domain/payment-model';
import type { Failure, ProviderVerdict } from '../domain/payment-model';

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
