import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_MAX_AMOUNT } from '../src/config/setting-parsers';
import { ERROR_CODES } from '../src/domain/api-resources';
import { ALL_ROUTES } from '../src/http/openapi-document';
import { buildApp, registeredRoutes } from '../src/http/api-app';
import { PUBLISHED_OPENAPI_PATH, publishedOpenApiDocument } from '../src/http/published-openapi';
import type { Notifications } from '../src/payments/notification-deliveries';
import { ApiKeys } from '../src/http/auth';
import { MAX_HEAD_BYTES, MAX_PARAM_LENGTH, MAX_URL_LENGTH, protocolErrors } from '../src/http/protocol-answers';
import { AppError } from '../src/payments/app-errors';
import type { PaymentReads } from '../src/payments/payment-reads';
import type { Readiness } from '../src/payments/readiness';
import { launchChromium } from './support/browser';
import { apiDocument, assertDocumented, compileDocumented, documentedMethods } from './support/openapi-checks';
import { MERCHANT_KEY, OPERATOR_KEY } from './support/test-stack';

// The OpenAPI document without Temporal: an app built with stand-ins for the application layer, so the routes,
// the served document and the error answers are checked in milliseconds. Real answers are checked against the
// document in the API tests (test/support/test-stack.ts, hostile-input.test.ts) and the client's (client.test.ts).

type Json = Record<string, unknown>;
type ErrorBody = { error: { code: string; message: string; fields: unknown[] } };
const rules = {
  voucherChannels: [7],
  now: () => new Date(),
  maxAmount: () => DEFAULT_MAX_AMOUNT,
  batchUploadLimitBytes: 64 * 1024 * 1024,
};
const paths = apiDocument.paths as Record<string, Record<string, Json>>;

/** Writes `raw` to the server and reads its whole answer (the server closes the connection): status, headers, JSON. */
async function rawExchange(
  port: string,
  raw: string,
): Promise<{ status: number; headers: Record<string, string>; text: string; body: ErrorBody }> {
  const socket = connect(Number(port), '127.0.0.1');
  socket.write(raw);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, text, body: JSON.parse(body) as ErrorBody };
}

/** Readiness: not ready. Payments: Temporal unreachable. Everything else is never reached by these requests. */
function standInApp(): FastifyInstance {
  const unavailable = () => Promise.reject(new AppError('unavailable', 'Temporal is unreachable right now'));
  return buildApp({
    paymentReads: { get: unavailable, page: unavailable } as unknown as PaymentReads,
    payments: {} as never,
    batches: {} as never,
    notifications: { events: unavailable, event: unavailable } as unknown as Notifications,
    exports: {} as never,
    banks: {} as never,
    keys: new ApiKeys([{ merchantId: 'acme', key: MERCHANT_KEY }], [{ name: 'ada.ops', key: OPERATOR_KEY }]),
    merchants: {} as never,
    endpoints: {} as never,
    tokens: {} as never,
    rules,
    logger: false,
    metrics: { request: () => undefined } as never,
    readiness: {
      check: () =>
        Promise.resolve({
          ready: false,
          checks: { temporal: false, worker: false, provider: true, postgres: true },
          reasons: ['temporal: unreachable', 'worker: unknown while Temporal is unreachable'],
          details: [],
        }),
    } as unknown as Readiness,
    codec: { codec: {} as never, corsOrigins: [] },
    publicBaseUrl: 'https://payments.example',
  });
}

