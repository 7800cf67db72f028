import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { generateKeyEntry } from '../../src/crypto/keyring';
import { startDevServer } from '../../src/local/dev-server';
import type { DevServer } from '../../src/local/dev-server';
import { freePort } from '../../src/local/free-port';
import { startRedisServer } from '../../src/local/redis-server';
import type { RedisServer } from '../../src/local/redis-server';
import { waitForHttp } from '../../src/local/supervisor';
import { startWorkerProcess } from '../../src/local/worker-process';
import { createSandbox } from '../../src/sandbox/app';
import type { Sandbox } from '../../src/sandbox/app';
import { startFaultProxy } from './fault-proxy';
import type { FaultProxy, ProxyExchange } from './fault-proxy';

const SERVER_JS = resolve(__dirname, '..', '..', 'dist', 'server.js');
export const MERCHANT_ID = 'chaos';
export const MERCHANT_KEY = 'mk_chaos_0123456789abcdef';
const SANDBOX_TOKEN = 'chaos-sandbox-token';

/** The timings every payment of the run gets: short, so that reconciliation and review happen within the run. */
export const TIMINGS = {
  CALLBACK_TIMEOUT_MOBILE_MONEY: '8s',
  CALLBACK_TIMEOUT_CARD: '8s',
  CALLBACK_TIMEOUT_BANK_CREDIT: '8s',
  RECONCILE_FOR: '30s',
  RECONCILE_INTERVAL: '2s',
  LATE_CALLBACK_WINDOW: '5s',
};

/** The provider client's time-outs: an answer the proxy keeps back is given up after PROVIDER_TIMEOUT. */
const PROVIDER_TIMEOUT = '3s';

export interface ChaosStackOptions {
  handleProvider: (exchange: ProxyExchange) => Promise<void>;
  handleCallback: (exchange: ProxyExchange) => Promise<void>;
  batchConcurrency: number;
}

/** Every process of the run, each one restartable the way the harness breaks it. */
export interface ChaosStack {
  /** The two API servers' base URLs; callbacks reach server B (index 1) through the callback proxy. */
  servers: [string, string];
  sandboxUrl: string;
  sandboxToken: string;
  temporalAddress: string;
  encryptionKeys: string;
  killWorker: () => Promise<void>;
  startWorker: () => Promise<void>;
  restartTemporal: () => Promise<number>;
  killServer: (index: 0 | 1) => Promise<void>;
  startServer: (index: 0 | 1) => Promise<void>;
  stopRedis: () => Promise<void>;
  startRedis: () => Promise<void>;
  close(): Promise<void>;
}

