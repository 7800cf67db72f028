import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { ErrorCode, ErrorEnvelope, FieldError } from '../domain/api-resources';
import { AppError } from '../payments/app-errors';
import { MismatchedAnswer } from '../payments/bound-answers';

export type { FieldError };

/** Seconds a 503 asks the caller to wait before retrying (`Retry-After`): Temporal, the vault or the bank list. */
export const RETRY_AFTER_SECONDS = 2;

/** An error the API answers with its own status and the product's error envelope. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly fields: FieldError[] = [],
  ) {
    super(message);
  }
}

/** A 400 naming every bad field of a zod validation failure. */
export function validationError(error: z.ZodError, message = 'the request is invalid'): ApiError {
  const fields = error.issues.flatMap((issue): FieldError[] => {
    const path = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: path ? `${path}.${key}` : key, message: 'is not a known field' }));
    }
    return [{ path: path || '(body)', message: issue.message }];
  });
  return new ApiError(400, 'invalid_request', message, fields);
}

const FASTIFY_ERRORS: Record<string, [number, ErrorCode, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'payload_too_large', 'the body is larger than allowed'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported_media_type', 'send application/json'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'invalid_json', 'the JSON body is empty'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'invalid_json', 'the body is not valid JSON'],
  FST_ERR_MAX_PARAM_LENGTH: [414, 'uri_too_long', 'a part of the URL is longer than allowed'],
};

/** Maps every error to the product's envelope `{"error":{"code","message","fields"}}`; never leaks internals. */
export function errorHandler(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  let apiError: ApiError;
  if (err instanceof ApiError) {
    apiError = err;
  } else if (err instanceof AppError) {
    const status = { not_found: 404, conflict: 409, unavailable: 503, reference_purged: 409, action_not_recorded: 500 };
    if (err.kind === 'action_not_recorded') request.log.error({ err }, 'operator action applied but not recorded');
    if (err instanceof MismatchedAnswer) {
      request.log.warn(
        { anomaly: 'mismatched_answer', requested: err.requested, found: err.found },
        'a record or workflow answered for another payment, batch or merchant: refused',
      );
    }
    apiError = new ApiError(status[err.kind], err.kind, err.message);
  } else {
    const known = 'code' in err && typeof err.code === 'string' ? FASTIFY_ERRORS[err.code] : undefined;
    const status = 'statusCode' in err && typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (known) apiError = new ApiError(...known);
    else if (status >= 400 && status < 500) apiError = new ApiError(status, 'bad_request', 'the request is malformed');
    else {
      request.log.error({ err }, 'unhandled error');
      apiError = new ApiError(500, 'internal', 'something went wrong; the request can be retried');
    }
  }
  if (apiError.statusCode === 503) void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
  void reply.status(apiError.statusCode).send(envelope(apiError));
}

/** The JSON body of an error answer. */
export function envelope(error: ApiError): ErrorEnvelope {
  return { error: { code: error.code, message: error.message, fields: error.fields } };
}
