import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Ajv2020 from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { request } from 'undici';
import { invalidValues, validValue } from './support/schema-arbitraries';
import type { Resolve, Schema } from './support/schema-arbitraries';
import { MERCHANT_KEY, OPERATOR_KEY, startStack } from './support/test-stack';
import type { Stack } from './support/test-stack';

// The document is the contract: every operation of the served /openapi.json is driven from the document alone.
// Requests it calls valid (its schemas, validated by ajv, not zod) are never refused with a 400 — unless every field
// the 400 names carries an `x-rule`, a rule JSON Schema cannot state —, requests it calls invalid are refused (a 4xx),
// and every answer is one the document gives: a documented status, its headers, a body matching its schema.

type Json = Record<string, unknown>;

interface Parameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: Schema;
}

interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  body?: Schema;
  security: Json[];
  responses: Record<string, Json>;
}

/** One generated request: the values of its parameters, as sent, and its body. */
interface Generated {
  params: Record<string, string>;
  query: Record<string, string>;
  body?: unknown;
  key?: string;
}

const VALID_RUNS = 30;
const INVALID_RUNS = 40;
const BASE = 'https://contract.test/openapi.json';

describe('the document is the contract', () => {
  let stack: Stack;
  let document: Json;
  let compile: (schema: unknown) => ValidateFunction;
  let compileParameter: (schema: unknown) => ValidateFunction;
  const outcomes = new Map<string, number>();

  before(async () => {
    // Its own merchant: the endpoints the generated requests register must not notify the other files' payments.
    stack = await startStack({
      withoutWorker: true,
      env: { INITIATION_WAIT: '100ms', VOUCHER_CHANNELS: '7', MERCHANT_API_KEYS: `contract:${MERCHANT_KEY}` },
    });
    const served = await request(`${stack.baseUrl}/openapi.json`);
    assert.equal(served.statusCode, 200);
    document = (await served.body.json()) as Json;
    const rewrite = (schema: unknown) =>
      JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${BASE}#/components/`)) as Json;
    const strict = new Ajv2020({ strict: false, allErrors: true, multipleOfPrecision: 9 });
    // Parameters travel as text: `limit=20` is the integer 20.
    const coercing = new Ajv2020({ strict: false, allErrors: true, multipleOfPrecision: 9, coerceTypes: true });
    for (const ajv of [strict, coercing]) {
      addFormats(ajv);
      ajv.addSchema({ $id: BASE, components: document.components });
    }
    compile = (schema) => strict.compile(rewrite(schema));
    compileParameter = (schema) => coercing.compile(rewrite(schema));
  });
  after(async () => {
    const lines = [...outcomes.entries()].sort().map(([bucket, n]) => `#   ${bucket}: ${n}`);
    process.stdout.write(`# the document is the contract:\n${lines.join('\n')}\n`);
    await stack?.close();
  });

  it('drives every operation from /openapi.json and finds no disagreement', async (t) => {
    const resolve: Resolve = (ref) => {
      const name = ref.replace('#/components/schemas/', '');
      const schema = ((document.components as Json).schemas as Record<string, Schema>)[name];
      assert.ok(schema, ref);
      return schema;
    };
    const operations = operationsOf(document);
    assert.ok(operations.length >= 25, `${operations.length} operations`);
    for (const operation of operations) {
      await t.test(`${operation.method} ${operation.path}`, async () => {
        const { valid, invalid } = requestsFor(operation, resolve, compile, compileParameter);
        await fc.assert(
          fc.asyncProperty(valid, async (generated) => {
            const answer = await send(stack, operation, generated, compile);
            count(outcomes, operation, 'valid', answer.status);
            if (answer.status === 400) {
              const fields = fieldsOf(answer.body);
              const unexcused = fields.filter((path) => !excused(operation, path, resolve));
              assert.ok(
                fields.length > 0 && unexcused.length === 0,
                `a documented-valid request was refused: ${JSON.stringify(answer.body)}\n${describeRequest(generated)}`,
              );
            }
          }),
          { numRuns: VALID_RUNS, endOnFailure: true, includeErrorInReport: true },
        );
        if (!invalid) return;
        await fc.assert(
          fc.asyncProperty(invalid, async (generated) => {
            const answer = await send(stack, operation, generated, compile);
            count(outcomes, operation, 'invalid', answer.status);
            assert.ok(
              answer.status >= 400 && answer.status < 500,
              `a documented-invalid request was answered ${answer.status}\n${describeRequest(generated)}`,
            );
          }),
          { numRuns: INVALID_RUNS, endOnFailure: true, includeErrorInReport: true },
        );
      });
    }
  });

  it('takes path parameters as long as the document allows, percent-encoded: a 404 for no such payment, not a 414', async () => {
    const parameter = (document.paths as Record<string, Record<string, Json>>)['/v1/payments/{id}']?.get
      ?.parameters as Parameter[];
    const pattern = String(parameter[0]?.schema.pattern);
    const longest = Number(/\{1,(\d+)\}/.exec(pattern)?.[1]);
    assert.equal(longest, 200, pattern);
    const id = 'é'.repeat(longest);
    const answer = await request(`${stack.baseUrl}/v1/payments/${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${MERCHANT_KEY}` },
    });
    assert.equal(answer.statusCode, 404);
    assert.equal(((await answer.body.json()) as { error: { code: string } }).error.code, 'not_found');
  });
});

