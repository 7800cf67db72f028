import { isGrpcServiceError, NamespaceNotFoundError } from '@temporalio/client';
import { isUnreachable } from '../records/database';

/**
 * A failure the HTTP layer and the CLI turn into a status code or message without knowing Temporal.
 * `reference_purged`: the reference's payment or batch was purged from the records (never started again);
 * `action_not_recorded`: an operator action was applied but PostgreSQL did not take its record.
 */
export class AppError extends Error {
  constructor(
    readonly kind: 'not_found' | 'conflict' | 'unavailable' | 'reference_purged' | 'action_not_recorded',
    message: string,
  ) {
    super(message);
  }
}

/** Turns Temporal's connection failures and a missing namespace into `unavailable`; anything else passes through. */
export function translateTemporalError(err: unknown): unknown {
  if (isGrpcServiceError(err) || (err instanceof Error && err.name === 'ServiceError')) {
    return new AppError('unavailable', 'Temporal is unreachable right now');
  }
  // A namespace that is not (yet) there is a deployment fault, not the caller's: they may retry later.
  if (err instanceof NamespaceNotFoundError) return new AppError('unavailable', 'the Temporal namespace is not there');
  return err;
}

/** Runs a Temporal call, translating connection failures. */
export function temporalCall<T>(call: () => Promise<T>): Promise<T> {
  return translated(call, translateTemporalError);
}

async function translated<T>(call: () => Promise<T>, translate: (err: unknown) => unknown): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw translate(err);
  }
}

/** Turns PostgreSQL being unreachable, full or shutting down into `unavailable`; anything else passes through. */
export function translateRecordError(err: unknown): unknown {
  return isUnreachable(err) ? new AppError('unavailable', 'the payment records are unreachable right now') : err;
}

/** Runs a call to the payment records, translating PostgreSQL being unreachable. */
export function recordCall<T>(call: () => Promise<T>): Promise<T> {
  return translated(call, translateRecordError);
}

/** The answer to a reference whose payment or batch `records purge` deleted: it never starts anything again. */
export function purgedReference(what: string, resourceId: string): AppError {
  return new AppError(
    'reference_purged',
    `${what} was used by ${resourceId}, whose record has been purged (older than the records are kept); ` +
      'it is never started again: use a new reference',
  );
}
