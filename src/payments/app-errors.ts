import { isGrpcServiceError, NamespaceNotFoundError } from '@temporalio/client';

/** A failure the HTTP layer and the CLI turn into a status code or message without knowing Temporal. */
export class AppError extends Error {
  constructor(
    readonly kind: 'not_found' | 'conflict' | 'unavailable',
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
export async function temporalCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw translateTemporalError(err);
  }
}
