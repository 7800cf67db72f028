import { randomUUID } from 'node:crypto';
import { errorEnvelopeSchema } from '../../../src/domain/api-resources';
import type { z } from 'zod';
import { PaymentsApiError, PaymentsNetworkError, PaymentsResponseError, PaymentsTimeoutError } from './client-errors';

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  /** Per attempt, in milliseconds (default 30 s: a create may wait for the initiation). */
  timeoutMs: number;
  /** Attempts after the first, on 503 and network errors (default 3). */
  retries: number;
  /** The first wait between attempts (doubling, with jitter); a 503's Retry-After takes precedence. */
  retryDelayMs: number;
  /** The longest wait between attempts. */
  maxRetryDelayMs: number;
  fetch: typeof fetch;
}

export interface Call<S extends z.ZodType> {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** The schema of the answer's body; the answer is parsed with it. */
  answer: S;
  /**
   * True when sending it again cannot do anything twice (reads; creates, whose reference makes them idempotent):
   * retried on network errors and timeouts too, not only on 503.
   */
  idempotent: boolean;
  signal?: AbortSignal;
}

const RETRYABLE_STATUS = 503;

/** Sends API calls: auth, JSON, per-attempt timeouts, retries with backoff, typed errors, parsed answers. */
export class Transport {
  constructor(private readonly options: TransportOptions) {}

  async send<S extends z.ZodType>(call: Call<S>): Promise<z.infer<S>> {
    // One request id for every attempt: the server's logs tie the retries together.
    const requestId = randomUUID();
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.options.retries;
      let response: Response;
      try {
        response = await this.attempt(call, requestId);
      } catch (err) {
        call.signal?.throwIfAborted();
        if (last || !call.idempotent) throw connectionError(err, this.options.timeoutMs);
        await sleep(this.backoff(attempt), call.signal);
        continue;
      }
      if (response.status === RETRYABLE_STATUS && !last) {
        await response.body?.cancel();
        await sleep(this.retryAfter(response) ?? this.backoff(attempt), call.signal);
        continue;
      }
      return this.read(response, call.answer);
    }
  }

  private async attempt(call: Call<z.ZodType>, requestId: string): Promise<Response> {
    const url = new URL(call.path.replace(/^\//, ''), this.options.baseUrl.replace(/\/?$/, '/'));
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    return this.options.fetch(url, {
      method: call.method,
      headers: {
        authorization: `Bearer ${this.options.apiKey}`,
        accept: 'application/json',
        'x-request-id': requestId,
        ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      signal: call.signal ? AbortSignal.any([call.signal, timeout]) : timeout,
    });
  }

  private async read<S extends z.ZodType>(response: Response, answer: S): Promise<z.infer<S>> {
    const text = await response.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      throw new PaymentsResponseError(response.status, `the answer (${response.status}) is not JSON`);
    }
    if (!response.ok) {
      const envelope = errorEnvelopeSchema.safeParse(body);
      if (!envelope.success) {
        throw new PaymentsResponseError(response.status, `${response.status} without the error envelope`);
      }
      const { code, message, fields } = envelope.data.error;
      throw new PaymentsApiError(
        response.status,
        code,
        message,
        fields,
        response.headers.get('x-request-id') ?? undefined,
      );
    }
    const parsed = answer.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue ? `${issue.path.join('.') || '(body)'}: ${issue.message}` : 'unknown';
      throw new PaymentsResponseError(response.status, `the answer is not the documented shape (${where})`);
    }
    return parsed.data;
  }

  private backoff(attempt: number): number {
    const base = Math.min(this.options.retryDelayMs * 2 ** attempt, this.options.maxRetryDelayMs);
    return base / 2 + Math.random() * (base / 2);
  }

  /** A 503's `Retry-After` (seconds, or an HTTP date), capped at maxRetryDelayMs. */
  private retryAfter(response: Response): number | undefined {
    const header = response.headers.get('retry-after');
    if (!header) return undefined;
    const seconds = Number(header);
    const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
    return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), this.options.maxRetryDelayMs) : undefined;
  }
}

function connectionError(err: unknown, timeoutMs: number): Error {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
    return new PaymentsTimeoutError(`no answer within ${timeoutMs} ms`);
  }
  const cause = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
  return new PaymentsNetworkError(`the API cannot be reached: ${cause}`, { cause: err });
}

/** Waits `ms`, or rejects when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
