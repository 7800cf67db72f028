import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, it } from 'node:test';
import { eventually } from '../src/local/eventually';
import { WORKER_COMMAND } from '../src/local/build-outputs';
import { freePort } from '../src/local/free-port';
import { ops } from './support/ops-cli-runner';
import { runEntry, runNode } from './support/process';
import { paymentRequest } from './support/request-builders';
import { startStack, testEnvironment } from './support/test-stack';
import type { Stack } from './support/test-stack';
import { startTlsTemporal, SYSTEM_WORKER_NAME } from './support/tls-temporal';
import type { TlsTemporal } from './support/tls-temporal';
import { startWorkerProcess } from '../src/local/worker-process';

// Temporal's own server serving only mTLS on its frontend (certificates from a throwaway CA): the worker process, the
// server and the operator CLI reach it with Temporal's TLS settings and a payment completes through it; a plaintext
// or certificate-less connection is refused by the server and the error names the setting to change.

let temporal: TlsTemporal;
let stack: Stack | undefined;
let worker: ChildProcess | undefined;

before(async () => {
  temporal = await startTlsTemporal();
});
after(async () => {
  worker?.kill('SIGKILL');
  await stack?.close();
  await temporal?.stop();
});

/** The stack's worker settings without any Temporal setting, its own metrics port, plus `env`. */
async function workerEnvWith(env: Record<string, string>): Promise<Record<string, string>> {
  const base = Object.entries(stack?.workerEnv ?? {}).filter(([name]) => !name.startsWith('TEMPORAL_'));
  return { ...Object.fromEntries(base), WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`, ...env };
}

const runWorker = (env: Record<string, string>) => runNode([...WORKER_COMMAND], env);

/** Whether the server logs this refusal (after the first `from` ones) within two seconds. */
async function refusedSince(from: number, reason: string): Promise<boolean> {
  return eventually(() => temporal.refused.slice(from).includes(reason), {
    timeoutMs: 2000,
    intervalMs: 50,
    what: `the refusal "${reason}" logged`,
  }).then(
    () => true,
    () => false,
  );
}

it('the worker process and the server connect over mTLS; a payment completes; the CLI and registration connect too', async (t) => {
  t.diagnostic(`temporal-server started, namespace and search attributes registered in ${temporal.startMs} ms`);
  stack = await startStack({ withoutWorker: true, env: temporal.mtlsEnv });
  worker = await startWorkerProcess(stack.workerEnv);
  const created = await stack.api('POST', '/v1/payments', paymentRequest('mobile_money_debit', '00'));
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const payment = await stack.waitForStatus(created.body.id, ['succeeded', 'failed', 'needs_review']);
  assert.equal(payment.status, 'succeeded');

  const show = await ops(['show', payment.id, '--json'], temporal.mtlsEnv);
  assert.equal(show.code, 0, show.stderr);
  assert.equal((JSON.parse(show.stdout) as { payment: { status: string } }).payment.status, 'succeeded');

  const register = await runEntry('register-search-attributes.ts', temporal.mtlsEnv);
  assert.equal(register.code, 0, register.output);
  assert.match(register.output, /search attributes ready in default: PaymentStatus \(KEYWORD\)/);

  // Server (gRPC-js), worker (Core), CLI and registration each opened a connection with the client certificate.
  const clients = temporal.accepted.filter((name) => name !== SYSTEM_WORKER_NAME);
  assert.ok(clients.length >= 4, `accepted ${clients.length} connections`);
  assert.ok(
    clients.every((name) => name === 'payments'),
    clients.join(', '),
  );
  assert.deepEqual(temporal.refused, [], 'no connection was refused');
});

it('a worker without TLS, client certificate, CA or server name, or with TLS to a plaintext server, names the setting', async () => {
  const { TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH, ...withoutClientCert } = temporal.mtlsEnv;
  const { TEMPORAL_TLS_SERVER_CA_CERT_PATH, ...withoutCa } = temporal.mtlsEnv;
  const { TEMPORAL_TLS_SERVER_NAME: _name, ...withoutServerName } = temporal.mtlsEnv;
  assert.ok(TEMPORAL_TLS_CLIENT_CERT_PATH && TEMPORAL_TLS_CLIENT_KEY_PATH && TEMPORAL_TLS_SERVER_CA_CERT_PATH);
  const at = `worker: cannot connect to Temporal at ${temporal.address.replace(/\./g, '\\.')}`;
  const cases = [
    {
      env: { TEMPORAL_ADDRESS: temporal.address },
      message: new RegExp(`${at} \\(plaintext\\): the server requires TLS .*: set TEMPORAL_TLS=true`),
      refusal: 'tls: first record does not look like a TLS handshake',
    },
    {
      env: withoutClientCert,
      message: new RegExp(
        `${at} \\(TLS\\): the server requires a client certificate \\(mTLS\\): ` +
          'set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH',
      ),
      refusal: "tls: client didn't provide a certificate",
    },
    {
      env: withoutCa,
      message: new RegExp(
        `${at} \\(mTLS\\): the server's certificate is not signed by a trusted CA .*: set TEMPORAL_TLS_SERVER_CA_CERT_PATH`,
      ),
      refusal: 'remote error: tls: unknown certificate authority', // the worker refused the server's certificate
    },
    {
      env: withoutServerName,
      message: new RegExp(
        `${at} \\(mTLS\\): the server's certificate is for another name: set TEMPORAL_TLS_SERVER_NAME`,
      ),
      refusal: 'remote error: tls: bad certificate', // the name did not match
    },
    {
      env: { TEMPORAL_ADDRESS: testEnvironment().address, TEMPORAL_TLS: 'true' },
      message: new RegExp(
        `worker: cannot connect to Temporal at ${testEnvironment().address.replace(/\./g, '\\.')} \\(TLS\\): ` +
          'the server does not answer TLS: set TEMPORAL_TLS=false',
      ),
      refusal: undefined, // the shared dev server: plaintext
    },
  ];
  for (const { env, message, refusal } of cases) {
    const refusedBefore = temporal.refused.length;
    const run = await runWorker(await workerEnvWith(env));
    assert.equal(run.code, 1, run.output);
    assert.match(run.output, message);
    assert.ok(!run.output.includes('BEGIN'), 'no certificate or key printed');
    if (refusal) assert.ok(await refusedSince(refusedBefore, refusal), temporal.refused.join(', '));
  }
  assert.ok(
    temporal.accepted.every((name) => name === 'payments' || name === SYSTEM_WORKER_NAME),
    'only the client certificates got through',
  );
});

it('the operator CLI without a client certificate exits 5 and says what to set', async () => {
  const { TEMPORAL_TLS_CLIENT_CERT_PATH: _cert, TEMPORAL_TLS_CLIENT_KEY_PATH: _key, ...env } = temporal.mtlsEnv;
  const refusedBefore = temporal.refused.length;
  const run = await ops(['list'], env);
  assert.equal(run.code, 5);
  assert.ok(await refusedSince(refusedBefore, "tls: client didn't provide a certificate"), temporal.refused.join(', '));
  assert.match(
    run.stderr,
    new RegExp(
      `^ops: cannot reach Temporal at ${temporal.address.replace(/\./g, '\\.')} \\(namespace default\\): ` +
        'the server requires a client certificate \\(mTLS\\): set TEMPORAL_TLS_CLIENT_CERT_PATH',
    ),
  );
});
