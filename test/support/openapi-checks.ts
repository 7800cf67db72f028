import assert from 'node:assert/strict';
import Ajv2020 from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { publishedOpenApiDocument } from '../../src/http/published-openapi';

// Real answers against the OpenAPI document: the JSON Schema the document gives for a route and status, compiled
// with a JSON Schema 2020-12 validator independent of zod, so a wrong document (not only a wrong server) fails.

type Json = Record<string, unknown>;

/** The document as the server builds it with the default settings (the default merchant limit). */
export const apiDocument = publishedOpenApiDocument();

const BASE = 'https://openapi.test/document.json';
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: BASE, components: apiDocument.components });

/** Compiles a schema of the document, its `#/components/…` references pointing into the whole document. */
export function compileDocumented(schema: unknown): ValidateFunction {
  const text = JSON.stringify(schema).replaceAll('"#/components/', `"${BASE}#/components/`);
  return ajv.compile(JSON.parse(text) as Json);
}

interface Operation {
  template: string;
  pattern: RegExp;
  params: number;
  operation: Json;
}

const operations = new Map<string, Operation[]>();
for (const [template, methods] of Object.entries(apiDocument.paths as Record<string, Record<string, Json>>)) {
  for (const [method, operation] of Object.entries(methods)) {
    const pattern = new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]*')}$`);
    const list = operations.get(method.toUpperCase()) ?? [];
    list.push({ template, pattern, params: (template.match(/\{/g) ?? []).length, operation });
    operations.set(method.toUpperCase(), list);
  }
}

/** The documented operation a request reaches, by method and path (literal segments before parameters). */
export function documentedOperation(method: string, url: string): Operation | undefined {
  const path = url.split('?')[0] ?? '';
  return (operations.get(method.toUpperCase()) ?? [])
    .filter((op) => op.pattern.test(path))
    .sort((a, b) => a.params - b.params)[0];
}

/** The methods the document gives a path (HEAD with every GET). */
export function documentedMethods(url: string): string[] {
  const path = url.split('?')[0] ?? '';
  const methods = [...operations].filter(([, ops]) => ops.some((op) => op.pattern.test(path))).map(([m]) => m);
  return methods.includes('GET') ? [...methods, 'HEAD'] : methods;
}

const validators = new WeakMap<object, ValidateFunction>();
const ERROR = { $ref: '#/components/schemas/Error' };

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (or the text, when it is not JSON). */
  body: unknown;
}

/**
 * Fails unless the answer is one the document gives for this route: a documented status, its required headers,
 * and a body matching its schema (the error envelope with one of the route's codes, for errors). A request to no
 * documented route must be the envelope's 404 (or a refused body).
 */
export function assertDocumented(method: string, url: string, answer: Answer): void {
  const where = `${method} ${url.slice(0, 120)} → ${answer.status}`;
  if (method.toUpperCase() === 'HEAD') return;
  const op = documentedOperation(method, url);
  if (!op) {
    // A path the document has, by another method: the document's 405, with the methods it has in `Allow`.
    const methods = documentedMethods(url);
    if (methods.length > 0 && answer.status === 405) {
      const allow = String(answer.headers.allow ?? '').split(/,\s*/);
      for (const method of methods)
        assert.ok(allow.includes(method), `${where}: Allow ${allow.join(', ')} lacks ${method}`);
    } else {
      // Fastify reads the body before it finds no route: a bad body is refused as on any route.
      assert.ok([400, 404, 413, 414, 415].includes(answer.status), `${where}: no documented route, so a 404`);
    }
    const validate = validatorFor(ERROR);
    assert.ok(validate(answer.body), `${where}: ${ajv.errorsText(validate.errors)}`);
    return;
  }
  const responses = op.operation.responses as Record<string, Json>;
  const response = responses[String(answer.status)];
  assert.ok(response, `${where}: status not documented for ${op.template} (${Object.keys(responses).join(', ')})`);
  for (const [name, header] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
    if (header.required) assert.ok(answer.headers[name.toLowerCase()], `${where}: the ${name} header is missing`);
  }
  const content = response.content as Record<string, { schema: Json }> | undefined;
  const json = content?.['application/json'];
  if (!json) return;
  const contentType = String(answer.headers['content-type'] ?? '');
  assert.match(contentType, /^application\/json/, `${where}: content-type ${contentType}`);
  const validate = validatorFor(json.schema);
  assert.ok(
    validate(answer.body),
    `${where}: the body does not match the document: ${ajv.errorsText(validate.errors)}; ${JSON.stringify(answer.body).slice(0, 400)}`,
  );
}

function validatorFor(schema: Json): ValidateFunction {
  const known = validators.get(schema);
  if (known) return known;
  const validate = compileDocumented(schema);
  validators.set(schema, validate);
  return validate;
}
