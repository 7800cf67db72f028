import { setTimeout as wait } from 'node:timers/promises';
import { Agent, request, type Dispatcher } from 'undici';
import type { Bank } from '../domain/bank';
import type { ProviderAck, StatusCheck } from '../domain/payment-model';
import { parseBankList } from './provider-banks';
import type { PaymentRequest } from '../domain/requests';
import { classifyError, classifyResponse, describeBody, ProviderError } from './provider-errors';
import { createRedactor, type Redactor } from './redact';
import { personalValues } from '../domain/personal-data';
import { MAX_RETRY_DELAY_MS, parseRetryAfter, retryDelay } from './retry';
import { fillTemplate, readStatusAnswer, type StatusQuery } from './status';
import { parseJson } from './text';
import { encodeInitiation, join, parseAck, type WireRequest } from './wire';

export interface ProviderConfig {
  baseUrl: string;
  mobileMoneyBaseUrl: string;
  token: string;
  connectTimeoutMs: number;
  /** Headers and body timeout of each request; connect plus this bounds a whole exchange. */
  requestTimeoutMs: number;
  /** Extra attempts for `not_sent` failures only (the request never left, or 429). */
  safeRetries: number;
  /** Status query by transaction id, e.g. `http://host/api/transactions/{transaction_id}`; a leading `/` is under baseUrl. */
  statusUrl?: string;
  /** Status query by our reference, e.g. `http://host/api/transactions?reference={reference}`. */
  statusByReferenceUrl?: string;
  /** The list of supported banks; the real operation is undocumented. A leading `/` is under baseUrl. */
  banksUrl?: string;
}

export interface InitiationRequest {
  paymentId: string;
  request: PaymentRequest;
  callbackUrl: string;
}

export interface ProviderClient {
  /** Sends the initiation; throws a ProviderError with its verdict, having retried only `not_sent` failures. */
  initiate(req: InitiationRequest): Promise<ProviderAck>;
  /** Asks the provider about a transaction; null when no status query is configured for what we know. */
  checkStatus(query: StatusQuery): Promise<StatusCheck | null>;
  readonly canCheckStatus: boolean;
  /** The provider's supported banks, for validating bank codes before anything is sent. */
  listBanks(): Promise<Bank[]>;
  close(): Promise<void>;
}

export interface ProviderClientOptions {
  /** Used instead of the client's own keep-alive Agent (and then not closed by `close`). */
  dispatcher?: Dispatcher;
  sleep?: (ms: number) => Promise<void>;
  /** First retry delay, doubled on each further retry. */
  backoffMs?: number;
  /** Cap on any retry delay, including one asked for by Retry-After. */
  maxRetryDelayMs?: number;
}

const MAX_RESPONSE_BYTES = 1024 * 1024;
interface Answer {
  status: number;
  text: string;
  truncated: boolean;
  retryAfterMs?: number;
}

/** One request to the provider and how its answer is read. */
interface Exchange<T> {
  url: string;
  /** The body of a POST; a GET without it. */
  wire?: WireRequest;
  redact: Redactor;
  /** What the request is, in error messages. */
  what: string;
  /** An answer taken before the status is classified as a failure (a status query's 404). */
  before?: (answer: Answer) => T | undefined;
  /** Reads a successful answer's JSON: the value, or why it cannot be used. */
  read: (json: unknown) => T | string;
  unusable: (answer: Answer, why: string) => ProviderError;
}

