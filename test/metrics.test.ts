import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { request } from 'undici';
import { eventually } from '../src/local/eventually';
import type { PaymentResource } from '../src/domain/payment-model';
import { PAYMENT_WORKFLOW } from '../src/domain/ids';
import { ServerMetrics, WorkerMetrics } from '../src/domain/metric-names';
import { scrape, scrapeTypes, total } from './support/prometheus';
import type { Sample } from './support/prometheus';
import { paymentRequest } from './support/request-builders';
import { NOTIFIED_MERCHANT_KEY, OPERATOR_KEY, startStack } from './support/test-stack';
import type { Stack } from './support/test-stack';

// The worker's Prometheus endpoint (SDK and product metrics) and the server's, scraped around known payments.

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(() => stack?.close());

interface Scrapes {
  worker: Sample[];
  server: Sample[];
}
type Expectation = Record<string, number>;

const scrapeBoth = async (): Promise<Scrapes> => ({
  worker: await scrape(stack.workerMetricsUrl ?? ''),
  server: await scrape(stack.metricsUrl),
});

/** The named readings of one scrape; worker metrics are limited to this stack's task queue. */
function readings(s: Scrapes, taskQueue: string, statusChecks = 0): Expectation {
  const w = (name: string, labels: Record<string, string>) =>
    total(s.worker, name, { task_queue: taskQueue, ...labels });
  const mm = 'mobile_money_debit';
  return {
    'started mobile money': w(WorkerMetrics.paymentsStarted, { payment_type: mm }),
    'started bank credit': w(WorkerMetrics.paymentsStarted, { payment_type: 'bank_credit' }),
    'finished mobile money succeeded': w(WorkerMetrics.paymentsFinished, { payment_type: mm, status: 'succeeded' }),
    'finished mobile money failed': w(WorkerMetrics.paymentsFinished, { payment_type: mm, status: 'failed' }),
    'finished bank credit succeeded': w(WorkerMetrics.paymentsFinished, {
      payment_type: 'bank_credit',
      status: 'succeeded',
    }),
    'reconciled to needs_review': w(WorkerMetrics.reconciliations, { payment_type: mm, outcome: 'needs_review' }),
    'provider initiate ok': w(`${WorkerMetrics.providerDuration}_count`, { operation: 'initiate', outcome: 'ok' }),
    'provider initiate rejected': w(`${WorkerMetrics.providerDuration}_count`, {
      operation: 'initiate',
      outcome: 'rejected',
    }),
    'provider errors rejected': w(WorkerMetrics.providerErrors, { classification: 'rejected' }),
    'provider status ok':
      w(`${WorkerMetrics.providerDuration}_count`, { operation: 'status', outcome: 'ok' }) - statusChecks,
    'callbacks accepted': total(s.server, ServerMetrics.callbacks, { result: 'accepted', reason: 'accepted' }),
    'callbacks rejected bad_token': total(s.server, ServerMetrics.callbacks, {
      result: 'rejected',
      reason: 'bad_token',
    }),
    'callbacks rejected unparseable': total(s.server, ServerMetrics.callbacks, {
      result: 'rejected',
      reason: 'unparseable',
    }),
    'payments in review': total(s.server, ServerMetrics.inReview),
  };
}

const minus = (a: Expectation, b: Expectation): Expectation =>
  Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - (b[k] ?? 0)]));

/** Scrapes until the deltas since `baseline` equal `expected` (metrics and visibility lag a little), then compares. */
async function expectDeltas(baseline: Expectation, expected: Expectation, statusChecks: () => Promise<number>) {
  await eventually(
    async () =>
      assert.deepEqual(minus(readings(await scrapeBoth(), stack.taskQueue, await statusChecks()), baseline), expected),
    { timeoutMs: 20_000, intervalMs: 300, what: 'the metrics deltas' },
  );
}

