import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { request } from 'undici';
import { Readiness } from '../src/temporal/readiness';
import { freePort } from './support/free-port';
import { startStack } from './support/stack';
import type { Stack } from './support/stack';

interface ReadyBody {
  status: string;
  checks: { temporal: boolean; worker: boolean; provider: boolean };
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
    const deadline = Date.now() + 15_000;
    let ready = await get(stack, '/readyz');
    while (ready.status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      ready = await get(stack, '/readyz');
    }
    assert.equal(ready.status, 200, JSON.stringify(ready.body));
    assert.deepEqual(ready.body, {
      status: 'ready',
      checks: { temporal: true, worker: true, provider: true },
      reasons: [],
    });

    const given = await get(stack, '/healthz', { 'x-request-id': 'lb-7f3a.2' });
    assert.equal(given.headers['x-request-id'], 'lb-7f3a.2');
    const odd = await get(stack, '/healthz', { 'x-request-id': 'has spaces and "quotes"' });
    assert.match(String(odd.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  it('is not ready, with reasons, when no worker polls and the provider does not answer', async () => {
    const stack = await startStack({
      withoutWorker: true,
      env: { PROVIDER_BASE_URL: `http://127.0.0.1:${await freePort()}`, PROVIDER_SAFE_RETRIES: '0' },
    });
    stacks.push(stack);
    assert.equal((await get(stack, '/healthz')).status, 200);
    const ready = await get(stack, '/readyz');
    assert.equal(ready.status, 503);
    assert.equal(ready.body.status, 'not_ready');
    assert.deepEqual(ready.body.checks, { temporal: true, worker: false, provider: false });
    assert.equal(ready.body.reasons[0], `worker: no workflow or activity poller on task queue ${stack.taskQueue}`);
    assert.match(ready.body.reasons[1] ?? '', /^provider: its bank list cannot be fetched/);
  });

  it('is not ready when Temporal cannot be reached', async () => {
    const connection = Connection.lazy({ address: `127.0.0.1:${await freePort()}` });
    const readiness = new Readiness(new Client({ connection }), {
      namespace: 'default',
      taskQueue: 'payments',
      providerProblem: () => Promise.resolve(undefined),
      timeoutMs: 1000,
    });
    const report = await readiness.check();
    await connection.close();
    assert.equal(report.ready, false);
    assert.deepEqual(report.checks, { temporal: false, worker: false, provider: true });
    assert.match(report.reasons[0] ?? '', /^temporal: unreachable/);
    assert.equal(report.reasons[1], 'worker: unknown while Temporal is unreachable');
  });
});
