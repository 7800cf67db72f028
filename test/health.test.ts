import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { PassThrough } from 'node:stream';
import { Client, Connection } from '@temporalio/client';
import { request } from 'undici';
import { eventually } from '../src/local/eventually';
import { Readiness } from '../src/payments/readiness';
import { freePort } from '../src/local/free-port';
import { openDatabase } from '../src/records/database';
import { startStack, testEnvironment } from './support/test-stack';
import type { Stack } from './support/test-stack';

interface ReadyBody {
  status: string;
  checks: { temporal: boolean; worker: boolean; provider: boolean; postgres: boolean };
  reasons: string[];
}

async function get(stack: Stack, path: string, headers: Record<string, string> = {}) {
  const response = await request(`${stack.baseUrl}${path}`, { headers });
  return { status: response.statusCode, headers: response.headers, body: (await response.body.json()) as ReadyBody };
}

describe('health', () => {
  const stacks: Stack[] = [];
  after(async () => {
    for (const stack of stacks) await stack.close();
  });

  it('is alive and ready with Temporal, a polling worker and a provider; echoes request ids', async () => {
    const stack = await startStack();
    stacks.push(stack);
    assert.deepEqual((await get(stack, '/healthz')).body, { status: 'ok' });
    const ready = await eventually(
      async () => {
        const answer = await get(stack, '/readyz');
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        return answer;
      },
      { timeoutMs: 15_000, what: 'the stack ready' },
    );
    assert.deepEqual(ready.body, {
      status: 'ready',
      checks: { temporal: true, worker: true, provider: true, postgres: true },
      reasons: [],
    });

    const given = await get(stack, '/healthz', { 'x-request-id': 'lb-7f3a.2' });
    assert.equal(given.headers['x-request-id'], 'lb-7f3a.2');
    const odd = await get(stack, '/healthz', { 'x-request-id': 'has spaces and "quotes"' });
    assert.match(String(odd.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  it('is not ready, with fixed reasons, when no worker polls and the provider does not answer; details only logged', async () => {
    const providerPort = await freePort();
    const log = new PassThrough();
    let logged = '';
    log.on('data', (chunk: Buffer) => (logged += chunk.toString()));
    const stack = await startStack({
      withoutWorker: true,
      logStream: log,
      env: {
        PROVIDER_BASE_URL: `http://127.0.0.1:${providerPort}`,
        PROVIDER_SAFE_RETRIES: '0',
        LOG_LEVEL: 'warn',
      },
    });
    stacks.push(stack);
    assert.equal((await get(stack, '/healthz')).status, 200);
    const response = await request(`${stack.baseUrl}/readyz`);
    const text = await response.body.text();
    assert.equal(response.statusCode, 503);
    assert.equal(response.headers['retry-after'], '2', 'a 503 says when to ask again');
    assert.deepEqual(JSON.parse(text), {
      status: 'not_ready',
      checks: { temporal: true, worker: false, provider: false, postgres: true },
      reasons: [
        'worker: no workflow or activity poller on the task queue',
        'provider: its bank list cannot be fetched',
      ],
    });
    // Nothing of the upstream's error, address or task queue reaches the (unauthenticated) caller; the log has it.
    for (const detail of [String(providerPort), 'ECONNREFUSED', stack.taskQueue]) {
      assert.ok(!text.includes(detail), `the answer does not show ${detail}`);
      assert.ok(logged.includes(detail), `the log shows ${detail}`);
    }
  });

  it('is not ready when Temporal cannot be reached', async () => {
    const connection = Connection.lazy({ address: `127.0.0.1:${await freePort()}` });
    const records = openDatabase(testEnvironment().databaseUrl);
    const readiness = new Readiness(new Client({ connection }), {
      namespace: 'default',
      taskQueue: 'payments',
      providerCheck: () => Promise.resolve(),
      records,
      timeoutMs: 1000,
    });
    const report = await readiness.check();
    await connection.close();
    await records.end();
    assert.equal(report.ready, false);
    assert.deepEqual(report.checks, { temporal: false, worker: false, provider: true, postgres: true });
    assert.deepEqual(report.reasons, ['temporal: unreachable', 'worker: unknown while Temporal is unreachable']);
    assert.match(report.details[0] ?? '', /^temporal: unreachable: .+/, 'what it ran into, for the log');
  });

  it('is not ready, naming PostgreSQL, when the records cannot be reached', async () => {
    const stack = await startStack();
    stacks.push(stack);
    const records = openDatabase(`postgres://payments:secret@127.0.0.1:${await freePort()}/payments`);
    const connection = await Connection.connect({ address: testEnvironment().address });
    const readiness = new Readiness(new Client({ connection }), {
      namespace: 'default',
      taskQueue: stack.taskQueue,
      providerCheck: () => Promise.resolve(),
      records,
      timeoutMs: 1000,
    });
    const report = await eventually(
      async () => {
        const checked = await readiness.check();
        assert.equal(checked.checks.worker, true, JSON.stringify(checked));
        return checked;
      },
      { timeoutMs: 15_000, what: 'the worker polling' },
    );
    await records.end();
    await connection.close();
    assert.equal(report.ready, false);
    assert.deepEqual(report.checks, { temporal: true, worker: true, provider: true, postgres: false });
    assert.deepEqual(report.reasons, ['postgres: unreachable']);
    assert.match(report.details[0] ?? '', /^postgres: unreachable: .+/, 'what it ran into, for the log');
  });
});
