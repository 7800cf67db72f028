import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { request } from 'undici';
import { generateKeyEntry, parseKeyring } from '../../src/crypto/keyring';
import { buildStack, serverProcess, workerProcess } from '../../src/local/stack-builder';
import type { BuiltStack } from '../../src/local/stack-builder';
import type { Sandbox } from '../../src/sandbox/sandbox-app';
import { connectClient } from '../../src/temporal/temporal-client';
import { freePort } from '../../src/local/free-port';
import { processCpu, processTreeCpu } from './cpu';
import type { CpuSource } from './cpu';
import { PostgresStats } from './postgres-stats';
import { log } from './stats';

export const MERCHANT_KEY = 'mk_bench_0123456789abcdef';
const OPERATOR_KEY = 'ok_bench_0123456789abcdef';
const TOKEN = 'bench-sandbox-token';
export const TWIN_TASK_QUEUE = 'bench-twin';

/** The merchant API of one server, as a merchant calls it. */
export type MerchantApi = <T>(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: T }>;

/** Everything one benchmark run measures against, on one Temporal dev server. */
export interface BenchStack {
  /** A Temporal client with the payment worker's keys (reads payment histories; starts the twin). */
  client: Client;
  sandbox: Sandbox;
  workerPid: number;
  /**
   * The processes whose CPU the bench accounts for: Temporal, the worker, the server, PostgreSQL (the postmaster and
   * every process under it), Redis, and the bench's own (sandbox and clients).
   */
  cpu: Record<string, CpuSource>;
  /** The payments database's write counters. */
  postgresStats: PostgresStats;
  /** The worker's Prometheus endpoint (host:port). */
  workerMetricsAddress: string;
  /** The merchant API, as a merchant calls it. */
  api: MerchantApi;
  /** Starts the twin's worker process; resolves once it polls. */
  startTwinWorker(): Promise<ChildProcess>;
  /**
   * Starts one more API server on the same worker and task queue, with `env` over the stack's server settings (other
   * timings); resolves to its merchant API and a stop.
   */
  startServerWith(env: Record<string, string>): Promise<{ api: MerchantApi; stop(): Promise<void> }>;
  /** Stops every process this run started (also on an error or a signal). */
  stop(): Promise<void>;
}

