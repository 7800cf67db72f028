import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { request } from 'undici';
import { ServerMetrics } from '../src/domain/metric-names';
import { scrape, total } from './support/prometheus';
import { MERCHANT_KEY, OPERATOR_KEY, OTHER_MERCHANT_KEY, startStack } from './support/test-stack';
import type { ApiResponse, Stack } from './support/test-stack';

// The HTTP API's limits and measures, from outside: each merchant's rate limit over two servers of one deployment
// (counted in Redis), and the request histogram on /metrics.

/** `other` may make 3 requests per 2-second window; `acme` and the rest keep the default. */
const LIMITED = { MERCHANT_RATE_LIMITS: 'other:3', RATE_LIMIT_WINDOW: '2s' };

let first: Stack;
let second: Stack;
before(async () => {
  first = await startStack({ withoutWorker: true, env: LIMITED });
  // A second server of the same deployment (task queue): the limit is one count for both.
  second = await startStack({ withoutWorker: true, taskQueue: first.taskQueue, env: LIMITED });
});
after(async () => {
  await second?.close();
  await first?.close();
});

const LIST = '/v1/payments?limit=1';
const header = (answer: ApiResponse, name: string) => Number(answer.headers[name]);

/** Waits until a new window starts for `other` (a 429's Retry-After), so a test starts from a full allowance. */
async function freshWindow(): Promise<void> {
  const probe = await first.api('GET', LIST, undefined, OTHER_MERCHANT_KEY);
  const wait = probe.status === 429 ? header(probe, 'retry-after') : header(probe, 'ratelimit-reset');
  await new Promise((resolve) => setTimeout(resolve, wait * 1000 + 100));
}

it('a merchant past its limit gets 429 with Retry-After and RateLimit headers, on every server, until the window ends', async () => {
  await freshWindow();
  const answers: ApiResponse[] = [];
  for (const stack of [first, second, first]) answers.push(await stack.api('GET', LIST, undefined, OTHER_MERCHANT_KEY));
  assert.deepEqual(
    answers.map((a) => a.status),
    [200, 200, 200],
  );
  assert.deepEqual(
    answers.map((a) => header(a, 'ratelimit-remaining')),
    [2, 1, 0],
    'one count across both servers',
  );
  for (const answer of answers) {
    assert.equal(header(answer, 'ratelimit-limit'), 3);
    assert.ok(header(answer, 'ratelimit-reset') >= 0 && header(answer, 'ratelimit-reset') <= 2);
  }

  const refused = await second.api<{ error: { code: string; message: string } }>(
    'GET',
    LIST,
    undefined,
    OTHER_MERCHANT_KEY,
  );
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error.code, 'rate_limited');
  const retryAfter = header(refused, 'retry-after');
  assert.ok(retryAfter >= 1 && retryAfter <= 2, `Retry-After: ${retryAfter}`);
  assert.equal(header(refused, 'ratelimit-remaining'), 0);
  assert.equal(header(refused, 'ratelimit-limit'), 3);
  // A refused request reads no body and starts nothing: a payment's creation is refused the same way.
  const creation = await first.api('POST', '/v1/payments', { not: 'even valid' }, OTHER_MERCHANT_KEY);
  assert.equal(creation.status, 429);

  // Another merchant and an operator are not held back by it.
  const acme = await first.api('GET', LIST, undefined, MERCHANT_KEY);
  assert.equal(acme.status, 200);
  assert.ok(header(acme, 'ratelimit-limit') > 3, 'acme has the default limit');
  const operator = await first.api('GET', LIST, undefined, OPERATOR_KEY);
  assert.equal(operator.status, 200);
  assert.equal(operator.headers['ratelimit-limit'], undefined, 'operators are not limited');

  // Once the window has ended the merchant is let through again.
  await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 100));
  const again = await second.api('GET', LIST, undefined, OTHER_MERCHANT_KEY);
  assert.equal(again.status, 200);
  assert.equal(header(again, 'ratelimit-remaining'), 2);
});

it('counts every request by route template, method and status in a histogram of seconds', async () => {
  await freshWindow();
  const count = async (labels: Record<string, string>) =>
    total(await scrape(first.metricsUrl), `${ServerMetrics.httpRequestDuration}_count`, labels);
  const read = { route: '/v1/payments/:id', method: 'GET', status: '404' };
  const unmatched = { route: 'unmatched', method: 'GET', status: '404' };
  const limited = { route: '/v1/payments', method: 'GET', status: '429' };
  const before = { read: await count(read), unmatched: await count(unmatched), limited: await count(limited) };

  for (const id of ['payment-acme-nope-1', 'payment-acme-nope-2']) {
    assert.equal((await first.api('GET', `/v1/payments/${id}`)).status, 404);
  }
  const nowhere = await request(`${first.baseUrl}/v9/nowhere-${Date.now()}`);
  assert.equal(nowhere.statusCode, 404);
  await nowhere.body.dump();
  for (let i = 0; i < 4; i++) await first.api('GET', LIST, undefined, OTHER_MERCHANT_KEY);

  const samples = await scrape(first.metricsUrl);
  const delta = {
    read: total(samples, `${ServerMetrics.httpRequestDuration}_count`, read) - before.read,
    unmatched: total(samples, `${ServerMetrics.httpRequestDuration}_count`, unmatched) - before.unmatched,
    limited: total(samples, `${ServerMetrics.httpRequestDuration}_count`, limited) - before.limited,
  };
  assert.deepEqual(delta, { read: 2, unmatched: 1, limited: 1 });
  const series = samples.filter((s) => s.name.startsWith(ServerMetrics.httpRequestDuration));
  assert.ok(
    series.some((s) => s.name.endsWith('_bucket') && s.labels.le === '0.005'),
    'buckets in seconds',
  );
  assert.ok(total(samples, `${ServerMetrics.httpRequestDuration}_sum`, read) > 0);
  // A route template, never a path: no id, no token, no unknown path becomes a label value.
  const routes = new Set(series.map((s) => s.labels.route));
  for (const route of routes) assert.match(route ?? '', /^(\/[\w.:-]*)+$|^unmatched$/, `route ${route}`);
  assert.ok(![...routes].some((route) => route?.includes('nope') || route?.includes('nowhere')));
  for (const s of series) assert.equal(s.labels.task_queue, first.taskQueue);
});
