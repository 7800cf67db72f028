import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { request } from 'undici';
import { parseConfig, serverSchema } from '../../src/config';
import { generateKeyEntry, parseKeyring } from '../../src/crypto/keyring';
import { startDevServer } from '../../src/local/dev-server';
import { freePort } from '../../src/local/free-port';
import { startRedisServer } from '../../src/local/redis-server';
import { startWorkerProcess } from '../../src/local/worker-process';
import { createSandbox } from '../../src/sandbox/app';
import type { Sandbox } from '../../src/sandbox/app';
import { startServer } from '../../src/server';
import { connectClient } from '../../src/temporal/client';
import { log } from './stats';

export const MERCHANT_KEY = 'mk_bench_0123456789abcdef';
const OPERATOR_KEY = 'ok_bench_0123456789abcdef';
const TOKEN = 'bench-sandbox-token';
export const TWIN_TASK_QUEUE = 'bench-twin';

/** Everything one benchmark run measures against, on one Temporal dev server. */
export interface BenchStack {
  /** A Temporal client with the payment worker's keys (reads payment histories; starts the twin). */
  client: Client;
  sandbox: Sandbox;
  workerPid: number;
  /** The processes whose CPU the bench accounts for: Temporal, Redis, the worker, and the bench (server, sandbox, clients). */
  pids: Record<string, number>;
  /** The merchant API, as a merchant calls it. */
  api<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** Starts the twin's worker process; resolves once it polls. */
  startTwinWorker(): Promise<ChildProcess>;
  /** Stops every process this run started (also on an error or a signal). */
  stop(): Promise<void>;
}

// Children are killed when the bench exits however it exits, so an error path leaves no dev server behind.
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Starts Temporal, Redis, the sandbox, the compiled payment worker and the server, as `npm start` wires them. */
export async function startStack(batchConcurrency: number): Promise<BenchStack> {
  const stoppers: (() => Promise<unknown>)[] = [];
  let stopping = false;
  // A worker that dies mid-run would leave payments waiting forever: the run is broken, so it ends.
  const brokenIfExits = (child: ChildProcess, name: string) =>
    child.once('exit', (code, signal) => {
      if (stopping || stoppedOnPurpose.has(child)) return;
      log(`BROKEN: the ${name} exited mid-run (${code ?? signal}); stopping`);
      void stop().finally(() => process.exit(1));
    });
  const stop = async () => {
    stopping = true;
    for (const stopOne of stoppers.splice(0).reverse()) await stopOne().catch(() => undefined);
  };
  try {
    const started = <T extends { process: ChildProcess; stop(): Promise<void> }>(launcher: Promise<T>) =>
      launcher.then((launched) => {
        track(launched.process);
        stoppers.push(() => launched.stop());
        return launched;
      });
    // Both settle before anything is judged, so a failure of one never leaves the other running.
    const [devServerStart, redisStart] = await Promise.allSettled([
      started(freePort().then((port) => startDevServer({ port, namespace: 'default' }))),
      started(freePort().then((port) => startRedisServer(port))),
    ]);
    if (devServerStart.status === 'rejected') throw devServerStart.reason;
    if (redisStart.status === 'rejected') throw redisStart.reason;
    const devServer = devServerStart.value;
    const redis = redisStart.value;
    const sandbox = await createSandbox({
      token: TOKEN,
      callbackDelayMs: 0,
      slowResponseMs: 30_000,
      auto3ds: 'approve',
      host: '127.0.0.1',
      port: 0,
      logger: false,
    });
    stoppers.push(() => sandbox.close());
    const encryptionKeys = generateKeyEntry('bench');
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
    const worker = track(
      await startWorkerProcess(
        { ...common, ...workerExtras() },
        (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean),
      ),
    );
    stoppers.push(() => stopChild(worker));
    brokenIfExits(worker, 'payment worker');
    const server = await startServer(
      parseConfig(serverSchema, {
        ...common,
        PORT: String(port),
        HOST: '127.0.0.1',
        MERCHANT_API_KEYS: `bench:${MERCHANT_KEY}`,
        OPERATOR_API_KEYS: `bench:${OPERATOR_KEY}`,
        FINGERPRINT_SECRET: 'bench-fingerprint-secret-0123456789abcdef',
        BATCH_CONCURRENCY: String(batchConcurrency),
        // The waiting phase's payments get no callback: they must still be waiting when the worker is measured.
        CALLBACK_TIMEOUT_MOBILE_MONEY: '2h',
      }),
    );
    stoppers.push(() => server.close());
    const client = await connectClient({
      TEMPORAL_ADDRESS: devServer.address,
      TEMPORAL_NAMESPACE: 'default',
      ENCRYPTION_KEYS: parseKeyring(encryptionKeys),
    });
    stoppers.push(() => client.connection.close());
    const api = async <T>(method: 'GET' | 'POST', path: string, body?: unknown) => {
      const response = await request(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.statusCode, body: (await response.body.json()) as T };
    };
    const startTwinWorker = async () => {
      const child = track(
        spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'twin-worker.ts')], {
          env: { ...process.env, TEMPORAL_ADDRESS: devServer.address, TASK_QUEUE: TWIN_TASK_QUEUE },
          stdio: ['ignore', 'pipe', 'inherit'],
        }),
      );
      stoppers.push(() => stopChild(child));
      brokenIfExits(child, 'twin worker');
      await new Promise<void>((resolve, reject) => {
        child.stdout?.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('polling task queue')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`the twin worker exited early with code ${code}`)));
      });
      return child;
    };
    const pids = {
      temporal: devServer.process.pid ?? 0,
      worker: worker.pid ?? 0,
      'bench (server, sandbox, clients)': process.pid,
      redis: redis.process.pid ?? 0,
    };
    return { client, sandbox, workerPid: worker.pid ?? 0, pids, api, startTwinWorker, stop };
  } catch (err) {
    log('start-up failed; stopping what started');
    await stop();
    throw err;
  }
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

const stoppedOnPurpose = new WeakSet<ChildProcess>();

/** SIGTERM, then SIGKILL after 10 s; resolves once the process has exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  stoppedOnPurpose.add(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
