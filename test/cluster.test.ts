import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { Client } from 'pg';
import { request } from 'undici';
import { temporalBinary } from '../src/local/binaries';
import { eventually } from '../src/local/eventually';
import type { PaymentResource, PaymentStatus } from '../src/domain/payment-model';
import type { PaymentType } from '../src/domain/requests';
import { startCluster } from '../src/local/cluster-launcher';
import type { Cluster } from '../src/local/cluster-launcher';
import { freePort } from '../src/local/free-port';
import { waitForHttp } from '../src/local/supervisor';
import { startWorkerProcess } from '../src/local/worker-process';
import { createSandbox } from '../src/sandbox/sandbox-app';
import type { Sandbox } from '../src/sandbox/sandbox-app';
import { paymentRequest } from './support/request-builders';
import {
  MERCHANT_KEY,
  OPERATOR_KEY,
  OPERATOR_NAME,
  SANDBOX_TOKEN,
  TEST_CALLBACK_SECRET,
  TEST_CODEC_TOKEN_SECRET,
  TEST_ENCRYPTION_KEYS,
  TEST_SIGNING_KEYS,
  testEnvironment,
} from './support/test-stack';
import type { SandboxRecord } from './support/test-stack';

// The project on a real cluster (PostgreSQL, temporal-server, Web UI server) with two workers and two API servers:
// merchants create payments on server A, the provider's callbacks go to server B; one worker is killed mid-load and
// both servers restart one at a time.

const SERVER_JS = resolve(__dirname, '..', 'dist', 'server.js');
const TASK_QUEUE = 'cluster-test';
const TYPES: PaymentType[] = ['mobile_money_debit', 'card_payment', 'bank_credit'];
/**
 * Sandbox scenarios and where each one settles (payment-scenarios.test.ts shows each on its own). Not 77 (success,
 * then failure: the first to arrive wins), whose order a restart of the callbacks' server can swap.
 */
const SCENARIOS: Record<string, PaymentStatus> = {
  '00': 'succeeded', // the success callback
  '11': 'failed', // the failure callback
  '22': 'succeeded', // no callback: reconciliation finds it
  '66': 'succeeded', // repeated success callbacks
  '33': 'needs_review', // reconciliation never finds an outcome
  '88': 'failed', // a 400 at initiation
  '99': 'succeeded', // the callback before the initiation answer
};
const ROUNDS = 4;
/** Payments a wave (one every WAVE_MS): the load is spread over the kill and the restarts. */
const WAVE = 6;
const WAVE_MS = 1200;
const FINAL: PaymentStatus[] = ['succeeded', 'failed', 'needs_review'];
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/**
 * Why a payment ended where it did: its scenario, or a worker kill that cut its initiation (`initiation_unknown`).
 * Then a request the provider never got fails as never sent (bank credits, looked up by reference) or goes to review,
 * and one it got settles as its scenario says or, with the answer lost, goes to review.
 */
function explain(c: Created, payment: PaymentResource, received: number): 'scenario' | 'cut by the kill' | undefined {
  if (received > 0 && payment.status === SCENARIOS[c.scenario]) return 'scenario';
  if (!payment.events.some((e) => e.type === 'initiation_unknown')) return undefined;
  if (received > 0) return payment.status === 'needs_review' ? 'cut by the kill' : undefined;
  const neverSent = c.type === 'bank_credit' ? payment.failure?.code === 'not_sent' : payment.status === 'needs_review';
  return neverSent ? 'cut by the kill' : undefined;
}

let dataDir: string;
let cluster: Cluster | undefined;
let sandbox: Sandbox | undefined;
const children = new Set<ChildProcess>();
const clusterOutput: string[] = [];

function log(message: string): void {
  process.stdout.write(`[cluster.test] ${message}\n`);
}

