import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { z } from 'zod';
import type { ErrorCode } from '../domain/api-resources';
import type { RequestRules } from '../domain/requests';
import type { ApiKeys, Caller } from './auth';
import { ApiError, validationError } from './http-errors';

/** Who may call a route: a key kind, a token in the URL (provider callbacks, the Web UI's codec), or anyone. */
export type RouteAuth = 'merchant' | 'operator' | 'merchant_or_operator' | 'url_token' | 'none';

/** One answer of a route: its body's schema (documented by the schema's `id`), example and headers. */
export interface AnswerSpec {
  description: string;
  /** A zod schema with `.meta({ id })`: it becomes a named component. Absent: no body (or not JSON). */
  schema?: z.ZodType;
  contentType?: string;
  example?: unknown;
  /** Response headers, each required on this answer. */
  headers?: Record<string, string>;
}

/** A request body: its schema for a merchant's limits (the route validates with it), its name and examples. */
export interface BodySpec {
  id: string;
  schema: (rules: RequestRules, merchantId: string) => z.ZodType;
  examples: Record<string, unknown>;
  /** Content types other than JSON that the route reads (callbacks). */
  alsoAccepts?: readonly string[];
  /** An example body of each of those content types, as text. */
  textExamples?: Readonly<Record<string, string>>;
  /** False: an absent body reads as `{}`. */
  required?: boolean;
  /** The message of the 400 naming the bad fields (default: "the request is invalid"). */
  invalid?: string;
  /** Documented only: the handler reads the body as it came (provider callbacks come in any encoding). */
  unchecked?: true;
}

/** One route of the API, declared once: it validates requests with these schemas, the OpenAPI document shows them. */
export interface RouteSpec {
  operationId: string;
  method: 'GET' | 'POST' | 'OPTIONS';
  /** In fastify's form: `/v1/payments/:id`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  auth: RouteAuth;
  /** The 403's message when a key of the other kind calls a `merchant` or `operator` route. */
  forbidden?: string;
  /** Path parameters: a zod object of strings. */
  params?: z.ZodObject;
  /** The 404's message when the path's parameters cannot name anything (default: "no such route"). */
  notFound?: string;
  /** Query parameters: a zod object of scalars. */
  query?: z.ZodObject;
  body?: BodySpec;
  /** Answers other than errors, by status. */
  answers: Record<number, AnswerSpec>;
  /** Error answers (the error envelope), by status: the codes each may carry. */
  errors: Partial<Record<number, readonly ErrorCode[]>>;
  /** Fastify's own options, or built from the request rules when they are settings (an upload limit). */
  options?: RouteOptions | ((rules: RequestRules) => RouteOptions);
}

type RouteOptions = Pick<RouteShorthandOptions, 'bodyLimit' | 'logLevel'>;

/** What every route registration has at hand: the keys it authenticates with, the rules its bodies are built for. */
export interface RouteContext {
  keys: ApiKeys;
  rules: RequestRules;
}

type Parsed<T> = T extends z.ZodType ? z.output<T> : undefined;
type ParamsOf<S> = S extends { params: infer P } ? Parsed<P> : undefined;
type QueryOf<S> = S extends { query: infer Q } ? Parsed<Q> : undefined;
type BodyOf<S> = S extends { body: { unchecked: true } }
  ? unknown
  : S extends { body: { schema: (...args: never[]) => infer T } }
    ? Parsed<T>
    : undefined;
/** The path parameters as fastify hands them over: strings, not yet validated. */
type RawParamsOf<S> = S extends { params: infer P extends z.ZodObject } ? Record<keyof z.input<P>, string> : never;
type KeyCaller<A> = A extends 'merchant' | 'operator'
  ? Extract<Caller, { role: A }>
  : A extends 'merchant_or_operator'
    ? Caller
    : undefined;

/** What a handler gets: the caller, the validated params, query and body, and the request and reply. */
export interface RouteInput<S, C> {
  caller: C;
  params: ParamsOf<S>;
  query: QueryOf<S>;
  body: BodyOf<S>;
  request: FastifyRequest;
  reply: FastifyReply;
}

type LooseInput = {
  [K in keyof RouteInput<unknown, unknown>]: K extends 'request' | 'reply' ? RouteInput<unknown, unknown>[K] : unknown;
};
// Method signatures: their parameters are compared both ways, so every declared route's handler fits.
type LooseHandle = { handle(input: LooseInput, deps: unknown): unknown }['handle'];
type LooseVerify = { verify(params: unknown, deps: unknown, request: FastifyRequest): unknown }['verify'];
type Handle<S, D, C> = (input: RouteInput<S, C>, deps: D) => unknown;
/** A `url_token` route's check of the token in its path, before anything else is read; its answer is the caller. */
type Verify<S, D, C> = (params: RawParamsOf<S>, deps: D, request: FastifyRequest) => C;