/** Starts Temporal, Redis, the sandbox, the compiled payment worker and the server, as `npm start` wires them. */
export async function startStack(batchConcurrency: number): Promise<BenchStack> {
  let built: BuiltStack | undefined;
  const encryptionKeys = generateKeyEntry('bench');
  try {
    built = await buildStack({
      temporal: { devServer: { namespace: 'default' } },
      vault: { redis: {} },
      sandbox: {
        token: TOKEN,
        callbackDelayMs: 0,
        slowResponseMs: 30_000,
        auto3ds: 'approve',
        host: '127.0.0.1',
        port: 0,
        logger: false,
      },
      env: (parts) => ({
        shared: {
          // What the server signs and the worker checks, and the callback URLs the worker derives for the server.
          SIGNING_KEYS: generateKeyEntry('bench-signing'),
          CALLBACK_SECRET: 'bench-callback-secret-0123456789abcdef',
          TASK_QUEUE: 'bench',
          PROVIDER_TOKEN: TOKEN,
          ENCRYPTION_KEYS: encryptionKeys,
          LOG_LEVEL: 'warn',
        },
        worker: {
          // The provider's status queries, as `npm start` wires them: reconciliation (scenario 22) asks the sandbox.
          PROVIDER_STATUS_URL: `${parts.providerUrl}/api/transactions/{transaction_id}`,
          PROVIDER_STATUS_BY_REFERENCE_URL: `${parts.providerUrl}/api/transactions?reference={reference}`,
          ...workerExtras(),
        },
        server: {
          HOST: '127.0.0.1',
          MERCHANT_API_KEYS: `bench:${MERCHANT_KEY}`,
          OPERATOR_API_KEYS: `bench:${OPERATOR_KEY}`,
          FINGERPRINT_SECRET: 'bench-fingerprint-secret-0123456789abcdef',
          BATCH_CONCURRENCY: String(batchConcurrency),
          // The benchmark measures the stack, not the rate limit: its one merchant makes every request.
          MERCHANT_RATE_LIMITS: '*:0',
          // The waiting phase's payments get no callback: they must still be waiting when the worker is measured.
          CALLBACK_TIMEOUT_MOBILE_MONEY: '2h',
        },
      }),
      // The worker as `npm run worker` runs it: compiled, with the bundle `npm run build` made.
      worker: workerProcess((process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean)),
      // The server as `npm run server` runs it, in a process of its own: its CPU apart from the sandbox's and the clients'.
      servers: [serverProcess()],
      // A worker that dies mid-run would leave payments waiting forever: the run is broken, so it ends.
      onUnexpectedExit: (name, code, signal) => {
        log(`BROKEN: the ${name} exited mid-run (${code ?? signal}); stopping`);
        void (built?.stop() ?? Promise.resolve()).finally(() => process.exit(1));
      },
    });
  } catch (err) {
    log('start-up failed; stopping what started');
    throw err;
  }
  const stack = built;
  const client = await connectClient({
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    ENCRYPTION_KEYS: parseKeyring(encryptionKeys),
  }).catch(async (err: unknown) => {
    await stack.stop();
    throw err;
  });
  const postgresStats = new PostgresStats(stack.databaseUrl);
  const stop = async () => {
    await client.connection.close().catch(() => undefined);
    await postgresStats.close().catch(() => undefined);
    await stack.stop();
  };
  const api = merchantApi(stack.serverUrls[0] ?? '');
  const startServerWith = async (env: Record<string, string>) => {
    const port = await freePort();
    const launched = await serverProcess()(
      { ...stack.serverEnv, ...env, PORT: String(port), METRICS_PORT: String(await freePort()) },
      'API server (other timings)',
    );
    if (launched.child) stack.adopt(launched.child, 'API server (other timings)');
    return { api: merchantApi(`http://127.0.0.1:${port}`), stop: () => launched.stop() };
  };
  const startTwinWorker = async () => {
    const child = stack.adopt(
      spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'twin-worker.ts')], {
        env: { ...process.env, TEMPORAL_ADDRESS: stack.temporalAddress, TASK_QUEUE: TWIN_TASK_QUEUE },
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
      'twin worker',
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('polling task queue')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`the twin worker exited early with code ${code}`)));
    });
    return child;
  };
  const workerPid = stack.worker?.child?.pid ?? 0;
  const postmasterPid = await postgresStats.postmasterPid().catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  const cpu = {
    temporal: processTreeCpu(stack.devServer?.process.pid ?? 0),
    worker: processTreeCpu(workerPid),
    server: processTreeCpu(stack.servers[0]?.child?.pid ?? 0),
    postgres: processTreeCpu(postmasterPid),
    redis: processTreeCpu(stack.redis?.process.pid ?? 0),
    'bench (sandbox, clients)': processCpu(process.pid),
  };
  return {
    client,
    sandbox: stack.sandbox,
    workerPid,
    cpu,
    postgresStats,
    workerMetricsAddress: stack.workerMetricsAddress,
    api,
    startTwinWorker,
    startServerWith,
    stop,
  };
}

/** The merchant API at `baseUrl`, with the bench's merchant key. */
function merchantApi(baseUrl: string): MerchantApi {
  return async <T>(method: 'GET' | 'POST', path: string, body?: unknown) => {
    const response = await request(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.statusCode, body: (await response.body.json()) as T };
  };
}

/**
 * Worker settings the bench passes through from its own environment, to compare worker options: BENCH_WORKER_X as
 * WORKER_X (BENCH_WORKER_NODE_ARGS are node flags, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
function workerExtras(): Record<string, string> {
  const extras: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('BENCH_WORKER_') && name !== 'BENCH_WORKER_NODE_ARGS' && value !== undefined)
      extras[name.slice('BENCH_'.length)] = value;
  }
  return extras;
}
