import { STATUS_CODES } from 'node:http';
import type { Server } from 'node:http';
import type { FastifyHttpOptions, FastifyInstance } from 'fastify';
import type { ErrorCode } from '../domain/api-resources';
import { ApiError, envelope, errorHandler } from './http-errors';
import { logIncoming } from './request-logging';
import type { RouteSpec } from './route-spec';

// The answers HTTP itself gives, whatever the route: a method the path does not declare (405 with Allow), a URL
// too long (414), a request head too large (431), a merchant past its rate limit (429). The OpenAPI document shows
// them from here too.

/** The longest URL answered, path and query: a longer one is a 414 (`uri_too_long`). */
export const MAX_URL_LENGTH = 8 * 1024;

/** The longest path parameter, as sent (percent-encoded): a 200-character id of 3-byte characters fits. */
export const MAX_PARAM_LENGTH = 2048;

/** The largest request head, URL and headers together (Node's `maxHeaderSize`, its default): a 431 past it. */
export const MAX_HEAD_BYTES = 16 * 1024;

/**
 * Fastify's options for its own refusals before any route (a path parameter too long, a URL it cannot decode): in
 * the envelope, with the request id, as every other answer (no hook runs on these). Node's refusals of a request it
 * could not parse (a head too large, not HTTP, too slow) are in the envelope too, without a request id: there is
 * no request.
 */
export const protocolOptions: Pick<
  FastifyHttpOptions<Server>,
  'http' | 'routerOptions' | 'frameworkErrors' | 'clientErrorHandler'
> = {
  http: { maxHeaderSize: MAX_HEAD_BYTES },
  routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
  frameworkErrors: (err, request, reply) => {
    logIncoming(request);
    void reply.header('x-request-id', request.id);
    errorHandler(err, request, reply);
  },
  clientErrorHandler: (err, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    // Never logged: the error holds the raw head, keys included.
    if (socket.writable) socket.write(rawAnswer(unparsedRequestError(err.code)));
    socket.destroy();
  },
};

/** What a request Node could not parse is answered: by the parser's error code. */
function unparsedRequestError(code: string): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return new ApiError(431, 'headers_too_large', `the URL and headers are larger than ${MAX_HEAD_BYTES} bytes`);
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError(408, 'bad_request', 'the request came too slowly');
  return new ApiError(400, 'bad_request', 'the request is not valid HTTP/1.1');
}

/** An error answer written straight to the socket, then closed. */
function rawAnswer(error: ApiError): string {
  const body = JSON.stringify(envelope(error));
  const head = [
    `HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode] ?? ''}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

/** Refuses a URL longer than MAX_URL_LENGTH with 414, before any route reads it. */
export function refuseLongUrls(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    done(
      request.raw.url && request.raw.url.length > MAX_URL_LENGTH
        ? new ApiError(414, 'uri_too_long', `the URL is longer than ${MAX_URL_LENGTH} characters`)
        : undefined,
    );
  });
}

/**
 * Answers a request no route takes: a 405 with `Allow` (the methods the path has) when the path is a route's, a
 * 404 otherwise. `routes` are the app's routes, read on the first such request (all are registered by then).
 */
export function answerUnknownRoutes(
  app: FastifyInstance,
  routes: () => readonly { method: string; url: string }[],
): void {
  let patterns: { pattern: RegExp; method: string }[] | undefined;
  app.setNotFoundHandler((request, reply) => {
    patterns ??= routes().map(({ method, url }) => ({ method, pattern: routePattern(url) }));
    const path = request.url.split('?')[0] ?? '';
    const allowed = [...new Set(patterns.filter((p) => p.pattern.test(path)).map((p) => p.method))].sort();
    if (allowed.length === 0) {
      void reply.status(404).send(envelope(new ApiError(404, 'not_found', 'no such route')));
      return;
    }
    void reply
      .status(405)
      .header('allow', allowed.join(', '))
      .send(envelope(new ApiError(405, 'method_not_allowed', `${request.method} is not a method of this path`)));
  });
}

/** A fastify route URL (`/v1/payments/:id`, `/docs/*`) as a regular expression of the paths it takes. */
function routePattern(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) =>
      segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  return new RegExp(`^${source}$`);
}

/** The error answers HTTP itself adds to a route: 414 and 431, and 429 where a merchant may call it. */
export function protocolErrors(spec: RouteSpec): Partial<Record<number, readonly ErrorCode[]>> {
  const merchant = spec.auth === 'merchant' || spec.auth === 'merchant_or_operator';
  return { 414: ['uri_too_long'], 431: ['headers_too_large'], ...(merchant ? { 429: ['rate_limited'] } : {}) };
}

/** The headers each error status carries, required: by their names in the document, each with its description. */
export const ERROR_HEADERS: Partial<Record<number, Record<string, string>>> = {
  429: {
    'retry-after': 'seconds until the window ends and the merchant may send again',
    'ratelimit-limit': "the merchant's requests per window (MERCHANT_RATE_LIMITS, RATE_LIMIT_WINDOW)",
    'ratelimit-remaining': 'requests left in this window: 0',
    'ratelimit-reset': 'seconds until the window ends',
  },
  503: { 'retry-after': 'seconds to wait before retrying' },
};

/** What the document's description says of the answers HTTP itself gives. */
export const PROTOCOL_NOTE =
  'A method a path does not declare is answered `405` (`method_not_allowed`) with `Allow` naming the methods it ' +
  `has. A URL longer than ${MAX_URL_LENGTH} characters, or a path parameter longer than ${MAX_PARAM_LENGTH}, is ` +
  `answered \`414\` (\`uri_too_long\`); a URL and headers together larger than ${MAX_HEAD_BYTES} bytes, \`431\` ` +
  "(`headers_too_large`). Each merchant's requests are limited per window, all its keys together: " +
  'every answer to a merchant carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds), ' +
  'and a request past the limit is answered `429` (`rate_limited`) with `Retry-After`.';

/** The document's reusable answer for a method a path does not declare (OpenAPI has no operation to hang it on). */
export function methodNotAllowedResponse(errorSchemaRef: string): Record<string, unknown> {
  return {
    MethodNotAllowed: {
      description: 'Error: `method_not_allowed`. The path has no operation for this method.',
      headers: { Allow: { description: 'the methods the path has', required: true, schema: { type: 'string' } } },
      content: { 'application/json': { schema: { $ref: errorSchemaRef } } },
    },
  };
}
