// Benchmark: one 10,000-item payout batch through the real stack; prints items per second and peak worker memory.
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { parseConfig, serverSchema } from '../src/config';
import type { BatchProgress } from '../src/domain/batch';
import { createSandbox } from '../src/sandbox/app';
import { startServer } from '../src/server';
import { connectClient } from '../src/temporal/client';
import { generateKeyEntry, parseKeyring } from '../src/crypto/keyring';
import { startDevServer } from '../src/local/dev-server';
import { startRedisServer } from '../src/local/redis-server';
import { freePort } from '../src/local/free-port';
import { startWorkerProcess } from '../src/local/worker-process';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 10_000);
const CONCURRENCY = process.env.BENCH_CONCURRENCY ?? '50';
const MEMORY_LIMIT_MB = 400;
const EVENTS_LIMIT = 10_000;
const MERCHANT_KEY = 'mk_bench_0123456789abcdef';
const OPERATOR_KEY = 'ok_bench_0123456789abcdef';
const TOKEN = 'bench-sandbox-token';

function log(line: string): void {
  process.stdout.write(`[bench] ${line}\n`);
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match?.[1] ? Number(match[1]) / 1024 : 0;
}

function batchBody(reference: string) {
  return {
    reference,
    items: Array.from({ length: ITEMS }, (_, i) => ({
      reference: `item-${i + 1}`,
      amount: 10 + (i % 50),
      customer_name: 'Kofi Boateng',
      bank_code: 'GH030100',
      // One item in ten fails; the rest succeed by callback.
      account_number: `12345678${i % 10 === 0 ? '11' : '00'}`,
      description: `salary ${i + 1}`,
    })),
  };
}

async function main(): Promise<number> {
  log(`starting Temporal, the sandbox and a worker process for ${ITEMS} items at concurrency ${CONCURRENCY}…`);
  const [devServer, redis] = await Promise.all([
    freePort().then((port) => startDevServer({ port, namespace: 'default' })),
    freePort().then((port) => startRedisServer(port)),
  ]);
  const encryptionKeys = generateKeyEntry('bench');
  const sandbox = await createSandbox({
    token: TOKEN,
    callbackDelayMs: 200,
    slowResponseMs: 30_000,
    auto3ds: 'approve',
    host: '127.0.0.1',
    port: 0,
    logger: false,
  });
  const port = await freePort();
  const common = {
    TEMPORAL_ADDRESS: devServer.address,
    // What the server signs and the worker checks, and the callback URLs the worker derives for the server.
    SIGNING_KEYS: generateKeyEntry('bench-signing'),
    CALLBACK_SECRET: 'bench-callback-secret-0123456789abcdef',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    TASK_QUEUE: 'bench',
    PROVIDER_BASE_URL: sandbox.url,
    PROVIDER_TOKEN: TOKEN,
    ENCRYPTION_KEYS: encryptionKeys,
    VAULT_URL: redis.url,
    LOG_LEVEL: 'warn',
    WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
    METRICS_PORT: String(await freePort()),
  };
  // The worker as `npm run worker` runs it: compiled, with the bundle `npm run build` made.
  const worker = await startWorkerProcess(common);
  const server = await startServer(
    parseConfig(serverSchema, {
      ...common,
      PORT: String(port),
      HOST: '127.0.0.1',
      MERCHANT_API_KEYS: `bench:${MERCHANT_KEY}`,
      OPERATOR_API_KEYS: `bench:${OPERATOR_KEY}`,
      FINGERPRINT_SECRET: 'bench-fingerprint-secret-0123456789abcdef',
      BATCH_CONCURRENCY: CONCURRENCY,
    }),
  );
  const api = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const response = await request(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.statusCode, body: (await response.body.json()) as T };
  };

  const stopAll = () => {
    worker.kill('SIGKILL');
    devServer.process.kill('SIGKILL');
    void redis.stop();
    process.exit(130);
  };
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
  let peakMb = rssMb(worker.pid ?? 0);
  const sampler = setInterval(() => {
    peakMb = Math.max(peakMb, rssMb(worker.pid ?? 0));
  }, 250);
  try {
    const started = Date.now();
    const created = await api<BatchProgress>('POST', '/v1/payout-batches', batchBody(`bench-${Date.now()}`));
    if (created.status !== 201) throw new Error(`the batch was refused: ${JSON.stringify(created.body)}`);
    const accepted = Date.now();
    log(`batch ${created.body.id} accepted in ${((accepted - started) / 1000).toFixed(1)}s`);
    let batch = created.body;
    let lastPrint = 0;
    while (batch.status !== 'completed') {
      await new Promise((r) => setTimeout(r, 1000));
      const polled = await api<BatchProgress>('GET', `/v1/payout-batches/${batch.id}`);
      if (polled.status !== 200) continue; // a busy worker may miss a query deadline; ask again
      batch = polled.body;
      const done = ITEMS - batch.items.not_started.count - batch.items.in_flight.count;
      if (Date.now() - lastPrint >= 5000 || batch.status === 'completed') {
        lastPrint = Date.now();
        const rate = done / ((Date.now() - accepted) / 1000);
        const left = rate > 0 ? (ITEMS - done) / rate : 0;
        log(
          `${done}/${ITEMS} done · ${rate.toFixed(1)} items/s · ~${left.toFixed(0)}s left · worker RSS ${rssMb(worker.pid ?? 0).toFixed(0)} MB`,
        );
      }
    }
    const seconds = (Date.now() - accepted) / 1000;

    const client = await connectClient({
      TEMPORAL_ADDRESS: devServer.address,
      TEMPORAL_NAMESPACE: 'default',
      ENCRYPTION_KEYS: parseKeyring(encryptionKeys),
    });
    let runs = 0;
    let maxEvents = 0;
    for await (const run of client.workflow.list({ query: `WorkflowId = "${batch.id}"` })) {
      runs += 1;
      maxEvents = Math.max(maxEvents, run.historyLength);
    }
    await client.connection.close();

    const ok = peakMb < MEMORY_LIMIT_MB && maxEvents <= EVENTS_LIMIT && batch.items.succeeded.count > 0;
    log('results');
    log(
      `  items                 ${ITEMS} (succeeded ${batch.items.succeeded.count}, failed ${batch.items.failed.count})`,
    );
    log(`  throughput            ${(ITEMS / seconds).toFixed(1)} items/s (${seconds.toFixed(0)} s)`);
    log(`  peak worker memory    ${peakMb.toFixed(0)} MB RSS (limit ${MEMORY_LIMIT_MB} MB)`);
    log(`  batch workflow runs   ${runs}, longest history ${maxEvents} events (limit ${EVENTS_LIMIT})`);
    log(ok ? 'PASS' : 'FAIL');
    return ok ? 0 : 1;
  } finally {
    clearInterval(sampler);
    worker.kill('SIGTERM');
    await server.close();
    await sandbox.close();
    await devServer.stop();
    await redis.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[bench] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
