import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createLogger } from '../src/logging';
import { installWorkerRuntime } from '../src/temporal/runtime';
import { freePort } from './support/free-port';
import { scrape } from './support/prometheus';
import { paymentRequest } from './support/requests';
import { startStack } from './support/stack';
import type { Stack } from './support/stack';

let stack: Stack;
let workerMetricsUrl: string;
before(async () => {
  const address = `127.0.0.1:${await freePort()}`;
  installWorkerRuntime({ logger: createLogger('worker', 'warn', false), metricsAddress: address });
  workerMetricsUrl = `http://${address}/metrics`;
  stack = await startStack();
});
after(() => stack?.close());

it('spike', async () => {
  for (const s of ['00', '88', '33']) {
    const r = await stack.api('POST', '/v1/payments', paymentRequest('mobile_money_debit', s));
    await stack.waitForStatus(r.body.id, ['succeeded', 'failed', 'needs_review']);
  }
  await new Promise((r) => setTimeout(r, 1500));
  const w = await scrape(workerMetricsUrl);
  console.log(w.filter((x) => /payment|provider/.test(x.name)).map((x) => JSON.stringify(x)).join('\n'));
  console.log([...new Set(w.map((x) => x.name))].join(' '));
  const s = await scrape(stack.metricsUrl);
  console.log(s.filter((x) => /payment/.test(x.name)).map((x) => JSON.stringify(x)).join('\n'));
});