it('the counters move by exactly the payments, callbacks and provider calls of a known run', async () => {
  const baseline = readings(await scrapeBoth(), stack.taskQueue);
  const requests = {
    success: paymentRequest('mobile_money_debit', '00'),
    failure: paymentRequest('mobile_money_debit', '11'),
    review: paymentRequest('mobile_money_debit', '33'),
    rejected: paymentRequest('mobile_money_debit', '88'),
    bank: paymentRequest('bank_credit', '00'),
  };
  const ids: Record<string, string> = {};
  for (const [name, body] of Object.entries(requests)) {
    const response = await stack.api('POST', '/v1/payments', body);
    assert.equal(response.status, 201, JSON.stringify(response.body));
    ids[name] = response.body.id;
  }
  const forged = await stack.api('POST', `/v1/callbacks/${ids.success}/not-the-token`, { status: '1' }, null);
  assert.equal(forged.status, 404);
  const [transaction] = await stack.upstreamTransactions(ids.success ?? '');
  assert.ok(transaction?.callback_url);
  const empty = await request(transaction.callback_url, { method: 'POST' });
  assert.equal(empty.statusCode, 400);
  await empty.body.dump();
  const settled = Object.fromEntries(
    await Promise.all(
      Object.entries(ids).map(async ([name, id]) => [
        name,
        await stack.waitForStatus(id, ['succeeded', 'failed', 'needs_review']),
      ]),
    ),
  ) as Record<string, PaymentResource>;
  assert.equal(settled.review?.status, 'needs_review');
  assert.equal(settled.rejected?.status, 'failed');

  // Status queries, one provider call each (the sandbox answers them all): reconciliation's checks, and each settling
  // callback's confirmation (a callback is a hint). The payment in review makes several; on a slow machine a callback
  // may also come after its time-out, and reconciliation check first.
  const statusChecks = async () => {
    let checks = 0;
    for (const id of Object.values(ids)) {
      const payment = await stack.api('GET', `/v1/payments/${id}`, undefined, OPERATOR_KEY);
      checks += payment.body.events.filter(
        (e) =>
          e.type === 'status_checked' ||
          e.type === 'callback_confirmed' ||
          (e.type === 'callback_rejected' && (e.message ?? '').startsWith('the status query says')),
      ).length;
    }
    return checks;
  };
  assert.ok((await statusChecks()) >= 1);
  const settledRun: Expectation = {
    'started mobile money': 4,
    'started bank credit': 1,
    'finished mobile money succeeded': 1,
    'finished mobile money failed': 2,
    'finished bank credit succeeded': 1,
    'reconciled to needs_review': 1,
    'provider initiate ok': 4,
    'provider initiate rejected': 1,
    'provider errors rejected': 1,
    'provider status ok': 0,
    'callbacks accepted': 3,
    'callbacks rejected bad_token': 1,
    'callbacks rejected unparseable': 1,
    'payments in review': 1,
  };
  await expectDeltas(baseline, settledRun, statusChecks);

  const resolved = await stack.api(
    'POST',
    `/v1/payments/${ids.review}/resolve`,
    { outcome: 'succeeded', note: 'paid' },
    OPERATOR_KEY,
  );
  assert.equal(resolved.status, 200);
  await expectDeltas(
    baseline,
    { ...settledRun, 'finished mobile money succeeded': 2, 'payments in review': 0 },
    statusChecks,
  );
});

interface Dashboard {
  templating: { list: { name: string }[] };
  panels: {
    type: string;
    title: string;
    fieldConfig?: { defaults: { unit?: string }; overrides: { properties: { id: string }[] }[] };
    targets?: { expr: string }[];
  }[];
}

const dashboard = (): Dashboard =>
  JSON.parse(readFileSync(join(__dirname, '..', 'ops', 'grafana', 'payments-dashboard.json'), 'utf8')) as Dashboard;

it('the Grafana dashboard only queries metrics the endpoints export', async () => {
  const exprs = dashboard()
    .panels.flatMap((panel) => panel.targets ?? [])
    .map((t) => t.expr);
  assert.ok(exprs.length >= 10);
  // One notification delivered, so that the notification counters exist.
  await stack.api('POST', '/v1/payments', paymentRequest('bank_credit', '00'), NOTIFIED_MERCHANT_KEY);
  await eventually(
    async () =>
      assert.ok(
        (await scrape(stack.workerMetricsUrl ?? '')).some((s) => s.name === WorkerMetrics.notificationDeliveries),
        'no notification delivery was counted',
      ),
    { timeoutMs: 20_000, intervalMs: 200, what: 'a notification delivery counted' },
  );
  const { worker, server } = await scrapeBoth();
  const exported = new Set([...worker, ...server].map((s) => s.name));
  const referenced = new Set(exprs.flatMap(metricNames));
  for (const name of [...Object.values(WorkerMetrics), ...Object.values(ServerMetrics)]) {
    assert.ok(
      [...referenced].some((r) => r.startsWith(name)),
      `the dashboard does not show ${name}`,
    );
  }
  const missing = [...referenced].filter((name) => !exported.has(name));
  assert.deepEqual(missing, [], `referenced by the dashboard but not exported: ${missing.join(', ')}`);
});

it('the dashboard filters every query by job and namespace, and each panel has one unit', () => {
  const { templating, panels } = dashboard();
  assert.deepEqual(
    templating.list.map((v) => v.name),
    ['datasource', 'job', 'namespace'],
  );
  for (const panel of panels.filter((p) => p.type !== 'row')) {
    const unit = panel.fieldConfig?.defaults.unit;
    assert.ok(unit, `${panel.title}: no unit`);
    const overridden = panel.fieldConfig?.overrides.flatMap((o) => o.properties).some((p) => p.id === 'unit');
    assert.ok(!overridden, `${panel.title}: a second unit in an override`);
    const exprs = (panel.targets ?? []).map((t) => t.expr);
    assert.ok(exprs.length > 0, `${panel.title}: no query`);
    for (const expr of exprs) {
      for (const selector of expr.match(/\b[a-z_:][\w:]*\{[^}]*\}/g) ?? []) {
        assert.ok(selector.includes('job=~"$job"') && selector.includes('namespace=~"$namespace"'), selector);
      }
    }
    // A duration panel shows seconds, as the metrics are.
    if (exprs.some((e) => e.includes('_seconds_bucket'))) assert.equal(unit, 's', panel.title);
  }
});

