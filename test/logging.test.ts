import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { request } from 'undici';
import { eventually } from '../src/local/eventually';
import type { PaymentResource } from '../src/domain/payment-model';
import { freePort } from '../src/local/free-port';
import { spawnEntry } from './support/process';
import type { EntryProcess } from './support/process';
import { paymentRequest } from './support/request-builders';
import {
  MERCHANT_KEY,
  OPERATOR_KEY,
  OPERATOR_NAME,
  SANDBOX_TOKEN,
  TEST_CALLBACK_KEYS,
  TEST_ENCRYPTION_KEYS,
  TEST_VAULT_KEYS,
  TEST_SIGNING_KEYS,
  startStack,
  testEnvironment,
} from './support/test-stack';
import type { SandboxRecord, Stack } from './support/test-stack';

// The worker and server processes as deployed: JSON lines on stdout, tied to requests and payments.

interface LogLine {
  level: number;
  msg: string;
  name?: string;
  reqId?: string;
  paymentId?: string;
  workflowId?: string;
  status?: string;
  req?: { url: string };
}

const CARD_NUMBER = '4111111111111111';
let stack: Stack;
let worker: EntryProcess;
let server: EntryProcess;
let baseUrl: string;

before(async () => {
  stack = await startStack({ withoutWorker: true });
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  // The worker hands the provider callback URLs of this server process.
  worker = spawnEntry('worker.ts', { ...stack.workerEnv, PUBLIC_BASE_URL: baseUrl, LOG_LEVEL: 'info' });
  server = spawnEntry('server.ts', {
    TEMPORAL_ADDRESS: testEnvironment().address,
    TASK_QUEUE: stack.taskQueue,
    PORT: String(port),
    HOST: '127.0.0.1',
    METRICS_PORT: String(await freePort()),
    PUBLIC_BASE_URL: baseUrl,
    PROVIDER_BASE_URL: stack.sandbox.url,
    PROVIDER_TOKEN: SANDBOX_TOKEN,
    ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
    VAULT_URL: testEnvironment().vaultUrl,
    DATABASE_URL: testEnvironment().databaseUrl,
    MERCHANT_API_KEYS: `acme:${MERCHANT_KEY}`,
    OPERATOR_API_KEYS: `${OPERATOR_NAME}:${OPERATOR_KEY}`,
    CALLBACK_KEYS: TEST_CALLBACK_KEYS,
    SIGNING_KEYS: TEST_SIGNING_KEYS,
    VAULT_KEYS: TEST_VAULT_KEYS,
    FINGERPRINT_SECRET: 'log-test-fingerprint-secret-0123456789abcdef',
    LOG_LEVEL: 'info',
  });
  await eventually(
    async () => {
      const response = await request(`${baseUrl}/readyz`);
      await response.body.text();
      assert.equal(response.statusCode, 200, `server not ready:\n${server.lines().join('\n')}`);
    },
    { timeoutMs: 30_000, what: 'the server ready' },
  );
});
after(async () => {
  await server?.stop();
  await worker?.stop();
  await stack?.close();
});

async function call(method: 'GET' | 'POST', path: string, requestId: string, body?: unknown) {
  const response = await request(`${baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${MERCHANT_KEY}`,
      'x-request-id': requestId,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.statusCode, body: (await response.body.json()) as PaymentResource };
}

const parse = (lines: string[]): LogLine[] =>
  lines.map((line) => {
    try {
      return JSON.parse(line) as LogLine;
    } catch {
      throw new Error(`not a JSON log line: ${line}`);
    }
  });

it('logs JSON lines carrying the request id, payment id and workflow id, and never a secret or card number', async () => {
  const created = await call('POST', '/v1/payments', 'log-test-create', paymentRequest('card_payment', '00'));
  assert.equal(created.status, 201);
  const id = created.body.id;
  await eventually(
    async () => assert.equal((await call('GET', `/v1/payments/${id}`, 'log-test-poll')).body.status, 'succeeded'),
    { timeoutMs: 30_000, what: `payment ${id} succeeded` },
  );
  assert.equal((await call('GET', `/v1/payments/${id}`, 'log-test-read')).status, 200);
  await new Promise((r) => setTimeout(r, 500));

  const serverLines = parse(server.lines());
  const createLines = serverLines.filter((l) => l.reqId === 'log-test-create');
  assert.deepEqual(
    createLines.map((l) => l.msg),
    ['incoming request', 'payment requested', 'request completed'],
  );
  for (const line of createLines.slice(1)) {
    assert.equal(line.paymentId, id, JSON.stringify(line));
    assert.equal(line.workflowId, id, JSON.stringify(line));
  }
  const readLines = serverLines.filter((l) => l.reqId === 'log-test-read');
  assert.deepEqual(
    readLines.map((l) => l.msg),
    ['incoming request', 'request completed'],
  );
  for (const line of readLines) assert.equal(line.paymentId, id, JSON.stringify(line));
  const accepted = serverLines.find((l) => l.msg === 'callback accepted');
  assert.ok(accepted?.reqId, 'the callback line has its request id');
  assert.equal(accepted.workflowId, id);
  const callbackUrls = serverLines.filter((l) => l.req?.url.startsWith('/v1/callbacks/')).map((l) => l.req?.url);
  assert.ok(callbackUrls.length >= 1);
  for (const url of callbackUrls) assert.match(url ?? '', /\/\[token\]$/);

  const workerLines = parse(worker.lines().filter((line) => !line.startsWith('worker: polling')));
  const about = workerLines.filter((l) => l.paymentId === id);
  assert.ok(about.some((l) => l.msg === 'payment started' && l.workflowId === id));
  assert.deepEqual(
    about.filter((l) => l.msg === 'payment status changed').map((l) => l.status),
    ['pending', 'succeeded'],
  );
  for (const line of [...serverLines, ...workerLines]) {
    assert.ok(line.level >= 30, `LOG_LEVEL=info lets no debug line through: ${JSON.stringify(line)}`);
  }

  const [transaction] = await stack
    .sandboxGet<SandboxRecord[]>('/sandbox/transactions')
    .then((all) => all.filter((t) => t.callback_url?.includes(id)));
  const token = transaction?.callback_url?.split('/').pop();
  assert.ok(token && token.length > 20);
  const everything = [...server.lines(), ...worker.lines()].join('\n');
  for (const secret of [CARD_NUMBER, MERCHANT_KEY, token]) assert.ok(!everything.includes(secret));
});