/** Creates the one client that speaks the provider's wire format, over a keep-alive undici Agent. */
export function createProviderClient(config: ProviderConfig, options: ProviderClientOptions = {}): ProviderClient {
  validateConfig(config);
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher: Dispatcher =
    options.dispatcher ??
    new Agent({
      connect: { timeout: config.connectTimeoutMs },
      headersTimeout: config.requestTimeoutMs,
      bodyTimeout: config.requestTimeoutMs,
    });
  const sleep = options.sleep ?? ((ms: number) => wait(ms));
  const backoffMs = options.backoffMs ?? 250;
  const maxRetryDelayMs = options.maxRetryDelayMs ?? MAX_RETRY_DELAY_MS;
  const statusUrl = template(config.statusUrl);
  const statusByReferenceUrl = template(config.statusByReferenceUrl);
  const banksUrl = template(config.banksUrl) ?? join(config.baseUrl, '/api/banks');

  function template(value: string | undefined): string | undefined {
    if (!value) return undefined;
    return value.startsWith('/') ? join(config.baseUrl, value) : value;
  }

  async function send(url: string, wire: WireRequest | undefined, redact: Redactor, what: string): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${config.token}`, accept: 'application/json' };
    if (wire) headers['content-type'] = wire.contentType;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: wire ? 'POST' : 'GET',
        headers,
        body: wire?.body,
        dispatcher,
        headersTimeout: config.requestTimeoutMs,
        bodyTimeout: config.requestTimeoutMs,
        signal: AbortSignal.timeout(config.connectTimeoutMs + config.requestTimeoutMs),
      });
    } catch (err) {
      throw classifyError(err, { redact, what });
    }
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    let body = { text: '', truncated: false };
    try {
      body = await readText(res.body);
    } catch (err) {
      // A broken body after a 2xx leaves the outcome unknown; after an error status the status line already says it.
      if (ok) throw classifyError(err, { redact, what });
    }
    return { status: res.statusCode, ...body, retryAfterMs: parseRetryAfter(res.headers['retry-after']) };
  }

  async function withSafeRetries<T>(attempt: () => Promise<T>): Promise<T> {
    for (let n = 1; ; n++) {
      try {
        return await attempt();
      } catch (thrown) {
        const err = classifyError(thrown);
        err.attempts = n;
        if (err.verdict !== 'not_sent' || n > config.safeRetries) throw err;
        await sleep(retryDelay(n, backoffMs, maxRetryDelayMs, err.retryAfterMs));
      }
    }
  }

  /** One exchange, retried while safe: send, classify the status, then read the answer or say why it is unusable. */
  async function exchange<T extends object>(call: Exchange<T>): Promise<T> {
    const { url, wire, redact, what } = call;
    return withSafeRetries(async () => {
      const answer = await send(url, wire, redact, what);
      const early = call.before?.(answer);
      if (early) return early;
      const failure = classifyResponse(answer.status, answer.text, { redact, retryAfterMs: answer.retryAfterMs, what });
      if (failure) throw failure;
      const read = answer.truncated ? 'the answer is too large' : call.read(parseJson(answer.text));
      if (typeof read !== 'string') return read;
      throw call.unusable(answer, read);
    });
  }

  async function initiate({ paymentId, request: req, callbackUrl }: InitiationRequest): Promise<ProviderAck> {
    const redact = createRedactor([config.token, ...personalValues(req)]);
    const what = `${req.type} initiation`;
    const wire = encodeInitiation(req, paymentId, callbackUrl, config);
    return exchange({
      url: wire.url,
      wire,
      redact,
      what,
      read: (json) => {
        const ack = parseAck(req.type, json);
        return ack ? { ...ack, message: redact(ack.message) } : 'unrecognised';
      },
      unusable: (answer) =>
        new ProviderError(
          `${what} answered HTTP ${answer.status} with an unrecognised acknowledgement; the payment may have been created`,
          {
            verdict: 'unknown',
            httpStatus: answer.status,
            providerMessage: describeBody(answer.text, redact).message,
          },
        ),
    });
  }

  async function checkStatus(query: StatusQuery): Promise<StatusCheck | null> {
    const asked =
      query.transactionId && statusUrl
        ? { by: 'transaction_id' as const, value: query.transactionId, url: statusUrl }
        : query.reference && statusByReferenceUrl
          ? { by: 'reference' as const, value: query.reference, url: statusByReferenceUrl }
          : undefined;
    if (!asked) return null;
    const redact = createRedactor([config.token]);
    const what = `status query by ${asked.by}`;
    return exchange<StatusCheck>({
      url: fillTemplate(asked.url, asked.by, asked.value),
      redact,
      what,
      before: (answer) => {
        if (answer.status !== 404) return undefined;
        const message = describeBody(answer.text, redact).message ?? null;
        return { state: 'not_found', transactionId: query.transactionId, statusCode: null, message, amount: null };
      },
      read: (json) => readStatusAnswer(json, asked),
      unusable: (answer, why) =>
        new ProviderError(`${what} answered HTTP ${answer.status} unusably: ${why}`, {
          verdict: 'unknown',
          httpStatus: answer.status,
        }),
    });
  }

  async function listBanks(): Promise<Bank[]> {
    const what = 'bank list';
    return exchange({
      url: banksUrl,
      redact: createRedactor([config.token]),
      what,
      read: (json) => {
        const banks = parseBankList(json);
        return banks && banks.length > 0 ? banks : 'no banks';
      },
      unusable: (answer) =>
        new ProviderError(`${what} answered HTTP ${answer.status} without a list of banks`, {
          verdict: 'unknown',
          httpStatus: answer.status,
        }),
    });
  }

  return {
    initiate,
    checkStatus,
    listBanks,
    canCheckStatus: statusUrl !== undefined || statusByReferenceUrl !== undefined,
    close: async () => {
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}

async function readText(body: Dispatcher.ResponseData['body']): Promise<{ text: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) return { text: Buffer.concat(chunks).toString('utf8'), truncated: true };
    chunks.push(chunk);
  }
  return { text: Buffer.concat(chunks).toString('utf8'), truncated: false };
}

function validateConfig(config: ProviderConfig): void {
  const problems: string[] = [];
  for (const key of ['baseUrl', 'mobileMoneyBaseUrl'] as const) {
    if (!isHttpUrl(config[key])) problems.push(`${key} must be an http(s) URL`);
  }
  if (!/^[\x21-\x7e]+$/.test(config.token)) problems.push('token must be non-empty printable ASCII');
  for (const key of ['connectTimeoutMs', 'requestTimeoutMs'] as const) {
    if (!Number.isFinite(config[key]) || config[key] <= 0) problems.push(`${key} must be a positive number`);
  }
  if (!Number.isInteger(config.safeRetries) || config.safeRetries < 0) {
    problems.push('safeRetries must be a whole number, 0 or more');
  }
  const templates = [
    ['statusUrl', config.statusUrl, 'transaction_id'],
    ['statusByReferenceUrl', config.statusByReferenceUrl, 'reference'],
  ] as const;
  for (const [key, value, placeholder] of templates) {
    if (!value) continue;
    const filled = fillTemplate(value.startsWith('/') ? join(config.baseUrl, value) : value, placeholder, 'x');
    if (!value.includes(`{${placeholder}}`) || !isHttpUrl(filled)) {
      problems.push(`${key} must be an http(s) URL template containing {${placeholder}}`);
    }
  }
  if (problems.length > 0) throw new Error(`invalid provider configuration: ${problems.join('; ')}`);
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}
