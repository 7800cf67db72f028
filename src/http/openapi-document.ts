import { z } from 'zod';
import {
  batchProgressSchema,
  codecTokenAnswerSchema,
  errorEnvelopeSchema,
  failureSchema,
  fieldErrorSchema,
  paymentEventSchema,
  paymentListSchema,
  paymentResourceSchema,
  paymentSummarySchema,
  tallySchema,
} from '../domain/api-resources';
import {
  deliveryAttemptSchema,
  deliveryRecordSchema,
  eventDetailSchema,
  eventListSchema,
  eventResourceSchema,
} from '../domain/notification-delivery';
import type { RequestRules } from '../domain/requests';
import { APPROVAL_ROUTES } from './approval-routes';
import { BATCH_ROUTES } from './batch-routes';
import { CALLBACK_ROUTES } from './callback-routes';
import { CODEC_ROUTES } from './codec-routes';
import { DOCS_ROUTES } from './docs-routes';
import { EVENT_ROUTES } from './event-routes';
import { EXPORT_ROUTES } from './export-routes';
import { HEALTH_ROUTES } from './health-routes';
import { RETRY_AFTER_SECONDS } from './http-errors';
import { ERROR_HEADERS, methodNotAllowedResponse, PROTOCOL_NOTE, protocolErrors } from './protocol-answers';
import { OPERATOR_ROUTES } from './operator-routes';
import { notificationWebhooks } from './openapi-webhooks';
import { MERCHANT_NESTED_SCHEMAS } from '../domain/merchant-resources';
import { MERCHANT_ROUTES } from './merchant-account-routes';
import { WEBHOOK_ENDPOINT_ROUTES } from './webhook-endpoint-routes';
import { PAYMENT_ROUTES } from './payment-routes';
import type { RouteSpec } from './route-spec';

/** Every route of the server (each declared beside its handler in a *-routes.ts file), in the document's order. */
export const ALL_ROUTES: readonly RouteSpec[] = [
  ...PAYMENT_ROUTES,
  ...BATCH_ROUTES,
  ...APPROVAL_ROUTES,
  ...EVENT_ROUTES,
  ...EXPORT_ROUTES,
  ...OPERATOR_ROUTES,
  ...MERCHANT_ROUTES,
  ...WEBHOOK_ENDPOINT_ROUTES,
  ...CODEC_ROUTES,
  ...CALLBACK_ROUTES,
  ...HEALTH_ROUTES,
  ...DOCS_ROUTES,
];

/** A JSON value of the document (OpenAPI is JSON all the way down). */
type Json = Record<string, unknown>;

export interface OpenApiOptions {
  /** Where the server is reached (PUBLIC_BASE_URL); the document's `servers`. */
  serverUrl?: string;
  /** The request rules the documented request schemas are built with (the default merchant limit). */
  rules: RequestRules;
}

const COMPONENT = '#/components/schemas/';
/** What a 400 says of its fields: the schema or, where JSON Schema cannot state a rule, the field's `x-rule`. */
const INVALID_FIELDS =
  ' `error.fields` names each field that breaks its schema, or its `x-rule`: a rule JSON Schema cannot state ' +
  '(a checksum, the clock, configuration, another field), also given as its description.';

