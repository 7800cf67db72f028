import type { ErrorCode, FieldError } from '../../../src/domain/api-resources';

/** Every error the client throws. */
export class PaymentsError extends Error {
  override readonly name: string = 'PaymentsError';
}

/** The API answered with its error envelope: `status`, `code` and, for a 400, every bad field. */
export class PaymentsApiError extends PaymentsError {
  override readonly name = 'PaymentsApiError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly fields: readonly FieldError[],
    /** The answer's `x-request-id`, to quote to the operators. */
    readonly requestId: string | undefined,
  ) {
    super(`${status} ${code}: ${message}`);
  }
}

/** No answer within the client's `timeoutMs` (on the last attempt). */
export class PaymentsTimeoutError extends PaymentsError {
  override readonly name = 'PaymentsTimeoutError';
}

/** The server could not be reached, or the connection broke (on the last attempt). */
export class PaymentsNetworkError extends PaymentsError {
  override readonly name = 'PaymentsNetworkError';
}

/** An answer that is not what the API documents (a proxy's page, a body of another shape). */
export class PaymentsResponseError extends PaymentsError {
  override readonly name = 'PaymentsResponseError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
