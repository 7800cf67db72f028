/** The sandbox's error body for everything but a failed bearer check. */
export interface ErrorBody {
  status: 'error';
  code: string;
  message: string;
  errors?: Record<string, string[]>;
}

/** Builds an error body; `errors` maps each bad field to its messages. */
export function errorBody(code: string, message: string, errors?: Record<string, string[]>): ErrorBody {
  return errors ? { status: 'error', code, message, errors } : { status: 'error', code, message };
}

/** Builds a validation error body whose message names the first problem and counts the rest. */
export function validationError(errors: Record<string, string[]>): ErrorBody {
  const messages = Object.values(errors).flat();
  const more = messages.length - 1;
  const first = messages[0] ?? 'The given data was invalid.';
  const message = more > 0 ? `${first} (and ${more} more error${more === 1 ? '' : 's'})` : first;
  return errorBody('E_VALIDATION', message, errors);
}

export const UNAUTHENTICATED = { message: 'Unauthenticated.' } as const;
export const TRANSACTION_NOT_FOUND = { message: 'Transaction not found' } as const;

const CODES_BY_STATUS: Record<number, string> = {
  400: 'E_BAD_REQUEST',
  404: 'E_NOT_FOUND',
  413: 'E_PAYLOAD_TOO_LARGE',
  415: 'E_UNSUPPORTED_MEDIA_TYPE',
  500: 'E_INTERNAL',
};

/** The error code for an HTTP status the sandbox answers without a more specific code. */
export function codeForStatus(status: number): string {
  return CODES_BY_STATUS[status] ?? `E_HTTP_${status}`;
}
