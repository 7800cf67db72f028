import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { request } from 'undici';
import { generateKeyEntry, parseKeyring } from '../../src/crypto/keyring';
import { freePort } from '../../src/local/free-port';
import { buildStack, serverProcess, workerProcess } from '../../src/local/stack-builder';
import type { BuiltStack } from '../../src/local/stack-builder';
import { startWorkerProcess } from '../../src/local/worker-process';
import type { Sandbox } from '../../src/sandbox/sandbox-app';
import { connectClient } from '../../src/temporal/temporal-client';
import { startBenchCluster } from './bench-cluster';
import type { BenchCluster } from './bench-cluster';
import { processCpu, processTreeCpu } from './cpu';
import type { CpuSource } from './cpu';
import { PostgresStats } from './postgres-stats';
import type { BenchSettings } from './settings';
import { log } from './stats';

export const MERCHANT_KEY = 'mk_bench_0123456789abcdef';
const OPERATOR_KEY = 'ok_bench_0123456789abcdef';
const TOKEN = 'bench-sandbox-token';
export const PAYMENT_TASK_QUEUE = 'bench';
export const TWIN_TASK_QUEUE = 'bench-twin';

/** The merchant API of one server, as a merchant calls it. */
export type MerchantApi = <T>(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: T }>;

