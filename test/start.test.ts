import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { Client } from 'pg';
import { request } from 'undici';
import { eventually } from '../src/local/eventually';
import { freePort } from '../src/local/free-port';
import { waitUntil } from '../src/local/wait-until';
import { exposedPaths } from './support/file-modes';
import { merchantApi, startSystem, stopSystem } from './support/npm-start';
import { paymentRequest, postCodec } from './support/request-builders';
import { ServerMetrics, WorkerMetrics } from '../src/domain/metric-names';

// `npm start` as a user runs it: its own dev server and PostgreSQL persisted under DATA_DIR, sandbox, worker and server.

const dataDir = mkdtempSync(join(tmpdir(), 'start-test-'));
// Made readable by all, as an old data directory may be: npm start makes it private.
chmodSync(dataDir, 0o755);
let running: ChildProcess | undefined;
after(async () => {
  if (running) await stopSystem(running);
  rmSync(dataDir, { recursive: true, force: true });
});

it('npm start runs everything, prints URLs and keys, restarts crashed children, stops on Ctrl-C, and a restart keeps every payment', async () => {
  const ports = { PORT: await freePort(), TEMPORAL_PORT: await freePort(), TEMPORAL_UI_PORT: await freePort() };
  const env = {
    DATA_DIR: dataDir,
    PORT: String(ports.PORT),
    TEMPORAL_PORT: String(ports.TEMPORAL_PORT),
    TEMPORAL_UI_PORT: String(ports.TEMPORAL_UI_PORT),
    SANDBOX_PORT: String(await freePort()),
    METRICS_PORT: String(await freePort()),
    WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
    SANDBOX_CALLBACK_DELAY: '200ms',
    CALLBACK_TIMEOUT_MOBILE_MONEY: '1h',
    LOG_LEVEL: 'warn',
  };
  const base = `http://127.0.0.1:${ports.PORT}`;
  const first = await startSystem(env);
  running = first.child;
  assert.match(first.output(), new RegExp(`Temporal Web UI\\s+http://127.0.0.1:${ports.TEMPORAL_UI_PORT}`));
  assert.match(first.output(), /codec server\s+http:\/\/localhost:\d+\/codec/);
  const key = /merchant key \(merchant "demo"\): (\S+)/.exec(first.output())?.[1];
  assert.ok(key, first.output());
  const secretsFile = join(dataDir, 'secrets.json');
  const secrets = JSON.parse(readFileSync(secretsFile, 'utf8')) as Record<string, string>;
  assert.equal(secrets.merchantKey, key);
  assert.notEqual(secrets.fingerprintSecret, secrets.callbackKeys, 'one secret per purpose');
  assert.notEqual(secrets.vaultKeys, secrets.encryptionKeys, 'the card vault has its own key');
  assert.deepEqual(exposedPaths(dataDir), [], 'DATA_DIR and everything in it is private');
  // The records' private PostgreSQL: its URL shown without the password, which stays in DATA_DIR.
  const passwordFile = join(dataDir, 'postgres', 'password');
  const records = new RegExp(
    `records\\s+(postgres://payments@127\\.0\\.0\\.1:\\d+/payments) \\(private PostgreSQL; password in ${passwordFile}\\)`,
  );
  const recordsUrl = records.exec(first.output())?.[1];
  assert.ok(recordsUrl, first.output());
  const databasePassword = readFileSync(passwordFile, 'utf8').trim();
  assert.match(databasePassword, /^[0-9a-f]{48}$/);
  assert.ok(!first.output().includes(databasePassword), 'the database password is never printed');
  const database = new Client({ connectionString: recordsUrl.replace('payments@', `payments:${databasePassword}@`) });
  await database.connect();
  const migrated = await database.query<{ name: string }>('SELECT name FROM schema_migrations');
  await database.end();
  assert.deepEqual(
    migrated.rows.map((row) => row.name),
    readdirSync(join(__dirname, '..', 'src', 'records', 'migrations')).sort(),
  );

  // The Web UI decodes with the expiring, decode-only URL npm start printed, pasted into its Codec Server settings;
  // the UI hands no codec credential to every browser, and no command line holds a secret.
  const uiSettings = await request(`http://127.0.0.1:${ports.TEMPORAL_UI_PORT}/api/v1/settings`);
  assert.equal(((await uiSettings.body.json()) as { Codec: { Endpoint: string } }).Codec.Endpoint, '');
  const codecUrl = /Web UI decoding[^\n]*\n\s+(\S+)/.exec(first.output())?.[1];
  assert.match(codecUrl ?? '', new RegExp(`^http://localhost:${ports.PORT}/codec/ui/[\\w.-]+$`), first.output());
  const operatorKey = /operator key \(operator "[a-z0-9._-]+"\): (\S+)/.exec(first.output())?.[1];
  assert.ok(operatorKey, first.output());
  const uiOrigin = `http://localhost:${ports.TEMPORAL_UI_PORT}`;
  const codec = async (url: string, payloads: unknown, headers: Record<string, string>) => {
    const answer = await postCodec(url, payloads, headers);
    return { ...answer, cors: answer.headers['access-control-allow-origin'] };
  };
  const plain = [{ metadata: { encoding: btoa('json/plain') }, data: btoa('"hello"') }];
  const sealed = await codec(`${base}/codec/encode`, plain, { authorization: `Bearer ${operatorKey}` });
  assert.equal(sealed.status, 200, 'the printed operator key encodes');
  const decoded = await codec(`${codecUrl}/decode`, sealed.payloads, { origin: uiOrigin });
  assert.deepEqual([decoded.status, decoded.cors, decoded.payloads], [200, uiOrigin, plain]);
  assert.equal((await codec(`${codecUrl}/encode`, plain, { origin: uiOrigin })).status, 403, 'it only decodes');
  const secretValues = [...Object.values(secrets), codecUrl!.slice(codecUrl!.lastIndexOf('/') + 1), databasePassword];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let commandLine: string;
    try {
      commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue; // the process ended meanwhile
    }
    for (const secret of secretValues)
      assert.ok(!commandLine.includes(secret), `a secret on process ${pid}'s command line`);
  }

  const { api, waitFor } = merchantApi(base, key);

  const done = await api('POST', '/v1/payments', paymentRequest('bank_credit', '00'));
  assert.equal(done.status, 201);
  await waitFor(done.body.id, 'succeeded');
  // Both Prometheus endpoints it prints answer, with the product's metrics.
  const metricsLine = /metrics\s+(\S+) \(server\), (\S+) \(worker\)/.exec(first.output());
  assert.ok(metricsLine?.[1] && metricsLine[2], first.output());
  for (const [url, name] of [
    [metricsLine[1], `${ServerMetrics.callbacks}{result="accepted",reason="accepted"`],
    [metricsLine[2], `${WorkerMetrics.paymentsFinished}{`],
  ] as const) {
    const scraped = await request(url);
    assert.equal(scraped.statusCode, 200);
    assert.ok((await scraped.body.text()).includes(name), `${url} shows ${name}`);
  }
  // A crashed child is restarted with backoff, and the system keeps taking payments.
  for (const name of ['worker', 'server', 'sandbox']) {
    const pids = () => [...first.output().matchAll(new RegExp(`${name} started \\(pid (\\d+)\\)`, 'g'))];
    const pid = Number(pids().at(-1)?.[1]);
    assert.ok(pid > 0, first.output());
    process.kill(pid, 'SIGKILL');
    await waitUntil(() => Promise.resolve(pids().length === 2 ? true : undefined), {
      timeoutMs: 20_000,
      timedOut: () => new Error(`${name} was not restarted:\n${first.output()}`),
    });
    assert.match(first.output(), new RegExp(`${name} exited unexpectedly \\(signal SIGKILL\\); restarting in 1 s`));
  }
  const afterCrashes = await waitUntil(
    async () => {
      const answer = await api('POST', '/v1/payments', paymentRequest('bank_credit', '00')).catch(() => undefined);
      return answer?.status === 201 ? answer : undefined;
    },
    { timeoutMs: 30_000, timedOut: (err) => new Error(`no payment after the restarts: ${String(err)}`) },
  );
  await waitFor(afterCrashes.body.id, 'succeeded');
  // The demo merchant's notifications reach the sandbox's merchant side, signed with the generated secret (the one
  // made after the restarts: the sandbox keeps what it received in memory).
  const inboxUrl = /notifications\s+(\S+) \(/.exec(first.output())?.[1];
  const sandboxBearer = /sandbox ledger\s+\S+ \(authorization: Bearer (\S+)\)/.exec(first.output())?.[1];
  assert.ok(inboxUrl && sandboxBearer, first.output());
  type Received = { type: string; verified: boolean; event: { data: { object: { id: string } } } };
  const told = await eventually(
    async () => {
      const inbox = await request(inboxUrl, { headers: { authorization: `Bearer ${sandboxBearer}` } });
      const received = (await inbox.body.json()) as Received[];
      const found = received.find(
        (n) => n.type === 'payment.succeeded' && n.event.data.object.id === afterCrashes.body.id,
      );
      assert.ok(found, `received: ${JSON.stringify(received.map((n) => n.type))}`);
      return found;
    },
    { timeoutMs: 15_000, what: `the demo merchant told ${afterCrashes.body.id} succeeded` },
  );
  assert.equal(told.verified, true);
  // Scenario 33 never calls back: this payment is still waiting when the system stops.
  const waiting = await api('POST', '/v1/payments', paymentRequest('mobile_money_debit', '33'));
  await waitFor(waiting.body.id, 'pending');
  assert.equal(await stopSystem(first.child), 0);
  assert.deepEqual(
    exposedPaths(dataDir),
    [],
    'what the run wrote into DATA_DIR (ledger, Temporal, PostgreSQL) is private',
  );

  // A data directory from before FINGERPRINT_SECRET (and the generated sandbox token) gets them on its next start.
  const { fingerprintSecret: _fingerprint, sandboxToken: _token, ...older } = secrets;
  writeFileSync(secretsFile, JSON.stringify(older));
  const second = await startSystem(env);
  running = second.child;
  assert.ok(second.output().includes(key), 'the same keys after a restart');
  assert.equal(records.exec(second.output())?.[1], recordsUrl, 'the same database, on the same port');
  // The worker may still be bundling its workflows (503 until it answers queries): wait for the states.
  assert.equal((await waitFor(done.body.id, 'succeeded')).status, 'succeeded');
  assert.equal((await waitFor(waiting.body.id, 'pending')).status, 'pending');
  const renewed = JSON.parse(readFileSync(secretsFile, 'utf8')) as Record<string, string>;
  assert.equal(renewed.merchantKey, key);
  assert.match(renewed.fingerprintSecret ?? '', /^[\w-]{43}$/);
  // The workflow still waits for its callback: a genuine one (through the URL the provider was given) settles it.
  // The sandbox's ledger shows callback URLs: only with the sandbox token, which npm start prints next to it.
  const [, ledgerUrl, sandboxToken] =
    /sandbox ledger\s+(\S+) \(authorization: Bearer (\S+)\)/.exec(second.output()) ?? [];
  assert.ok(ledgerUrl && sandboxToken, second.output());
  assert.equal(sandboxToken, renewed.sandboxToken);
  const refused = await request(ledgerUrl);
  assert.equal(refused.statusCode, 401);
  await refused.body.dump();
  const ledger = (await (
    await request(ledgerUrl, { headers: { authorization: `Bearer ${sandboxToken}` } })
  ).body.json()) as {
    callback_url: string;
    transaction_id: number;
  }[];
  const transaction = ledger.find((t) => t.callback_url.includes(waiting.body.id));
  assert.ok(transaction?.callback_url);
  // A callback is a hint: the provider's status query must say the same before it settles.
  const settled = await request(
    ledgerUrl.replace(/\/transactions$/, `/transactions/${transaction.transaction_id}/succeed`),
    {
      method: 'POST',
      headers: { authorization: `Bearer ${sandboxToken}` },
    },
  );
  assert.equal(settled.statusCode, 204);
  await settled.body.dump();
  const callback = await request(transaction.callback_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      status: '1',
      message: 'paid late',
      amount: 12.5,
      transaction_id: transaction.transaction_id,
    }),
  });
  assert.equal(callback.statusCode, 200);
  await callback.body.dump();
  await waitFor(waiting.body.id, 'succeeded');
  assert.equal(await stopSystem(second.child), 0);
});