it('every metric either endpoint exports follows Prometheus conventions, in one naming scheme', async () => {
  const endpoints = { worker: stack.workerMetricsUrl ?? '', server: stack.metricsUrl };
  const product = { worker: Object.values(WorkerMetrics), server: Object.values(ServerMetrics) };
  for (const [process, url] of Object.entries(endpoints) as [keyof typeof endpoints, string][]) {
    const types = await scrapeTypes(url);
    assert.ok(types.size > 10, `${process}: ${types.size} metric families`);
    for (const [name, type] of types) {
      if (type === 'counter') assert.match(name, /_total$/, `${process}: counter ${name}`);
      // prom-client's Node.js gauges (nodejs_active_handles_total…) keep their historical names.
      else if (!name.startsWith('nodejs_')) assert.doesNotMatch(name, /_total$/, `${process}: ${type} ${name}`);
      // Every histogram either process exports measures a duration: in seconds, with the unit in the name.
      if (type === 'histogram') assert.match(name, /_seconds$/, `${process}: histogram ${name}`);
      assert.doesNotMatch(name, /_(ms|milliseconds)$/, `${process}: ${name}`);
    }
    for (const name of product[process]) {
      assert.match(name, /^payments_/);
      const expected = name.endsWith('_total') ? 'counter' : name.endsWith('_seconds') ? 'histogram' : 'gauge';
      assert.equal(types.get(name), expected, `${process} exports ${name} as a ${expected}`);
    }
  }
  // The same labels on both sides: the Temporal namespace and task queue.
  const { worker, server } = await scrapeBoth();
  const labelled: [Sample[], string][] = [
    [worker, WorkerMetrics.paymentsStarted],
    [worker, `${WorkerMetrics.providerDuration}_count`],
    [server, ServerMetrics.callbacks],
    [server, ServerMetrics.inReview],
  ];
  const namespaces = labelled.map(([samples, name]) => {
    const sample = samples.find((s) => s.name === name && s.labels.task_queue === stack.taskQueue);
    assert.ok(sample?.labels.namespace, `${name} has no namespace and task queue labels`);
    return sample.labels.namespace;
  });
  assert.equal(new Set(namespaces).size, 1, namespaces.join(', '));
  // Every label of every series is snake_case, as Prometheus' linter and Temporal's own `temporal_*` series have it.
  const started = worker.find(
    (s) => s.name === WorkerMetrics.paymentsStarted && s.labels.task_queue === stack.taskQueue,
  );
  assert.equal(started?.labels.workflow_type, PAYMENT_WORKFLOW);
  const labelNames = new Set([...worker, ...server].flatMap((s) => Object.keys(s.labels)));
  assert.ok(labelNames.has('task_queue') && labelNames.has('workflow_type'), [...labelNames].join(', '));
  for (const label of labelNames) assert.match(label, /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/, `label ${label}`);
});

it('the metrics endpoint listens on loopback by default, even when the API listens on every interface', async () => {
  const open = await startStack({ withoutWorker: true, env: { HOST: '0.0.0.0' } });
  try {
    assert.deepEqual(listeningAddresses(Number(new URL(open.baseUrl).port)), ['0.0.0.0']);
    assert.deepEqual(listeningAddresses(Number(new URL(open.metricsUrl).port)), ['127.0.0.1']);
    const scraped = await request(open.metricsUrl);
    assert.equal(scraped.statusCode, 200);
    await scraped.body.dump();
  } finally {
    await open.close();
  }
});

/** The IPv4 addresses with a socket listening on the port, as the kernel lists them (/proc/net/tcp). */
function listeningAddresses(port: number): string[] {
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[3] === '0A' && Number.parseInt(fields[1]?.split(':')[1] ?? '', 16) === port)
    .map((fields) =>
      (fields[1]?.split(':')[0]?.match(/../g) ?? [])
        .map((byte) => Number.parseInt(byte, 16))
        .reverse()
        .join('.'),
    );
}

/** The metric names in a PromQL expression: identifiers that are not functions, labels or keywords. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"[^"]*"/g, '')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(?:by|without)\s*\([^)]*\)/g, '');
  return [...bare.matchAll(/\b[a-zA-Z_:][\w:]*\b(?!\s*\()/g)].map((m) => m[0]);
}