/** Everything one benchmark run measures against, on one Temporal dev server or one real cluster. */
export interface BenchStack {
  /** A Temporal client with the payment worker's keys (reads payment histories; starts the twin). */
  client: Client;
  sandbox: Sandbox;
  /** The payment workers' processes, one each (`--workers N`). */
  workerPids: number[];
  /**
   * The processes whose CPU the bench accounts for: Temporal, the workers (their sum), the server, PostgreSQL (the
   * postmaster and every process under it), Redis, and the bench's own (sandbox and clients).
   */
  cpu: Record<string, CpuSource>;
  /** The payments database's write counters. */
  postgresStats: PostgresStats;
  /** The workers' Prometheus endpoints (host:port), one each. */
  workerMetricsAddresses: string[];
  /** The real cluster the run is on (its history shards, its profiles); absent on the dev server. */
  cluster?: BenchCluster;
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

/**
 * Starts Temporal, Redis, the sandbox, the compiled payment worker(s) and the server, as `npm start` wires them; with
 * BENCH_CLUSTER, on a real cluster it starts first (as `npm run cluster` does), each process with its own profile.
 */
export async function startStack(
  settings: Pick<
    BenchSettings,
    'BENCH_CONCURRENCY' | 'BENCH_BATCHES' | 'BENCH_CLUSTER' | 'BENCH_WORKERS' | 'BENCH_SHARDS'
  >,
): Promise<BenchStack> {
  let built: BuiltStack | undefined;
  const encryptionKeys = generateKeyEntry('bench');
  // A part that dies mid-run would leave payments waiting forever: the run is broken, so it ends.
  const broken = (what: string) => {
    log(`BROKEN: ${what}; stopping`);
    void (built?.stop() ?? Promise.resolve()).then(() => cluster?.stop()).finally(() => process.exit(1));
  };
  const cluster =
    settings.BENCH_CLUSTER === 'true' ? await startBenchCluster(settings.BENCH_SHARDS, broken) : undefined;
  const nodeArgs = (name: string) => (process.env[name] ?? '').split(' ').filter(Boolean);
  try {
    built = await buildStack({
      temporal: cluster ? { address: cluster.address } : { devServer: { namespace: 'default' } },
      // On the cluster the records live in its PostgreSQL, beside Temporal's own databases, as `npm run cluster` has it.
      database: cluster ? { url: cluster.databaseUrl } : undefined,
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
          TASK_QUEUE: PAYMENT_TASK_QUEUE,
          PROVIDER_TOKEN: TOKEN,
          ENCRYPTION_KEYS: encryptionKeys,
          LOG_LEVEL: 'warn',
        },
        worker: {
          ...cluster?.profile('worker'),
          // The provider's status queries, as `npm start` wires them: reconciliation (scenario 22) asks the sandbox.
          PROVIDER_STATUS_URL: `${parts.providerUrl}/api/transactions/{transaction_id}`,
          PROVIDER_STATUS_BY_REFERENCE_URL: `${parts.providerUrl}/api/transactions?reference={reference}`,
          ...workerExtras(),
        },
        server: {
          ...cluster?.profile('server'),
          HOST: '127.0.0.1',
          MERCHANT_API_KEYS: `bench:${MERCHANT_KEY}`,
          OPERATOR_API_KEYS: `bench:${OPERATOR_KEY}`,
          FINGERPRINT_SECRET: 'bench-fingerprint-secret-0123456789abcdef',
          // Batches run at once share the concurrency: as many items in flight as single credits have clients.
          BATCH_CONCURRENCY: String(settings.BENCH_CONCURRENCY / settings.BENCH_BATCHES),
          // The benchmark measures the stack, not the rate limit: its one merchant makes every request.
          MERCHANT_RATE_LIMITS: '*:0',
          // The waiting phase's payments get no callback: they must still be waiting when the worker is measured.
          CALLBACK_TIMEOUT_MOBILE_MONEY: '2h',
        },
      }),
      // The worker as `npm run worker` runs it: compiled, with the bundle `npm run build` made.
      worker: workerProcess(nodeArgs('BENCH_WORKER_NODE_ARGS')),
      // The server as `npm run server` runs it, in a process of its own: its CPU apart from the sandbox's and the clients'.
      servers: [serverProcess(nodeArgs('BENCH_SERVER_NODE_ARGS'))],
      onUnexpectedExit: (name, code, signal) => broken(`the ${name} exited mid-run (${code ?? signal})`),
    });
  } catch (err) {
    log('start-up failed; stopping what started');
    await cluster?.stop();
    throw err;
  }
  const stack = built;
  const stopStackAndCluster = async () => {
    await stack.stop();
    await cluster?.stop();
  };
  // The first worker came with the stack; the others with the same environment, each its own metrics port.
  const workerMetricsAddresses = [stack.workerMetricsAddress];
  const workerPids = [stack.worker?.child?.pid ?? 0];
  try {
    for (let n = 2; n <= settings.BENCH_WORKERS; n++) {
      const address = `127.0.0.1:${await freePort()}`;
      const child = await startWorkerProcess(
        { ...stack.workerEnv, WORKER_METRICS_ADDRESS: address },
        nodeArgs('BENCH_WORKER_NODE_ARGS'),
      );
      stack.adopt(child, `payment worker ${n}`);
      workerMetricsAddresses.push(address);
      workerPids.push(child.pid ?? 0);
    }
  } catch (err) {
    await stopStackAndCluster();
    throw err;
  }
  // The server's profile on a cluster: the twin's client starts, updates and signals (a `write` token).
  const client = await connectClient({
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    ...cluster?.profile('server'),
    ENCRYPTION_KEYS: parseKeyring(encryptionKeys),
  }).catch(async (err: unknown) => {
    await stopStackAndCluster();
    throw err;
  });
  const postgresStats = new PostgresStats(stack.databaseUrl);
  const stop = async () => {
    await client.connection.close().catch(() => undefined);
    await postgresStats.close().catch(() => undefined);
    await stopStackAndCluster();
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
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: stack.temporalAddress,
          TASK_QUEUE: TWIN_TASK_QUEUE,
          // On a cluster only a worker's token polls: the twin's worker gets the payment workers' profile.
          ...cluster?.profile('worker'),
        },
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
  const postmasterPid = await postgresStats.postmasterPid().catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  const workerTrees = workerPids.map(processTreeCpu);
  const cpu = {
    // On a cluster: temporal-server (every service in one process); the Web UI server, idle, is not counted.
    temporal: processTreeCpu(cluster?.serverPid ?? stack.devServer?.process.pid ?? 0),
    worker: () => workerTrees.reduce((sum, tree) => sum + tree(), 0),
    server: processTreeCpu(stack.servers[0]?.child?.pid ?? 0),
    postgres: processTreeCpu(postmasterPid),
    redis: processTreeCpu(stack.redis?.process.pid ?? 0),
    'bench (sandbox, clients)': processCpu(process.pid),
  };
  return {
    client,
    sandbox: stack.sandbox,
    workerPids,
    cpu,
    postgresStats,
    workerMetricsAddresses,
    cluster,
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
export function workerExtras(): Record<string, string> {
  const extras: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('BENCH_WORKER_') && name !== 'BENCH_WORKER_NODE_ARGS' && value !== undefined)
      extras[name.slice('BENCH_'.length)] = value;
  }
  return extras;
}