/** The OpenAPI 3.1 document of every route, from the zod schemas the routes validate with. */
export function openApiDocument(options: OpenApiOptions): Json {
  const requests = z.registry<{ id: string }>();
  const responses = z.registry<{ id: string }>();
  for (const schema of [
    paymentEventSchema,
    failureSchema,
    paymentResourceSchema,
    paymentSummarySchema,
    paymentListSchema,
    tallySchema,
    batchProgressSchema,
    fieldErrorSchema,
    errorEnvelopeSchema,
    codecTokenAnswerSchema,
    deliveryRecordSchema,
    deliveryAttemptSchema,
    eventResourceSchema,
    eventDetailSchema,
    eventListSchema,
    ...MERCHANT_NESTED_SCHEMAS,
  ]) {
    responses.add(schema, { id: idOf(schema) });
  }
  const bodies = new Map<RouteSpec, z.ZodType>();
  for (const spec of ALL_ROUTES) {
    if (spec.body && !bodies.has(spec)) {
      const schema = spec.body.schema(options.rules, '*');
      if (!requests.has(schema)) requests.add(schema, { id: spec.body.id });
      bodies.set(spec, schema);
    }
    for (const answer of Object.values(spec.answers)) {
      if (answer.schema && !responses.has(answer.schema)) responses.add(answer.schema, { id: idOf(answer.schema) });
    }
  }
  const webhooks = notificationWebhooks(responses);
  const uri = (id: string) => `${COMPONENT}${id}`;
  const schemas = {
    ...componentsOf(z.toJSONSchema(requests, { io: 'input', uri, unrepresentable: 'any', override: countFirstArrays })),
    ...componentsOf(z.toJSONSchema(responses, { io: 'output', uri })),
  };

  const paths: Record<string, Record<string, Json>> = {};
  for (const spec of ALL_ROUTES) {
    const path = spec.path.replace(/:(\w+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][spec.method.toLowerCase()] = operation(spec, bodies.get(spec));
  }
  return {
    openapi: '3.1.1',
    info: {
      title: 'Payment orchestrator API',
      version: '1',
      description:
        'Merchants create, read and list payments and payout batches; operators resolve payments in review. ' +
        'Keys go in `authorization: Bearer <key>`. Every error answer is the envelope ' +
        '`{"error":{"code","message","fields"}}`; every 503 carries `Retry-After`. Lists page with `limit` and ' +
        '`starting_after` while `has_more` is true. ' +
        PROTOCOL_NOTE,
    },
    ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
    tags: [...new Set(ALL_ROUTES.map((spec) => spec.tag))].map((name) => ({
      name,
      ...(name === 'Provider callbacks' ? { description: "The provider's side: not for merchants." } : {}),
    })),
    paths,
    webhooks,
    components: {
      schemas,
      responses: methodNotAllowedResponse(`${COMPONENT}Error`),
      securitySchemes: {
        merchantKey: { type: 'http', scheme: 'bearer', description: 'A merchant key (MERCHANT_API_KEYS).' },
        operatorKey: { type: 'http', scheme: 'bearer', description: "An operator's key (OPERATOR_API_KEYS)." },
      },
    },
  };
}

function operation(spec: RouteSpec, body: z.ZodType | undefined): Json {
  const parameters = [...parametersOf(spec.params, 'path'), ...parametersOf(spec.query, 'query')];
  const responses: Record<string, Json> = {};
  for (const [status, answer] of Object.entries(spec.answers)) {
    const id = answer.schema ? idOf(answer.schema) : undefined;
    const contentType = answer.contentType ?? 'application/json';
    responses[status] = {
      description: answer.description,
      ...(answer.headers ? { headers: headersOf(answer.headers) } : {}),
      ...(id || answer.contentType
        ? {
            content: {
              [contentType]: {
                schema: id ? { $ref: `${COMPONENT}${id}` } : { type: 'string' },
                ...(answer.example === undefined ? {} : { example: answer.example }),
              },
            },
          }
        : {}),
    };
  }
  for (const [status, codes] of Object.entries({ ...spec.errors, ...protocolErrors(spec) })) {
    if (!codes) continue;
    const headers = ERROR_HEADERS[Number(status)];
    responses[status] = {
      description: `Error: ${codes.map((code) => `\`${code}\``).join(', ')}.${status === '400' ? INVALID_FIELDS : ''}`,
      ...(headers ? { headers: headersOf(headers) } : {}),
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: `${COMPONENT}Error` },
              { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: codes } } } } },
            ],
          },
          example: { error: { code: codes[0], message: 'what went wrong, in words', fields: [] } },
        },
      },
    };
  }
  const security = {
    merchant: [{ merchantKey: [] }],
    operator: [{ operatorKey: [] }],
    merchant_or_operator: [{ merchantKey: [] }, { operatorKey: [] }],
    url_token: [],
    none: [],
  }[spec.auth];
  return {
    operationId: spec.operationId,
    tags: [spec.tag],
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    security,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(spec.body && body
      ? {
          requestBody: {
            required: spec.body.required ?? true,
            content: Object.fromEntries(
              ['application/json', ...(spec.body.alsoAccepts ?? [])].map((type, index) => [
                type,
                index === 0
                  ? {
                      schema: { $ref: `${COMPONENT}${spec.body?.id ?? ''}` },
                      examples: Object.fromEntries(
                        Object.entries(spec.body?.examples ?? {}).map(([name, value]) => [name, { value }]),
                      ),
                    }
                  : {
                      schema: { type: 'string' },
                      ...(spec.body?.textExamples?.[type] ? { example: spec.body.textExamples[type] } : {}),
                    },
              ]),
            ),
          },
        }
      : {}),
    responses,
  };
}

function parametersOf(shape: z.ZodObject | undefined, where: 'path' | 'query'): Json[] {
  if (!shape) return [];
  return Object.entries(shape.shape).map(([name, field]) => {
    const schema = strip(z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' }) as Json);
    const description = typeof schema.description === 'string' ? schema.description : undefined;
    delete schema.description;
    return {
      name,
      in: where,
      required: where === 'path' || !(field as z.ZodType).safeParse(undefined).success,
      ...(description ? { description } : {}),
      schema,
    };
  });
}

/** Headers whose values are whole seconds or counts, by their names in the document. */
const NUMERIC_HEADERS: Record<string, [string, Json]> = {
  'retry-after': ['Retry-After', { type: 'integer', minimum: 1, example: RETRY_AFTER_SECONDS }],
  'ratelimit-limit': ['RateLimit-Limit', { type: 'integer', minimum: 1 }],
  'ratelimit-remaining': ['RateLimit-Remaining', { type: 'integer', minimum: 0 }],
  'ratelimit-reset': ['RateLimit-Reset', { type: 'integer', minimum: 0 }],
};

function headersOf(headers: Record<string, string>): Json {
  return Object.fromEntries(
    Object.entries(headers).map(([name, description]) => {
      const [documented, schema] = NUMERIC_HEADERS[name] ?? [name, { type: 'string' }];
      return [documented, { description, required: true, schema }];
    }),
  );
}

/** A registry conversion's schemas without their `$id` and `$schema` (the document's components carry neither). */
function componentsOf(converted: { schemas: Record<string, unknown> }): Record<string, Json> {
  return Object.fromEntries(Object.entries(converted.schemas).map(([id, schema]) => [id, strip(schema as Json)]));
}

function strip(schema: Json): Json {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

function idOf(schema: z.ZodType): string {
  const id = z.globalRegistry.get(schema)?.id;
  if (!id) throw new Error('a documented answer schema needs .meta({ id })');
  return id;
}

/**
 * Batch items are counted before they are validated (`z.array(z.unknown()).max(n).pipe(z.array(item))`): an input
 * conversion would show the unknown items, so the items are documented from the pipe's output side.
 */
function countFirstArrays(ctx: { zodSchema: unknown; jsonSchema: Json }): void {
  const schema = ctx.zodSchema;
  if (!(schema instanceof z.ZodPipe) || !(schema.in instanceof z.ZodArray) || !(schema.out instanceof z.ZodArray)) {
    return;
  }
  if (!(schema.in.element instanceof z.ZodUnknown)) return;
  const element = strip(z.toJSONSchema(schema.out.element, { io: 'input' }));
  Object.assign(ctx.jsonSchema, { items: element });
}