async function exitOf(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

/** Starts Temporal (persisted, so it can restart), Redis (persisted), the sandbox behind its proxies, a worker and two API servers. */
export async function startChaosStack(options: ChaosStackOptions): Promise<ChaosStack> {
  const dataDir = mkdtempSync(join(tmpdir(), 'chaos-'));
  mkdirSync(join(dataDir, 'redis'));
  const cleanup: Array<() => Promise<void>> = [];
  const children = new Set<ChildProcess>();
  const close = async () => {
    for (const child of children) await exitOf(child, 'SIGKILL');
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const temporalPort = await freePort();
    const devServerOptions = { port: temporalPort, namespace: 'default', dbFile: join(dataDir, 'temporal.db') };
    let devServer: DevServer = await startDevServer(devServerOptions);
    cleanup.push(() => devServer.stop());
    const redisPort = await freePort();
    const redisOptions = { password: randomBytes(16).toString('hex'), dataDir: join(dataDir, 'redis') };
    let redis: RedisServer | undefined = await startRedisServer(redisPort, redisOptions);
    cleanup.push(async () => redis?.stop());
    const sandbox: Sandbox = await createSandbox({
      token: SANDBOX_TOKEN,
      callbackDelayMs: 1000,
      slowResponseMs: 6000,
      auto3ds: 'approve',
      host: '127.0.0.1',
      port: 0,
      logger: false,
    });
    cleanup.push(() => sandbox.close());
    const ports: [number, number] = [await freePort(), await freePort()];
    const servers: [string, string] = [`http://127.0.0.1:${ports[0]}`, `http://127.0.0.1:${ports[1]}`];
    const providerProxy: FaultProxy = await startFaultProxy(sandbox.url, options.handleProvider);
    cleanup.push(() => providerProxy.close());
    const callbackProxy: FaultProxy = await startFaultProxy(servers[1], options.handleCallback);
    cleanup.push(() => callbackProxy.close());

    const encryptionKeys = generateKeyEntry('chaos');
    const shared = {
      TEMPORAL_ADDRESS: devServer.address,
      TEMPORAL_NAMESPACE: 'default',
      TASK_QUEUE: 'chaos',
      PUBLIC_BASE_URL: callbackProxy.url,
      PROVIDER_BASE_URL: providerProxy.url,
      PROVIDER_TOKEN: SANDBOX_TOKEN,
      CALLBACK_SECRET: randomBytes(24).toString('hex'),
      SIGNING_KEYS: generateKeyEntry('chaos-signing'),
      ENCRYPTION_KEYS: encryptionKeys,
      VAULT_URL: redis.url,
      LOG_LEVEL: 'error',
      ...TIMINGS,
    };
    const workerEnv = {
      ...shared,
      PROVIDER_STATUS_URL: `${providerProxy.url}/api/transactions/{transaction_id}`,
      PROVIDER_STATUS_BY_REFERENCE_URL: `${providerProxy.url}/api/transactions?reference={reference}`,
      PROVIDER_TIMEOUT,
      PROVIDER_CONNECT_TIMEOUT: '1s',
      WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
    };
    const serverEnv = {
      ...shared,
      HOST: '127.0.0.1',
      MERCHANT_API_KEYS: `${MERCHANT_ID}:${MERCHANT_KEY}`,
      OPERATOR_API_KEYS: `chaos.ops:ok_chaos_0123456789abcdef`,
      FINGERPRINT_SECRET: randomBytes(24).toString('hex'),
      BATCH_CONCURRENCY: String(options.batchConcurrency),
    };

    let worker: ChildProcess | undefined;
    const startWorker = async () => {
      worker = await startWorkerProcess(workerEnv);
      children.add(worker);
      worker.once('exit', () => worker && children.delete(worker));
    };
    const killWorker = async () => {
      if (worker) await exitOf(worker, 'SIGKILL');
      worker = undefined;
    };
    const apiServers: Array<ChildProcess | undefined> = [undefined, undefined];
    const startServer = async (index: 0 | 1) => {
      const child = spawn(process.execPath, [SERVER_JS], {
        env: { ...process.env, ...serverEnv, PORT: String(ports[index]), METRICS_PORT: String(await freePort()) },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.add(child);
      child.once('exit', () => children.delete(child));
      apiServers[index] = child;
      await waitForHttp(`${servers[index]}/healthz`, child, `API server ${index === 0 ? 'A' : 'B'}`);
    };
    const killServer = async (index: 0 | 1) => {
      const child = apiServers[index];
      if (child) await exitOf(child, 'SIGKILL');
    };

    await startWorker();
    await Promise.all([startServer(0), startServer(1)]);
    return {
      servers,
      sandboxUrl: sandbox.url,
      sandboxToken: SANDBOX_TOKEN,
      temporalAddress: devServer.address,
      encryptionKeys,
      startWorker,
      killWorker,
      restartTemporal: async () => {
        const stopped = Date.now();
        await devServer.stop();
        devServer = await startDevServer(devServerOptions);
        return Date.now() - stopped;
      },
      startServer,
      killServer,
      stopRedis: async () => {
        await redis?.stop();
        redis = undefined;
      },
      startRedis: async () => {
        redis = await startRedisServer(redisPort, redisOptions);
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
