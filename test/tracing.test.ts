import assert from 'node:assert/strict';
import { hasSubscribers } from 'node:diagnostics_channel';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, it } from 'node:test';
import { propagation, SpanKind, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { parseConfig } from '../src/config/config-loading';
import { providerConfig, vaultKeyring, workerSchema } from '../src/config/process-settings';
import { CALLBACK_PATH, CALLBACK_ROUTE } from '../src/crypto/callback-tokens';
import { personalValues } from '../src/domain/personal-data';
import { callbackSignal } from '../src/workflows/definitions';
import { waitUntil } from '../src/local/wait-until';
import { createProviderClient } from '../src/provider/provider-client';
import { activeTracing, startTracing, tracingRequested } from '../src/telemetry/tracing';
import { createPaymentWorker } from '../src/temporal/payment-worker';
import { createRedisVault } from '../src/vault/redis-vault';
import { openDatabase } from '../src/records/database';
import { runNode } from './support/process';
import { paymentRequest } from './support/request-builders';
import { startStack, testCallbackTokens, testDatabaseUrl, testEnvironment, workerDeps } from './support/test-stack';

// Tracing end to end: the real server app, an in-process worker with the interceptors and the workflow bundle, and
// the sandbox provider, exporting to memory. The order matters: the first test runs before anything is registered.

/** A JSON log line of the server, with the fields this test reads. */
interface LogLine {
  msg: string;
  reqId?: string;
  trace_id?: string;
  span_id?: string;
}

/** Packages only a traced process loads. */
const SDK_MODULES = [
  '@opentelemetry/sdk-trace-node',
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/exporter-trace-otlp-proto',
  '@opentelemetry/instrumentation-undici',
  '@fastify/otel',
  '@temporalio/interceptors-opentelemetry',
];

after(() => activeTracing()?.shutdown());

it('without OTEL_EXPORTER_OTLP_ENDPOINT nothing is loaded or registered, and a server and worker run untraced', async () => {
  assert.equal(tracingRequested({}), false);
  assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true);
  assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }), true);
  assert.equal(
    tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }),
    false,
  );
  assert.equal(await startTracing({ serviceName: 'payments-test', env: {} }), undefined);
  await assert.rejects(
    startTracing({ serviceName: 'payments-test', env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' } }),
    /^Error: OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/,
  );

  const stack = await startStack();
  try {
    const created = await stack.api('POST', '/v1/payments', paymentRequest('mobile_money_debit', '00'));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await stack.waitForStatus(created.body.id, ['succeeded']);
  } finally {
    await stack.close();
  }
  assert.equal(activeTracing(), undefined);
  const span = trace.getTracer('probe').startSpan('probe');
  assert.equal(span.isRecording(), false, 'a tracer provider is registered');
  span.end();
  assert.deepEqual(propagation.fields(), [], 'a propagator is registered');
  assert.equal(hasSubscribers('undici:request:create'), false, 'undici is instrumented');
  const loaded = Object.keys(require.cache).filter((file) => SDK_MODULES.some((m) => file.includes(`/${m}/`)));
  assert.deepEqual(loaded, []);
});

it('with OTEL_EXPORTER_OTLP_ENDPOINT set, a process exports its spans over OTLP/HTTP under its service name', async () => {
  const received: { path: string; type: string; body: Buffer }[] = [];
  const collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', type: req.headers['content-type'] ?? '', body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = collector.address() as AddressInfo;
    const script = `
      const { startTracing } = require(${JSON.stringify(join(__dirname, '..', 'src', 'telemetry', 'tracing.ts'))});
      startTracing({ serviceName: 'payments-worker' }).then(async (tracing) => {
        require('@opentelemetry/api').trace.getTracer('probe').startSpan('probe-span').end();
        await tracing.shutdown();
      });`;
    const { code, output } = await runNode(['--import', 'tsx', '-e', script], {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    });
    assert.equal(code, 0, output);
  } finally {
    await new Promise((resolve) => collector.close(resolve));
  }
  assert.equal(received.length, 1);
  const [exported] = received;
  assert.equal(exported?.path, '/v1/traces');
  assert.equal(exported.type, 'application/x-protobuf');
  for (const text of ['payments-worker', 'probe-span']) assert.ok(exported.body.includes(text), text);
});

