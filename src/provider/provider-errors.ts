import type { ProviderVerdict } from '../domain/payment-model';
import { createRedactor, safeText, type Redactor } from './redact';
import { asRecord, parseJson } from './text';

export interface ProviderErrorDetails {
  /** What the failed exchange tells of the request's fate upstream; only `not_sent` may be sent again. */
  verdict: ProviderVerdict;
  httpStatus?: number;
  providerCode?: string;
  providerMessage?: string;
  /** Transport error code, e.g. ECONNREFUSED or UND_ERR_HEADERS_TIMEOUT. */
  errorCode?: string;
  retryAfterMs?: number;
}

/** A failed exchange with the provider; its message never carries the token, card data or request body. */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  readonly verdict: ProviderVerdict;
  readonly httpStatus?: number;
  readonly providerCode?: string;
  readonly providerMessage?: string;
  readonly errorCode?: string;
  readonly retryAfterMs?: number;
  /** How many requests were sent (or tried) before giving up. */
  attempts = 1;

  constructor(message: string, details: ProviderErrorDetails) {
    super(message);
    this.verdict = details.verdict;
    this.httpStatus = details.httpStatus;
    this.providerCode = details.providerCode;
    this.providerMessage = details.providerMessage;
    this.errorCode = details.errorCode;
    this.retryAfterMs = details.retryAfterMs;
  }
}

// The request never left this process: nothing can have been created upstream.
const NEVER_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);
// The request may have reached the provider: what it did is unknown.
const MAYBE_SENT = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_ABORTED',
  'UND_ERR_ABORT',
  'ABORT_ERR',
]);

/** The verdict of an HTTP status (429: the provider turned it away unprocessed); null for 2xx. */
export function classifyStatus(status: number): ProviderVerdict | null {
  if (status >= 200 && status < 300) return null;
  if (status === 429) return 'not_sent';
  if (status >= 400 && status < 500) return 'rejected';
  return 'unknown';
}

/** The verdict of a transport error (connection, timeout, abort); anything unrecognised is `unknown`. */
export function classifyTransportError(err: unknown): { verdict: ProviderVerdict; code?: string } {
  const codes = errorCodes(err);
  const maybeSent = codes.find((code) => MAYBE_SENT.has(code));
  if (maybeSent) return { verdict: 'unknown', code: maybeSent };
  // Several connection attempts (happy eyeballs) are safe only when every one of them failed before sending.
  const attempts = nestedErrors(err);
  if (attempts.length > 0 && attempts.every((e) => classifyTransportError(e).verdict === 'not_sent')) {
    return { verdict: 'not_sent', code: errorCodes(attempts[0])[0] };
  }
  const neverSent = codes.find((code) => NEVER_SENT.has(code));
  if (neverSent && attempts.length === 0) return { verdict: 'not_sent', code: neverSent };
  return { verdict: 'unknown', code: codes[0] };
}

/** Wraps any thrown value into a ProviderError with its verdict (a ProviderError passes through unchanged). */
export function classifyError(err: unknown, options: { redact?: Redactor; what?: string } = {}): ProviderError {
  if (err instanceof ProviderError) return err;
  const redact = options.redact ?? createRedactor();
  const what = options.what ?? 'provider request';
  const { verdict, code } = classifyTransportError(err);
  const reason = safeText(err instanceof Error ? err.message : String(err), redact, 200);
  const fate = verdict === 'not_sent' ? 'failed before it was sent' : 'failed after it may have been sent';
  return new ProviderError(`${what} ${fate} (${code ?? 'unrecognised error'}): ${reason}`, {
    verdict,
    errorCode: code,
  });
}

/** Turns a non-2xx answer into a ProviderError with its verdict and the provider's reason; null for 2xx. */
export function classifyResponse(
  status: number,
  body: string,
  options: { redact?: Redactor; retryAfterMs?: number; what?: string } = {},
): ProviderError | null {
  const verdict = classifyStatus(status);
  if (verdict === null) return null;
  const redact = options.redact ?? createRedactor();
  const { code, message } = describeBody(body, redact);
  const what = options.what ?? 'provider request';
  return new ProviderError(`${what} answered HTTP ${status}${message ? `: ${message}` : ''}`, {
    verdict,
    httpStatus: status,
    providerCode: code,
    providerMessage: message,
    retryAfterMs: status === 429 ? options.retryAfterMs : undefined,
  });
}

const MESSAGE_KEYS = ['message', 'error_description', 'error', 'errors', 'status_message'] as const;
const CODE_KEYS = ['code', 'error_code', 'status_code', 'status'] as const;

/** The provider's own reason and code in an answer body (JSON or text), redacted and capped. */
export function describeBody(body: string, redact: Redactor = createRedactor()): { code?: string; message?: string } {
  const json = parseJson(body);
  const record = asRecord(json);
  const parts = record
    ? MESSAGE_KEYS.map((key) => (Object.hasOwn(record, key) ? flatten(record[key]) : '')).filter((p) => p !== '')
    : [];
  const unique = [...new Set(parts)];
  const raw = unique.length > 0 ? unique.join('; ') : json === undefined ? body.replace(/<[^>]*>/g, ' ') : '';
  const message = raw.trim() === '' ? undefined : safeText(raw, redact);
  const codeValue = record ? CODE_KEYS.map((key) => record[key]).find(isScalar) : undefined;
  return { code: codeValue === undefined ? undefined : safeText(String(codeValue), redact, 50), message };
}

function flatten(value: unknown, depth = 0): string {
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (depth > 3) return '';
  if (Array.isArray(value))
    return value
      .map((v) => flatten(v, depth + 1))
      .filter((v) => v !== '')
      .join(', ');
  const record = asRecord(value);
  if (!record) return '';
  return Object.entries(record)
    .map(([key, v]) => {
      const text = flatten(v, depth + 1);
      return text === '' ? '' : `${key}: ${text}`;
    })
    .filter((v) => v !== '')
    .join('; ');
}

function isScalar(value: unknown): value is string | number {
  return (typeof value === 'string' && value.trim() !== '') || typeof value === 'number';
}

function errorCodes(err: unknown, depth = 0): string[] {
  const record = asRecord(err);
  if (!record || depth > 5) return [];
  const own: string[] = [];
  if (typeof record.code === 'string') own.push(record.code);
  if (record.name === 'AbortError' || record.name === 'TimeoutError') own.push('ABORT_ERR');
  return [...own, ...errorCodes(record.cause, depth + 1)];
}

function nestedErrors(err: unknown): unknown[] {
  const errors = asRecord(err)?.errors;
  return Array.isArray(errors) ? (errors as unknown[]) : [];
}