describe('the OpenAPI document', () => {
  let app: FastifyInstance;
  before(async () => {
    app = standInApp();
    await app.ready();
  });
  after(() => app?.close());

  it('is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)', async () => {
    const served = await app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(served.statusCode, 200);
    const document = served.json<Json>();
    assert.equal(document.openapi, '3.1.1');
    assert.deepEqual(document.servers, [{ url: 'https://payments.example' }]);
    const result = await new Validator().validate(document);
    assert.deepEqual(result.errors ?? [], []);
    assert.equal(result.valid, true);
  });

  it(`is the committed ${PUBLISHED_OPENAPI_PATH} (but for servers): \`npm run openapi\` rewrites it`, () => {
    // What a server with the default settings serves (this file's app has a voucher channel of its own).
    const served = JSON.parse(JSON.stringify(publishedOpenApiDocument())) as Json;
    const committed = JSON.parse(readFileSync(join(__dirname, '..', PUBLISHED_OPENAPI_PATH), 'utf8')) as Json;
    assert.equal(committed.servers, undefined);
    assert.deepEqual(served, committed, `${PUBLISHED_OPENAPI_PATH} is stale: run \`npm run openapi\``);
  });

  it('lists every route the server registers, and no other', () => {
    const registered = registeredRoutes(app)
      .filter((r) => r.method !== 'HEAD')
      .map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`)
      .sort();
    const documented = Object.entries(paths)
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    assert.ok(registered.length >= 20, registered.join('\n'));
    assert.deepEqual(registered, documented);
  });

  it('documents every error code, each route with the codes it answers, every 503 with Retry-After', () => {
    const used = new Set(
      ALL_ROUTES.flatMap((spec) => Object.values({ ...spec.errors, ...protocolErrors(spec) }).flat()),
    );
    assert.deepEqual(
      [...ERROR_CODES].filter((code) => !used.has(code)),
      [],
    );
    for (const [path, methods] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const responses = operation.responses as Record<string, Json>;
        assert.ok(responses['500'], `${method} ${path} documents its 500`);
        const unavailable = responses['503'];
        if (unavailable) assert.ok((unavailable.headers as Json | undefined)?.['Retry-After'], `${method} ${path}`);
      }
    }
    // docs/api.md's table names every code too.
    const apiMd = readFileSync(join(__dirname, '..', 'docs', 'api.md'), 'utf8');
    for (const code of ERROR_CODES) assert.match(apiMd, new RegExp(`\\| \`${code}\` +\\|`), `docs/api.md: ${code}`);
  });

  it('has examples that validate against their schemas, in the document and in zod', () => {
    let checked = 0;
    for (const spec of ALL_ROUTES) {
      const operation = paths[spec.path.replace(/:(\w+)/g, '{$1}')]?.[spec.method.toLowerCase()];
      assert.ok(operation, spec.operationId);
      if (spec.body) {
        const content = (operation.requestBody as { content: Record<string, { schema: Json; examples: Json }> })
          .content['application/json'];
        assert.ok(content);
        const validate = compileDocumented(content.schema);
        for (const [name, example] of Object.entries(spec.body.examples)) {
          assert.ok(validate(example), `${spec.operationId} ${name}: ${JSON.stringify(validate.errors)}`);
          const parsed = spec.body.schema(rules, 'acme').safeParse(example);
          assert.ok(parsed.success, `${spec.operationId} ${name}: ${parsed.error?.message}`);
          checked++;
        }
      }
      for (const [status, answer] of Object.entries(spec.answers)) {
        if (answer.example === undefined || !answer.schema) continue;
        const response: Json | undefined = (operation.responses as Record<string, Json>)[status];
        const content: Json | undefined = (response?.content as Record<string, Json> | undefined)?.['application/json'];
        assert.deepEqual(content?.example, answer.example);
        const validate = compileDocumented(content?.schema);
        assert.ok(validate(answer.example), `${spec.operationId} ${status}: ${JSON.stringify(validate.errors)}`);
        const parsed = answer.schema.safeParse(answer.example);
        assert.ok(parsed.success, `${spec.operationId} ${status}: ${parsed.error?.message}`);
        checked++;
      }
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        const content = (response.content as Record<string, { schema: Json; example?: unknown }> | undefined)?.[
          'application/json'
        ];
        if (!content || content.example === undefined || Object.keys(spec.answers).includes(status)) continue;
        const validate = compileDocumented(content.schema);
        assert.ok(validate(content.example), `${spec.operationId} ${status}: ${JSON.stringify(validate.errors)}`);
        checked++;
      }
    }
    assert.ok(checked > 60, `${checked} examples`);
  });

  it('serves the rendered reference at /docs from local files only, under a strict CSP', async () => {
    const page = await app.inject({ method: 'GET', url: '/docs' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(page.body, /https?:\/\//, 'nothing from another host');
    const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
    assert.ok(sources.length >= 3);
    for (const source of sources) {
      const asset = await app.inject({ method: 'GET', url: new URL(source, 'http://x/docs').pathname });
      assert.equal(asset.statusCode, 200, source);
      assert.ok(asset.rawPayload.length > 0, source);
    }
    const init = await app.inject({ method: 'GET', url: '/docs/assets/init.js' });
    assert.match(init.body, /openapi\.json/);
    assert.match(init.body, /validatorUrl: null/, 'no call to an online validator');
    const missing = await app.inject({ method: 'GET', url: '/docs/assets/..%2fpackage.json' });
    assert.equal(missing.statusCode, 404);
  });

  it('renders /docs in headless Chromium: every operation, nothing fetched from another host, no script error', async () => {
    const served = standInApp();
    const address = await served.listen({ port: 0, host: '127.0.0.1' });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const requests: string[] = [];
      const errors: string[] = [];
      page.on('request', (request) => requests.push(request.url()));
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      page.on('pageerror', (error) => errors.push(String(error)));
      await page.goto(`${address}/docs`);
      await page.waitForSelector('.opblock');
      const operations = Object.values(paths).flatMap((methods) => Object.keys(methods)).length;
      // Swagger UI shows each notification event type (the document's `webhooks`) as an operation too.
      const webhooks = Object.keys(apiDocument.webhooks as Json).length;
      assert.equal(await page.locator('.opblock').count(), operations + webhooks);
      assert.match((await page.locator('.title').first().textContent()) ?? '', /OAS 3\.1/);
      assert.ok(requests.length >= 4 && requests.every((url) => url.startsWith(`${address}/`)), requests.join('\n'));
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
      await served.close();
    }
  });

  it('answers every 503 with Retry-After and the envelope, as documented', async () => {
    const cases = [
      { url: '/v1/payments/payment-acme-x', key: MERCHANT_KEY },
      { url: '/v1/payments?limit=5', key: OPERATOR_KEY },
      { url: '/readyz' },
    ];
    for (const { url, key } of cases) {
      const answer = await app.inject({
        method: 'GET',
        url,
        headers: key ? { authorization: `Bearer ${key}` } : {},
      });
      assert.equal(answer.statusCode, 503, url);
      assert.equal(answer.headers['retry-after'], '2', url);
      const headers = Object.fromEntries(Object.entries(answer.headers).map(([name, value]) => [name, String(value)]));
      assertDocumented('GET', url, { status: answer.statusCode, headers, body: answer.json() });
    }
  });

  it('answers a method a path does not declare with 405 and Allow, as the document says', async () => {
    const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json<Json>();
    assert.match(String((document.info as Json).description), /`405`.*`Allow`/);
    const components = document.components as { responses: Record<string, { headers: Json }> };
    assert.ok(components.responses.MethodNotAllowed?.headers.Allow);
    const cases = [
      { method: 'DELETE', url: '/v1/payments/payment-acme-x', allow: 'GET, HEAD' },
      { method: 'PUT', url: '/v1/payments', allow: 'GET, HEAD, POST' },
      { method: 'PATCH', url: '/openapi.json', allow: 'GET, HEAD' },
      { method: 'GET', url: '/v1/payments/payment-acme-x/resolve', allow: 'POST' },
    ] as const;
    for (const { method, url, allow } of cases) {
      const answer = await app.inject({ method, url, headers: { authorization: `Bearer ${MERCHANT_KEY}` } });
      assert.equal(answer.statusCode, 405, `${method} ${url}`);
      assert.equal(answer.headers.allow, allow, `${method} ${url}`);
      assert.equal(answer.json<{ error: { code: string } }>().error.code, 'method_not_allowed');
      assert.deepEqual(documentedMethods(url).sort(), allow.split(', '), `${url}: Allow is what the document has`);
      const headers = Object.fromEntries(Object.entries(answer.headers).map(([name, value]) => [name, String(value)]));
      assertDocumented(method, url, { status: answer.statusCode, headers, body: answer.json() });
    }
    const nowhere = await app.inject({ method: 'DELETE', url: '/v2/nothing' });
    assert.equal(nowhere.statusCode, 404, 'a path no route has is still a 404');
  });

  it('answers a URL or a path parameter too long with a documented 414', async () => {
    const cases = [
      `/v1/payments?reference=${'r'.repeat(MAX_URL_LENGTH)}`,
      `/v1/payments/${'p'.repeat(MAX_PARAM_LENGTH + 1)}`,
    ];
    for (const url of cases) {
      const answer = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${MERCHANT_KEY}` } });
      assert.equal(answer.statusCode, 414, url.slice(0, 40));
      assert.equal(answer.json<{ error: { code: string } }>().error.code, 'uri_too_long');
      assert.ok(answer.headers['x-request-id'], `answered as any other request: ${url.slice(0, 30)}`);
      const headers = Object.fromEntries(Object.entries(answer.headers).map(([name, value]) => [name, String(value)]));
      assertDocumented('GET', url, { status: answer.statusCode, headers, body: answer.json() });
    }
    const longest = await app.inject({
      method: 'GET',
      url: `/v1/payments/${'p'.repeat(200)}`,
      headers: { authorization: `Bearer ${MERCHANT_KEY}` },
    });
    assert.notEqual(longest.statusCode, 414, 'the longest id a payment can have fits');
    assert.equal(
      longest.json<{ error: { code: string } }>().error.code,
      'not_found',
      'it is looked up (and not found)',
    );
  });

  it('answers a head too large (431) or a request that is not HTTP (400) in the envelope, over a real socket', async () => {
    const served = standInApp();
    const address = await served.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = new URL(address);
      // Under MAX_URL_LENGTH each, past MAX_HEAD_BYTES together: Node refuses the head before any route reads it.
      const url = `/v1/payments?reference=${'r'.repeat(MAX_URL_LENGTH - 100)}`;
      const key = `Bearer ${'k'.repeat(MAX_HEAD_BYTES - MAX_URL_LENGTH + 200)}`;
      const tooLarge = await rawExchange(
        port,
        `GET ${url} HTTP/1.1\r\nhost: x\r\nconnection: close\r\nauthorization: ${key}\r\n\r\n`,
      );
      assert.equal(tooLarge.status, 431);
      assert.equal(tooLarge.body.error.code, 'headers_too_large');
      assert.deepEqual(tooLarge.body.error.fields, []);
      assert.doesNotMatch(tooLarge.text, /kkkk/, 'nothing of the request is echoed');
      assertDocumented('GET', url, { status: tooLarge.status, headers: tooLarge.headers, body: tooLarge.body });

      const notHttp = await rawExchange(port, 'HELLO THERE\r\n\r\n');
      assert.equal(notHttp.status, 400);
      assert.equal(notHttp.body.error.code, 'bad_request');

      const fits = await rawExchange(port, `GET ${url} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
      assert.equal(fits.status, 401, 'the same URL with a short head reaches the route (and its key check)');
    } finally {
      await served.close();
    }
  });

  it('documents 429 with Retry-After and RateLimit headers on every operation a merchant may call, and only there', () => {
    let merchantOperations = 0;
    for (const spec of ALL_ROUTES) {
      const operation = paths[spec.path.replace(/:(\w+)/g, '{$1}')]?.[spec.method.toLowerCase()];
      const responses = operation?.responses as Record<string, Json>;
      assert.ok(responses['414'], `${spec.operationId} documents its 414`);
      const limited = responses['429'];
      if (spec.auth !== 'merchant' && spec.auth !== 'merchant_or_operator') {
        if (limited) assert.doesNotMatch(JSON.stringify(limited), /rate_limited/, spec.operationId);
        continue;
      }
      merchantOperations++;
      assert.match(JSON.stringify(limited), /rate_limited/, spec.operationId);
      const headers = Object.keys(limited?.headers as Json);
      assert.deepEqual(headers.sort(), ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After']);
    }
    assert.ok(merchantOperations >= 10, `${merchantOperations} merchant operations`);
  });
});