it('one card payment settled by its callback is one trace, from the merchant request to the callback, replays included', async () => {
  const { InMemorySpanExporter } = await import('@opentelemetry/sdk-trace-base');
  const exporter = new InMemorySpanExporter();
  await startTracing({ serviceName: 'payments-test', exporter });
  // A short late-callback window: the workflow completes, and its RunWorkflow span ends, soon after the callback.
  const logs = new PassThrough();
  const logLines: LogLine[] = [];
  logs.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as LogLine);
  });
  const stack = await startStack({
    withoutWorker: true,
    env: { LATE_CALLBACK_WINDOW: '1s', LOG_LEVEL: 'info' },
    logStream: logs,
  });
  // A worker that caches no workflow: every workflow task replays the history first, as after a restart or an
  // eviction, so the callback's span must find the run's span again by replaying.
  const config = parseConfig(workerSchema, stack.workerEnv);
  const provider = createProviderClient(providerConfig(config));
  const cardVault = await createRedisVault({ url: config.VAULT_URL, keyring: vaultKeyring(config) });
  const database = openDatabase(testDatabaseUrl(stack.workerEnv));
  const worker = await createPaymentWorker({
    temporal: config,
    taskQueue: stack.taskQueue,
    keyring: config.ENCRYPTION_KEYS,
    workflowBundlePath: testEnvironment().bundlePath,
    maxCachedWorkflows: 0,
    deps: workerDeps(config, provider, cardVault, database),
  });
  const running = worker.run();
  const request = paymentRequest('card_payment', '00');
  let paymentId: string;
  try {
    const created = await stack.api('POST', '/v1/payments', request);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    paymentId = created.body.id;
    await stack.waitForStatus(paymentId, ['succeeded']);
    await waitUntil(
      () =>
        Promise.resolve(
          exporter
            .getFinishedSpans()
            .find((s) => s.name === 'RunWorkflow:paymentWorkflow' && s.attributes.temporalWorkflowId === paymentId),
        ),
      { timeoutMs: 20_000, timedOut: () => new Error('the payment workflow did not complete') },
    );
  } finally {
    await stack.close();
    worker.worker.shutdown();
    await running;
    await provider.close();
    await cardVault.close();
    await database.end();
  }
  const spans = exporter.getFinishedSpans();
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const parentOf = (s: ReadableSpan) => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined);
  const ancestors = (s: ReadableSpan): string[] => {
    const names: string[] = [];
    for (let p = parentOf(s); p; p = parentOf(p)) names.push(p.name);
    return names;
  };
  const one = (name: string, where: (s: ReadableSpan) => boolean = () => true): ReadableSpan => {
    const found = spans.filter((s) => s.name === name && where(s));
    assert.equal(found.length, 1, `${name}: ${found.length} spans; all: ${spans.map((s) => s.name).join(', ')}`);
    return found[0] as ReadableSpan;
  };
  const ofPayment = (s: ReadableSpan) => s.attributes.temporalWorkflowId === paymentId;

  const merchantRequest = one('POST /v1/payments');
  const traceId = merchantRequest.spanContext().traceId;
  // POST /v1/payments starts the workflow with its `initiation` update, in one call (Update-with-Start).
  const start = one('UpdateWithStartWorkflow:initiation', (s) => s.spanContext().traceId === traceId);
  const run = one('RunWorkflow:paymentWorkflow', ofPayment);
  const scheduled = one('StartActivity:initiatePayment', (s) => s.spanContext().traceId === traceId);
  const initiation = one('RunActivity:initiatePayment', ofPayment);
  const providerCall = spans.find(
    (s) => s.kind === SpanKind.CLIENT && s.parentSpanId === initiation.spanContext().spanId,
  );
  const handled = one(`HandleSignal:${callbackSignal.name}`, ofPayment);

  // One trace id for the payment, and the tree as designed.
  assert.equal(merchantRequest.kind, SpanKind.SERVER);
  assert.equal(merchantRequest.parentSpanId, undefined);
  for (const span of [start, run, scheduled, initiation, providerCall, handled]) {
    assert.equal(span?.spanContext().traceId, traceId, `${span?.name} is in another trace`);
  }
  assert.deepEqual(ancestors(start), ['handler /v1/payments', 'POST /v1/payments']);
  assert.equal(run.parentSpanId, start.spanContext().spanId);
  assert.equal(scheduled.parentSpanId, run.spanContext().spanId);
  assert.equal(initiation.parentSpanId, scheduled.spanContext().spanId);
  assert.ok(providerCall, 'no undici span under RunActivity:initiatePayment');
  assert.equal(providerCall.name, 'POST');
  assert.equal(providerCall.attributes['server.address'], new URL(stack.sandbox.url).hostname);
  assert.equal(handled.parentSpanId, run.spanContext().spanId);

  // The callback came in as its own request (the provider sends no trace context); the payment's handling of it
  // links to that request's signal, which is a child of the request span.
  const callbackRequest = one(`POST ${CALLBACK_ROUTE}`);
  assert.notEqual(callbackRequest.spanContext().traceId, traceId);
  assert.equal(callbackRequest.attributes['url.path'], `${CALLBACK_PATH}/${encodeURIComponent(paymentId)}/[token]`);
  const signal = one(`SignalWorkflow:${callbackSignal.name}`, ofPayment);
  assert.deepEqual(ancestors(signal), [`handler ${CALLBACK_ROUTE}`, callbackRequest.name]);
  assert.deepEqual(
    handled.links.map((l) => l.context.spanId),
    [signal.spanContext().spanId],
  );

  // Every line the server wrote for a request carries that request's id and its trace's id: the merchant's POST
  // and the callback each in their own trace.
  const requestLines = logLines.filter((line) => line.reqId);
  const linesOf = (span: ReadableSpan) => requestLines.filter((line) => line.trace_id === span.spanContext().traceId);
  for (const span of [merchantRequest, callbackRequest]) {
    const lines = linesOf(span);
    assert.ok(
      lines.some((line) => line.msg === 'incoming request'),
      `${span.name}: no incoming request line`,
    );
    assert.ok(
      lines.some((line) => line.msg === 'request completed'),
      `${span.name}: no request completed line`,
    );
    assert.equal(new Set(lines.map((line) => line.reqId)).size, 1, `${span.name}: the lines of one request`);
  }
  const untraced = requestLines.filter((line) => !/^[0-9a-f]{32}$/.test(line.trace_id ?? '') || !line.span_id);
  assert.deepEqual(untraced, [], 'a request line without a trace id');

  // No card number, personal value or callback token anywhere in what was exported.
  const exported = JSON.stringify(
    spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, links: s.links, status: s.status })),
  );
  const token = testCallbackTokens().tokenFor(paymentId);
  const secrets = [...personalValues(request).filter((v) => v.length >= 5), token, encodeURIComponent(token)];
  assert.ok(secrets.includes(request.type === 'card_payment' ? request.card_number : ''));
  for (const secret of secrets) assert.ok(!exported.includes(secret), `a span holds ${secret.slice(0, 4)}…`);
});