/** One API server: the compiled server, as the Dockerfile runs it. */
async function startApiServer(env: NodeJS.ProcessEnv, port: number, name: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [SERVER_JS], {
    env: { ...process.env, ...env, PORT: String(port), METRICS_PORT: String(await freePort()) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  await waitForHttp(`http://127.0.0.1:${port}/healthz`, child, name);
  return child;
}

async function stopProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

interface Created {
  type: PaymentType;
  scenario: string;
  id: string;
}

/** Why a POST was re-sent: the server answered 503, or its connection was refused or reset (a restart). */
const retried = { unavailable: 0, connection: 0 };

/** POSTs a payment, re-sending the same body while the server restarts (503, refused or reset connections). */
async function createPayment(baseUrl: string, body: unknown): Promise<PaymentResource> {
  for (let attempt = 0; ; attempt++) {
    try {
      const response = await request(`${baseUrl}/v1/payments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await response.body.text();
      if (response.statusCode === 201 || response.statusCode === 200) return JSON.parse(text) as PaymentResource;
      if (response.statusCode !== 503 || attempt > 60) throw new Error(`POST answered ${response.statusCode}: ${text}`);
      retried.unavailable++;
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      if (!/ECONNREFUSED|ECONNRESET|UND_ERR_SOCKET|UND_ERR_CLOSED/.test(code) || attempt > 60) throw err;
      retried.connection++;
    }
    await sleep(250);
  }
}

async function getPayment(baseUrl: string, id: string): Promise<PaymentResource | undefined> {
  try {
    const response = await request(`${baseUrl}/v1/payments/${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${OPERATOR_KEY}` },
    });
    const text = await response.body.text();
    return response.statusCode === 200 ? (JSON.parse(text) as PaymentResource) : undefined;
  } catch {
    return undefined;
  }
}

async function sandboxGet<T>(path: string): Promise<T> {
  const response = await request(`${sandbox?.url}${path}`, { headers: { authorization: `Bearer ${SANDBOX_TOKEN}` } });
  assert.equal(response.statusCode, 200, `sandbox ${path}`);
  return (await response.body.json()) as T;
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'cluster-test-'));
  // PostgreSQL runs as its own OS user when the tests run as root: it must reach its directory.
  chmodSync(dataDir, 0o755);
  cluster = await startCluster({
    dataDir,
    namespace: 'default',
    log,
    output: (line) => {
      clusterOutput.push(line);
      if (clusterOutput.length > 200) clusterOutput.shift();
    },
  });
  const steps = Object.entries(cluster.timings).map(([step, ms]) => `${step} ${(ms / 1000).toFixed(1)}s`);
  log(`cluster ready at ${cluster.address}, Web UI ${cluster.uiUrl} (${steps.join(', ')})`);
});

after(async () => {
  for (const child of [...children]) await stopProcess(child, 'SIGKILL');
  await sandbox?.close();
  await cluster?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

it('two workers and two API servers on a real cluster settle every payment through a worker kill and rolling restarts', async (t) => {
  assert.ok(cluster);
  const started = Date.now();
  const { vaultUrl, bundlePath } = testEnvironment();
  sandbox = await createSandbox({
    token: SANDBOX_TOKEN,
    callbackDelayMs: 1000,
    slowResponseMs: 8000,
    auto3ds: 'approve',
    host: '127.0.0.1',
    port: 0,
    logger: false,
  });
  const [portA, portB] = [await freePort(), await freePort()];
  const urlA = `http://127.0.0.1:${portA}`;
  const urlB = `http://127.0.0.1:${portB}`;
  const shared = {
    TEMPORAL_ADDRESS: cluster.address,
    TEMPORAL_NAMESPACE: 'default',
    // Plaintext on loopback, with a token (which would otherwise turn TLS on).
    TEMPORAL_TLS: 'false',
    TASK_QUEUE,
    // Callbacks go to server B: the workers put this base into every callback URL.
    PUBLIC_BASE_URL: urlB,
    PROVIDER_BASE_URL: sandbox.url,
    PROVIDER_TOKEN: SANDBOX_TOKEN,
    CALLBACK_SECRET: TEST_CALLBACK_SECRET,
    SIGNING_KEYS: TEST_SIGNING_KEYS,
    ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
    VAULT_URL: vaultUrl,
    // The records' database npm run cluster creates beside Temporal's.
    DATABASE_URL: cluster.databaseUrl,
    LOG_LEVEL: 'warn',
  };
  const serverEnv = {
    ...shared,
    HOST: '127.0.0.1',
    TEMPORAL_API_KEY: cluster.auth.tokens.server,
    MERCHANT_API_KEYS: `acme:${MERCHANT_KEY}`,
    OPERATOR_API_KEYS: `${OPERATOR_NAME}:${OPERATOR_KEY}`,
    CODEC_TOKEN_SECRET: TEST_CODEC_TOKEN_SECRET,
    FINGERPRINT_SECRET: 'test-fingerprint-secret-0123456789abcdef',
    // Generous for a loaded machine (this test runs beside the others): a status query that times out, or a callback
    // held back while server B restarts, must not look like a provider that never answers. Only scenario 33 waits
    // them out.
    CALLBACK_TIMEOUT_MOBILE_MONEY: '8s',
    CALLBACK_TIMEOUT_CARD: '8s',
    CALLBACK_TIMEOUT_BANK_CREDIT: '8s',
    RECONCILE_FOR: '30s',
    RECONCILE_INTERVAL: '2s',
    LATE_CALLBACK_WINDOW: '5s',
  };
  const metricsPorts = [await freePort(), await freePort()];
  const workerEnv = (n: 1 | 2) => ({
    ...shared,
    // The profile npm run cluster writes for workers (address, namespace, the worker's token).
    TEMPORAL_CONFIG_FILE: cluster?.auth.profileFile('worker'),
    PROVIDER_STATUS_URL: `${sandbox?.url}/api/transactions/{transaction_id}`,
    PROVIDER_STATUS_BY_REFERENCE_URL: `${sandbox?.url}/api/transactions?reference={reference}`,
    PROVIDER_TIMEOUT: '5s',
    PROVIDER_CONNECT_TIMEOUT: '1s',
    WORKFLOW_BUNDLE_PATH: bundlePath,
    WORKER_METRICS_ADDRESS: `127.0.0.1:${metricsPorts[n - 1]}`,
  });
  const track = (child: ChildProcess) => {
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
  };
  const worker2 = track(await startWorkerProcess(workerEnv(2)));
  let worker1 = track(await startWorkerProcess(workerEnv(1)));
  let [serverA, serverB] = await Promise.all([
    startApiServer(serverEnv, portA, 'server A'),
    startApiServer(serverEnv, portB, 'server B'),
  ]);
  const upAt = Date.now();
  log(`2 workers and 2 API servers up in ${((upAt - started) / 1000).toFixed(1)}s`);

  // The load: every type and scenario ROUNDS times, merchants on server A, in small waves over about 15 s. Its last
  // wave waits for the kill and the restarts, however slow a loaded machine makes them, so each happens mid-load.
  const created: Created[] = [];
  let chaosDone: () => void = () => {};
  const chaosOver = new Promise<void>((resolve) => (chaosDone = resolve));
  const all = Array.from({ length: ROUNDS }, () =>
    TYPES.flatMap((type) => Object.keys(SCENARIOS).map((scenario) => ({ type, scenario }))),
  ).flat();
  const load = (async () => {
    for (let i = 0; i < all.length; i += WAVE) {
      const wave = all.slice(i, i + WAVE);
      if (i + WAVE >= all.length) await chaosOver;
      await Promise.all([
        ...wave.map(async ({ type, scenario }) => {
          const payment = await createPayment(urlA, paymentRequest(type, scenario));
          created.push({ type, scenario, id: payment.id });
        }),
        sleep(WAVE_MS),
      ]);
    }
  })();

  // Meanwhile: SIGKILL a worker, restart server A, bring the worker back, restart server B.
  let kills = 0;
  let restarts = 0;
  /** How many payments existed at each kill and restart: each one happens while the load runs. */
  const during: number[] = [];
  const chaos = (async () => {
    await sleep(3000);
    while (created.length === 0) await sleep(100);
    await stopProcess(worker1, 'SIGKILL');
    kills++;
    during.push(created.length);
    log(`worker 1 killed (SIGKILL) with ${created.length} payments created`);
    await sleep(2000);
    await stopProcess(serverA, 'SIGTERM');
    serverA = await startApiServer(serverEnv, portA, 'server A');
    restarts++;
    during.push(created.length);
    log(`server A restarted with ${created.length} payments created`);
    await sleep(1000);
    worker1 = track(await startWorkerProcess(workerEnv(1)));
    log('worker 1 back');
    await stopProcess(serverB, 'SIGTERM');
    serverB = await startApiServer(serverEnv, portB, 'server B');
    restarts++;
    during.push(created.length);
    log(`server B restarted with ${created.length} payments created`);
    chaosDone();
  })();
  await Promise.all([load, chaos]);
  const loadDone = Date.now();
  assert.ok(
    during.every((n) => n > 0 && n < all.length),
    `the kill and the restarts happened mid-load (payments then: ${during.join(', ')} of ${all.length})`,
  );

  // Every payment settles where its scenario says.
  const settled = new Map<string, PaymentResource>();
  // What settled is kept across tries; the assertion below names what did not within 180 s.
  await eventually(
    async () => {
      const open = created.filter((c) => !settled.has(c.id));
      for (let i = 0; i < open.length; i += 16) {
        await Promise.all(
          open.slice(i, i + 16).map(async (c) => {
            const payment = await getPayment(i % 32 === 0 ? urlA : urlB, c.id);
            if (payment && FINAL.includes(payment.status)) settled.set(c.id, payment);
          }),
        );
      }
      assert.equal(settled.size, created.length);
    },
    { timeoutMs: 180_000, intervalMs: 1000, what: 'every payment settled' },
  ).catch(() => undefined);
  const settledAt = Date.now();
  const stuck = created.filter((c) => !settled.has(c.id));
  const byStatus: Record<string, number> = {};
  for (const payment of settled.values()) byStatus[payment.status] = (byStatus[payment.status] ?? 0) + 1;
  const statusCounts = Object.entries(byStatus)
    .map(([status, n]) => `${status} ${n}`)
    .join(', ');
  log(
    `settled ${settled.size}/${created.length} in ${((settledAt - loadDone) / 1000).toFixed(1)}s after the load: ${statusCounts}; stuck ${stuck.length}`,
  );
  assert.deepEqual(
    stuck.map((c) => `${c.type}/${c.scenario} ${c.id}`),
    [],
    `payments not settled within 180s\n${clusterOutput.slice(-20).join('\n')}`,
  );
  // The sandbox's ledger: at most one initiation per payment, one transaction for each it accepted.
  const requests = await sandboxGet<SandboxRecord[]>('/sandbox/requests');
  const transactions = await sandboxGet<SandboxRecord[]>('/sandbox/transactions');
  const count = (records: SandboxRecord[], id: string) =>
    records.filter((r) => (r.body?.callback_url ?? r.callback_url ?? '').includes(encodeURIComponent(id))).length;
  const outcomes = created.map((c) => {
    const payment = settled.get(c.id)!;
    const received = count(requests, c.id);
    return { ...c, payment, received, transactions: count(transactions, c.id), why: explain(c, payment, received) };
  });
  const wrong = outcomes.filter((o) => o.why === undefined);
  assert.deepEqual(
    wrong.map((o) => `${o.type}/${o.scenario}: ${o.payment.status}, ${o.received} initiation requests`),
    [],
    wrong.map((o) => `${o.id}: ${o.payment.events.map((e) => e.type).join(' ')}`).join('\n'),
  );
  const cut = outcomes.filter((o) => o.why === 'cut by the kill');
  assert.ok(cut.length <= WAVE, `at most one wave's initiations are cut by the kill, not ${cut.length}`);
  for (const o of outcomes) {
    assert.ok(o.received <= 1, `at most one initiation request for ${o.type}/${o.scenario} ${o.id}`);
    const expected = o.scenario === '88' || o.received === 0 ? 0 : 1;
    assert.equal(o.transactions, expected, `transactions of ${o.type}/${o.scenario} ${o.id}`);
  }
  // Every callback URL names server B; callbacks that arrived while B restarted were re-sent or reconciled.
  const callbackUrls = requests.map((r) => r.body?.callback_url ?? '');
  assert.deepEqual(
    callbackUrls.filter((url) => !url.startsWith(`${urlB}/`)),
    [],
  );
  // Settled by a callback the status query confirmed (a callback is a hint).
  const byCallback = [...settled.values()].filter((p) => p.events.some((e) => e.type === 'callback_confirmed')).length;
  // A third, not half: on a loaded machine more of them wait past their callback time-out and reconciliation settles them.
  assert.ok(byCallback > created.length / 3, `${byCallback} payments settled by a callback to server B`);

  // The Web UI server answers with the cluster's workflows, given the reader's token (as a proxy in front adds it).
  const workflowsUrl = `${cluster.uiUrl}/api/v1/namespaces/default/workflows?query=${encodeURIComponent(`TaskQueue="${TASK_QUEUE}"`)}`;
  const listed = await request(workflowsUrl, { headers: { authorization: `Bearer ${cluster.auth.tokens.reader}` } });
  assert.equal(listed.statusCode, 200);
  const anonymous = await request(workflowsUrl);
  assert.equal(anonymous.statusCode, 403, 'the Web UI without a token lists nothing');
  await anonymous.body.dump();
  const executions = ((await listed.body.json()) as { executions?: unknown[] }).executions ?? [];
  assert.ok(executions.length > 0, 'the Web UI lists the payments');
  // Read-only, and Terminate and Reset hidden even were writes allowed (they leave payments without an outcome).
  const settings = (await (await request(`${cluster.uiUrl}/api/v1/settings`)).body.json()) as Record<string, unknown>;
  assert.deepEqual(
    [settings.DisableWriteActions, settings.WorkflowTerminateDisabled, settings.WorkflowResetDisabled],
    [true, true, true],
  );

  const figures = [
    `payments ${created.length} (${TYPES.length} types × ${Object.keys(SCENARIOS).length} scenarios × ${ROUNDS}) created on server A, callbacks to server B`,
    `workers 2, kills ${kills} (SIGKILL), server restarts ${restarts} (A then B), at ${during.join('/')} payments created; client re-sends ${retried.connection} after refused connections, ${retried.unavailable} after 503`,
    `settled ${settled.size}/${created.length}: ${Object.entries(byStatus)
      .map(([s, n]) => `${s} ${n}`)
      .join(', ')}; stuck ${stuck.length}`,
    `ledger: initiation requests ${sum(outcomes.map((o) => o.received))} (at most one each), transactions ${sum(outcomes.map((o) => o.transactions))}; ${byCallback} settled by a callback to server B`,
    `initiations cut by the worker kill: ${cut.length}${cut.map((o) => ` ${o.type}/${o.scenario} (${o.received ? 'sent' : 'never sent'}, ${o.payment.status})`).join(',')}`,
    `Web UI lists ${executions.length} workflows on the first page`,
    `durations: cluster ${(sum(Object.values(cluster.timings)) / 1000).toFixed(1)}s, processes ${((upAt - started) / 1000).toFixed(1)}s, load ${((loadDone - upAt) / 1000).toFixed(1)}s, settling ${((settledAt - loadDone) / 1000).toFixed(1)}s`,
  ];
  for (const line of figures) log(line);
  t.diagnostic(figures.join('; '));
  await Promise.all([stopProcess(worker1, 'SIGTERM'), stopProcess(worker2, 'SIGTERM')]);
  await Promise.all([stopProcess(serverA, 'SIGTERM'), stopProcess(serverB, 'SIGTERM')]);
});

it("keeps closed workflows' histories 7 days and the payment records in a migrated database beside Temporal's", async () => {
  assert.ok(cluster);
  const connection = await Connection.connect({
    address: cluster.address,
    apiKey: cluster.auth.tokens.reader,
    tls: false,
  });
  try {
    const { config } = await connection.workflowService.describeNamespace({ namespace: 'default' });
    assert.equal(Number(config?.workflowExecutionRetentionTtl?.seconds), 7 * 24 * 3600);
  } finally {
    await connection.close();
  }
  assert.match(cluster.databaseUrl, /^postgres:\/\/temporal:[0-9a-f]+@127\.0\.0\.1:\d+\/payments$/);
  const db = new Client({ connectionString: cluster.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
    assert.equal(rows[0]?.name, '001_initial.sql');
  } finally {
    await db.end();
  }
});

/** The gRPC status code of a refused call (7 PERMISSION_DENIED), or 'ok' / 'deadline' when the frontend let it through. */
async function outcomeOf(call: () => Promise<unknown>): Promise<number | 'ok' | 'deadline'> {
  try {
    await call();
    return 'ok';
  } catch (err) {
    const code = (err as { code?: number }).code;
    if (code === 4) return 'deadline';
    if (typeof code === 'number') return code;
    throw err;
  }
}

it('the frontend refuses, from outside, a poll without a worker token, a start, signal or update with it or none, and a reset or terminate without an admin token', async () => {
  assert.ok(cluster);
  const { address, auth } = cluster;
  const connect = (apiKey?: string) => Connection.connect({ address, ...(apiKey ? { apiKey, tls: false } : {}) });
  const namespace = 'default';
  const PERMISSION_DENIED = 7;
  // A workflow of the server's, open on a queue no worker polls: what the refused calls aim at.
  const server = await connect(auth.tokens.server);
  const reader = await connect(auth.tokens.reader);
  const anonymous = await connect();
  const worker = await connect(auth.tokens.worker);
  const connections = [server, reader, anonymous, worker];
  try {
    const workflowId = `authorization-probe-${Date.now()}`;
    const execution = { workflowId };
    const { runId } = await server.workflowService.startWorkflowExecution({
      namespace,
      workflowId,
      workflowType: { name: 'paymentWorkflow' },
      taskQueue: { name: 'authorization-probe' },
      requestId: workflowId,
    });
    const attacks = (connection: Connection) => ({
      poll: () =>
        connection.withDeadline(Date.now() + 1500, () =>
          connection.workflowService.pollWorkflowTaskQueue({ namespace, taskQueue: { name: TASK_QUEUE } }),
        ),
      pollActivities: () =>
        connection.withDeadline(Date.now() + 1500, () =>
          connection.workflowService.pollActivityTaskQueue({ namespace, taskQueue: { name: TASK_QUEUE } }),
        ),
      signal: () =>
        connection.workflowService.signalWorkflowExecution({
          namespace,
          workflowExecution: execution,
          signalName: 'x',
        }),
      update: () =>
        connection.workflowService.updateWorkflowExecution({
          namespace,
          workflowExecution: execution,
          request: { meta: { updateId: 'probe' }, input: { name: 'resume' } },
        }),
      reset: () =>
        connection.workflowService.resetWorkflowExecution({
          namespace,
          workflowExecution: { workflowId, runId },
          requestId: `${workflowId}-reset`,
        }),
      terminate: () =>
        connection.workflowService.terminateWorkflowExecution({ namespace, workflowExecution: execution, reason: 'x' }),
      start: () =>
        connection.workflowService.startWorkflowExecution({
          namespace,
          workflowId: `${workflowId}-2`,
          workflowType: { name: 'paymentWorkflow' },
          taskQueue: { name: 'authorization-probe' },
        }),
    });
    const operator = await connect(auth.tokens.operator);
    connections.push(operator);
    const polls = ['poll', 'pollActivities'];
    const ends = ['reset', 'terminate'];
    // Each holder, and the calls it must be refused: only a worker's token takes tasks, and it writes nothing else.
    for (const [who, connection, refused] of [
      ['no token', anonymous, undefined],
      ["the reader's token", reader, undefined],
      ["the worker's token", worker, (name: string) => !polls.includes(name)],
      ["the server's token", server, (name: string) => [...polls, ...ends].includes(name)],
      ["the operator's token", operator, (name: string) => [...polls, ...ends].includes(name)],
    ] as const) {
      const names = Object.keys(attacks(connection)).filter((name) => refused?.(name) ?? true);
      const outcomes: Record<string, unknown> = {};
      for (const name of names)
        outcomes[name] = await outcomeOf(attacks(connection)[name as keyof ReturnType<typeof attacks>]);
      assert.deepEqual(outcomes, Object.fromEntries(names.map((name) => [name, PERMISSION_DENIED])), `with ${who}`);
    }
    // The same with a token signed by another key (a forged `temporal-system:admin`).
    const forged = auth.tokens.setup.replace(/\.[^.]+$/, `.${Buffer.alloc(64, 1).toString('base64url')}`);
    assert.equal(
      await anonymous.withMetadata({ authorization: `Bearer ${forged}` }, () =>
        outcomeOf(attacks(anonymous).terminate),
      ),
      PERMISSION_DENIED,
      'a forged token',
    );
    // The `temporal` CLI without a token: refused, the workflow untouched.
    for (const args of [
      ['workflow', 'terminate', '--workflow-id', workflowId, '--reason', 'x'],
      ['workflow', 'signal', '--workflow-id', workflowId, '--name', 'x'],
      ['task-queue', 'describe', '--task-queue', TASK_QUEUE],
    ]) {
      const cli = spawnSync(temporalBinary('temporal'), [...args, '--address', address, '--namespace', namespace], {
        encoding: 'utf8',
        timeout: 20_000,
      });
      assert.notEqual(cli.status, 0, `temporal ${args.join(' ')}`);
      assert.match(cli.stderr, /unauthorized|PermissionDenied|permission denied/i, `temporal ${args.join(' ')}`);
    }
    const { workflowExecutionInfo } = await reader.workflowService.describeWorkflowExecution({
      namespace,
      execution: { workflowId, runId },
    });
    assert.equal(workflowExecutionInfo?.status, 1, 'still running after every refused call');
    // What the holders may do: the worker polls, the server signals, an admin (setup's token) terminates.
    // On the probe's queue: the payments' queue holds the running workers' (versioned) polls.
    const workerPoll = () =>
      // Under 2 s the frontend answers "Context timeout is too short" (FAILED_PRECONDITION), after authorizing.
      worker.withDeadline(Date.now() + 3000, () =>
        worker.workflowService.pollWorkflowTaskQueue({ namespace, taskQueue: { name: 'authorization-probe-empty' } }),
      );
    // An empty answer just before the deadline, or the deadline itself: either way the poll was let through.
    assert.ok(['ok', 'deadline'].includes(String(await outcomeOf(workerPoll))), 'the worker polls (nothing to take)');
    assert.equal(await outcomeOf(attacks(server).signal), 'ok', 'the server signals');
    const admin = await connect(auth.tokens.setup);
    connections.push(admin);
    assert.equal(await outcomeOf(attacks(admin).terminate), 'ok', 'an admin terminates');
  } finally {
    for (const connection of connections) await connection.close();
  }
});