/** A declared route with its handler, registered on an app with the dependencies its handler takes. */
export interface Route<D> extends RouteSpec {
  readonly register: (app: FastifyInstance, deps: D & RouteContext) => void;
}

/**
 * Declares a route with its handler. Registered, it authenticates the caller (a key, or the route's `verify` of a
 * URL token) as the request arrives, before its body is read, then validates params (a 404), query and body (a 400 naming the bad fields), and hands the typed
 * values to the handler.
 */
export function route<const S extends RouteSpec, D = unknown>(
  spec: S,
  handle: Handle<S, D, KeyCaller<S['auth']>>,
): Route<D>;
export function route<const S extends RouteSpec & { auth: 'url_token' }, D, C>(
  spec: S,
  steps: { verify: Verify<S, D, C>; handle: Handle<S, D, C> },
): Route<D>;
export function route(
  spec: RouteSpec,
  steps: LooseHandle | { verify: LooseVerify; handle: LooseHandle },
): Route<never> {
  const { handle, verify } = typeof steps === 'function' ? { handle: steps, verify: undefined } : steps;
  const register = (app: FastifyInstance, deps: RouteContext) => {
    const readBody = bodyReader(spec.body, deps.rules);
    app.route({
      ...(typeof spec.options === 'function' ? spec.options(deps.rules) : spec.options),
      method: spec.method,
      url: spec.path,
      // Before the body is read: an unauthenticated request is answered without its body ever being parsed.
      onRequest: (request, _reply, done) => {
        try {
          callers.set(request, verify ? verify(request.params, deps, request) : authenticate(spec, deps.keys, request));
          done();
        } catch (err) {
          done(err as Error);
        }
      },
      handler: async (request, reply) => {
        const caller = callers.get(request);
        const params = spec.params?.safeParse(request.params);
        if (params && !params.success) throw new ApiError(404, 'not_found', spec.notFound ?? 'no such route');
        const query = spec.query?.safeParse(request.query);
        if (query && !query.success) throw validationError(query.error, 'the filter is invalid');
        const body = readBody(request.body, merchantIdOf(caller));
        return handle({ caller, params: params?.data, query: query?.data, body, request, reply }, deps);
      },
    });
  };
  return { ...spec, register };
}

/** Each request's caller, found by its route's `onRequest` hook. */
const callers = new WeakMap<FastifyRequest, unknown>();

/** The merchant a request was authenticated as by its route, once its `onRequest` hooks have run; else undefined. */
export function merchantOf(request: FastifyRequest): string | undefined {
  const merchant = merchantIdOf(callers.get(request));
  return merchant === '*' ? undefined : merchant;
}

/** Registers routes on an app, each handler with the dependencies it takes. */
export function registerRoutes<D>(app: FastifyInstance, routes: readonly Route<D>[], deps: D & RouteContext): void {
  for (const declared of routes) declared.register(app, deps);
}

/** The caller of a key route, refused (401, 403) unless its key is of the kind the route declares. */
function authenticate(spec: RouteSpec, keys: ApiKeys, request: FastifyRequest): Caller | undefined {
  if (spec.auth === 'url_token' || spec.auth === 'none') return undefined;
  const caller = keys.authenticate(request);
  if (spec.auth !== 'merchant_or_operator' && caller.role !== spec.auth) {
    throw new ApiError(403, 'forbidden', spec.forbidden ?? 'this key may not call this route');
  }
  return caller;
}

/** Reads a route's body: validated with its schema for the caller's merchant (built once per merchant), or as sent. */
function bodyReader(spec: BodySpec | undefined, rules: RequestRules): (body: unknown, merchantId: string) => unknown {
  if (!spec) return () => undefined;
  if (spec.unchecked) return (body) => body;
  const schemas = new Map<string, z.ZodType>();
  return (body, merchantId) => {
    const schema = schemas.get(merchantId) ?? spec.schema(rules, merchantId);
    schemas.set(merchantId, schema);
    // Only an absent body reads as `{}`: a JSON `null` is a body, and not an object.
    const parsed = schema.safeParse(spec.required === false && body === undefined ? {} : body);
    if (!parsed.success) throw validationError(parsed.error, spec.invalid);
    return parsed.data;
  };
}

/** The merchant a caller is, or `*` (an operator's, or a route without a key: the default limits). */
function merchantIdOf(caller: unknown): string {
  const merchant = typeof caller === 'object' && caller !== null && 'merchantId' in caller ? caller.merchantId : '*';
  return typeof merchant === 'string' ? merchant : '*';
}