/** Every operation of the document, with its parameters and JSON body schema. */
function operationsOf(document: Json): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(methods)) {
      const content = (operation.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content;
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters: (operation.parameters ?? []) as Parameter[],
        body: content?.['application/json']?.schema,
        security: (operation.security ?? []) as Json[],
        responses: operation.responses as Record<string, Json>,
      });
    }
  }
  return operations;
}

/** The documented-valid requests of an operation, and the documented-invalid ones (each breaks one part). */
function requestsFor(
  operation: Operation,
  resolve: Resolve,
  compile: (schema: unknown) => ValidateFunction,
  compileParameter: (schema: unknown) => ValidateFunction,
): { valid: fc.Arbitrary<Generated>; invalid?: fc.Arbitrary<Generated> } {
  const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
  const checks = new Map(operation.parameters.map((p) => [p.name, compileParameter(p.schema)]));
  const bodyCheck = operation.body ? compile(operation.body) : undefined;
  const isValid = (generated: Generated) =>
    operation.parameters.every((p) => {
      const value = (p.in === 'path' ? generated.params : generated.query)[p.name];
      return value === undefined ? !p.required : checks.get(p.name)?.(value) === true;
    }) &&
    (!bodyCheck || bodyCheck(generated.body));
  const parts = (where: 'path' | 'query') =>
    fc.record(
      Object.fromEntries(
        operation.parameters
          .filter((p) => p.in === where)
          .map((p) => [p.name, validValue(p.schema, resolve).map(text)] as const),
      ),
      {
        requiredKeys: operation.parameters.filter((p) => p.in === where && p.required).map((p) => p.name),
      },
    ) as fc.Arbitrary<Record<string, string>>;
  const keys = operation.security.flatMap((scheme) =>
    Object.keys(scheme).map((name) => (name === 'operatorKey' ? OPERATOR_KEY : MERCHANT_KEY)),
  );
  const key = keys.length > 0 ? fc.constantFrom(...keys) : fc.constant(undefined);
  // A path parameter of an empty string or a dot segment addresses another route: not this operation's to answer.
  const reachable = (generated: Generated) =>
    Object.values(generated.params).every((value) => !['', '.', '..'].includes(value));
  const valid = fc
    .record({
      params: parts('path'),
      query: parts('query'),
      body: operation.body ? validValue(operation.body, resolve) : fc.constant(undefined),
      key,
    })
    .filter((generated) => reachable(generated) && isValid(generated));

  const breakers: fc.Arbitrary<Generated>[] = [];
  for (const parameter of operation.parameters) {
    for (const bad of invalidValues(parameter.schema, resolve)) {
      breakers.push(
        fc.tuple(valid, bad.map(text)).map(([generated, value]) => {
          const where = parameter.in === 'path' ? 'params' : 'query';
          return { ...generated, [where]: { ...generated[where], [parameter.name]: value } };
        }),
      );
    }
  }
  if (operation.body) {
    for (const bad of invalidValues(operation.body, resolve)) {
      breakers.push(fc.tuple(valid, bad).map(([generated, body]) => ({ ...generated, body })));
    }
  }
  const invalid =
    breakers.length > 0
      ? fc.oneof(...breakers).filter((generated) => reachable(generated) && !isValid(generated))
      : undefined;
  return { valid, invalid };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** Sends a generated request and checks its answer is one the document gives for the operation. */
async function send(
  stack: Stack,
  operation: Operation,
  generated: Generated,
  compile: (schema: unknown) => ValidateFunction,
): Promise<Answer> {
  const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(generated.params[name] ?? ''),
  );
  const query = new URLSearchParams(generated.query).toString();
  const response = await request(`${stack.baseUrl}${path}${query ? `?${query}` : ''}`, {
    method: operation.method as 'GET',
    headers: {
      ...(generated.key ? { authorization: `Bearer ${generated.key}` } : {}),
      ...(generated.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: generated.body === undefined ? undefined : JSON.stringify(generated.body),
  });
  const text = await response.body.text();
  const contentType = String(response.headers['content-type'] ?? '');
  const body: unknown = contentType.startsWith('application/json') ? JSON.parse(text) : text;
  const where = `${operation.method} ${path.slice(0, 100)} → ${response.statusCode}: ${text.slice(0, 300)}`;
  const documented = operation.responses[String(response.statusCode)] ?? operation.responses.default;
  assert.ok(documented, `${where}: not a documented status (${Object.keys(operation.responses).join(', ')})`);
  for (const [name, header] of Object.entries((documented.headers ?? {}) as Record<string, Json>)) {
    if (header.required) assert.ok(response.headers[name.toLowerCase()], `${where}: the ${name} header is missing`);
  }
  const content = documented.content as Record<string, { schema?: Schema }> | undefined;
  if (content) {
    const type = contentType.split(';')[0]?.trim() ?? '';
    assert.ok(content[type], `${where}: content-type ${contentType}, documented ${Object.keys(content).join(', ')}`);
    const schema = content[type]?.schema;
    if (type === 'application/json' && schema) {
      const validate = compile(schema);
      assert.ok(validate(body), `${where}: the body does not match the document: ${JSON.stringify(validate.errors)}`);
    }
  }
  return { status: response.statusCode, headers: response.headers, body };
}

/** The field paths a 400 names (`items.1.amount`). */
function fieldsOf(body: unknown): string[] {
  const fields = (body as { error?: { fields?: { path?: unknown }[] } }).error?.fields ?? [];
  return fields.map((field) => String(field.path));
}

/** True when a 400 naming this field is allowed for a documented-valid request: the field carries an `x-rule`. */
function excused(operation: Operation, path: string, resolve: Resolve): boolean {
  const parameter = operation.parameters.find((p) => p.name === path.replace(/^query\./, ''));
  if (parameter) return Boolean(parameter.schema['x-rule']);
  return operation.body !== undefined && carriesRule(operation.body, path, resolve);
}

/** True when the schema of the body field at `path`, or of a field enclosing it, carries an `x-rule`. */
function carriesRule(schema: Schema, path: string, resolve: Resolve): boolean {
  const at = (s: Schema, segments: string[]): boolean => {
    const resolved = typeof s.$ref === 'string' ? resolve(s.$ref) : s;
    if (resolved['x-rule']) return true;
    const branches = (resolved.oneOf ?? resolved.anyOf) as Schema[] | undefined;
    if (branches) return branches.some((branch) => at(branch, segments));
    const [head, ...rest] = segments;
    if (head === undefined) return false;
    const properties = resolved.properties as Record<string, Schema> | undefined;
    const next = /^\d+$/.test(head) ? (resolved.items as Schema | undefined) : properties?.[head];
    return next !== undefined && at(next, rest);
  };
  return at(schema, path === '' ? [] : path.split('.'));
}

function count(outcomes: Map<string, number>, operation: Operation, kind: string, status: number): void {
  const bucket = `${operation.method} ${operation.path} ${kind} → ${status}`;
  outcomes.set(bucket, (outcomes.get(bucket) ?? 0) + 1);
}

function describeRequest(generated: Generated): string {
  return JSON.stringify(generated).slice(0, 1500);
}
