import type { FastifyInstance, RouteHandlerMethod, RouteShorthandOptions } from 'fastify';
import type { z } from 'zod';
import type { ErrorCode } from '../domain/api-resources';
import type { RequestRules } from '../domain/requests';

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

/** A request body: its schema for a merchant's limits (the handler validates with it), its name and examples. */
export interface BodySpec {
  id: string;
  schema: (rules: RequestRules, merchantId: string) => z.ZodType;
  examples: Record<string, unknown>;
  /** Content types other than JSON that the route reads (callbacks). */
  alsoAccepts?: string[];
  required?: boolean;
}

/** One route of the API, declared once: the handlers register and validate with it, the OpenAPI document shows it. */
export interface RouteSpec {
  operationId: string;
  method: 'GET' | 'POST' | 'OPTIONS';
  /** In fastify's form: `/v1/payments/:id`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  auth: RouteAuth;
  /** Path parameters: a zod object of strings. */
  params?: z.ZodObject;
  /** Query parameters: a zod object of scalars. */
  query?: z.ZodObject;
  body?: BodySpec;
  /** Answers other than errors, by status. */
  answers: Record<number, AnswerSpec>;
  /** Error answers (the error envelope), by status: the codes each may carry. */
  errors: Partial<Record<number, readonly ErrorCode[]>>;
}

/** Registers a route's handler at the method and path its spec declares. */
export function route(
  app: FastifyInstance,
  spec: RouteSpec,
  handler: RouteHandlerMethod,
  options: RouteShorthandOptions = {},
): void {
  app.route({ ...options, method: spec.method, url: spec.path, handler });
}
