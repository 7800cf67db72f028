import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyEntry } from '../../src/crypto/keyring';
import { buildStack, serverProcess, workerProcess } from '../../src/local/stack-builder';
import { startFaultProxy } from './fault-proxy';
import type { ProxyExchange } from './fault-proxy';
import { startChaosPostgres } from './postgres-faults';
import type { ChaosPostgres } from './postgres-faults';

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
  /** The PostgreSQL holding the records (read directly to compare them with their workflows), to break on purpose. */
  postgres: ChaosPostgres;
  killWorker: () => Promise<void>;
  startWorker: () => Promise<void>;
  restartTemporal: () => Promise<number>;
  killServer: (index: 0 | 1) => Promise<void>;
  startServer: (index: 0 | 1) => Promise<void>;
  stopRedis: () => Promise<void>;
  startRedis: () => Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts Temporal (persisted, so it can restart), Redis (persisted), PostgreSQL (its own, so it can be stopped, frozen
 * and killed), the sandbox behind its proxies, a worker and two API servers.
 */
export async function startChaosStack(options: ChaosStackOptions): Promise<ChaosStack> {
  const dataDir = mkdtempSync(join(tmpdir(), 'chaos-'));
  mkdirSync(join(dataDir, 'redis'));
  const encryptionKeys = generateKeyEntry('chaos');
  const removeData = () => rmSync(dataDir, { recursive: true, force: true });
  const postgres = await startChaosPostgres(dataDir).catch((err: unknown) => {
    removeData();
    throw err;
  });
  const stack = await buildStack({
    temporal: { devServer: { namespace: 'default', dbFile: join(dataDir, 'temporal.db') } },
    vault: { redis: { password: randomBytes(16).toString('hex'), dataDir: join(dataDir, 'redis') } },
    database: { url: postgres.url },
    sandbox: {
      token: SANDBOX_TOKEN,
      callbackDelayMs: 1000,
      slowResponseMs: 6000,
      auto3ds: 'approve',
      host: '127.0.0.1',
      port: 0,
      logger: false,
    },
    providerProxy: (sandboxUrl) => startFaultProxy(sandboxUrl, options.handleProvider),
    // Callbacks reach server B through their proxy.
    callbackProxy: (serverUrl) => startFaultProxy(serverUrl, options.handleCallback),
    env: ({ providerUrl }) => ({
      shared: {
        TEMPORAL_NAMESPACE: 'default',
        TASK_QUEUE: 'chaos',
        PROVIDER_TOKEN: SANDBOX_TOKEN,
        CALLBACK_SECRET: randomBytes(24).toString('hex'),
        SIGNING_KEYS: generateKeyEntry('chaos-signing'),
        ENCRYPTION_KEYS: encryptionKeys,
        LOG_LEVEL: 'error',
        ...TIMINGS,
      },
      worker: {
        PROVIDER_STATUS_URL: `${providerUrl}/api/transactions/{transaction_id}`,
        PROVIDER_STATUS_BY_REFERENCE_URL: `${providerUrl}/api/transactions?reference={reference}`,
        PROVIDER_TIMEOUT,
        PROVIDER_CONNECT_TIMEOUT: '1s',
      },
      server: {
        HOST: '127.0.0.1',
        MERCHANT_API_KEYS: `${MERCHANT_ID}:${MERCHANT_KEY}`,
        OPERATOR_API_KEYS: `chaos.ops:ok_chaos_0123456789abcdef`,
        FINGERPRINT_SECRET: randomBytes(24).toString('hex'),
        BATCH_CONCURRENCY: String(options.batchConcurrency),
        // Its batch fails a third of its items on purpose: no automatic halt.
        BATCH_HALT_FAILURE_SHARE: '1',
        BATCH_HALT_PROVIDER_ERRORS: '0',
      },
    }),
    worker: workerProcess(),
    servers: [serverProcess(), serverProcess()],
  }).catch(async (err: unknown) => {
    await postgres.close();
    removeData();
    throw err;
  });
  const [serverA = '', serverB = ''] = stack.serverUrls;
  return {
    servers: [serverA, serverB],
    sandboxUrl: stack.sandbox.url,
    sandboxToken: SANDBOX_TOKEN,
    temporalAddress: stack.temporalAddress,
    encryptionKeys,
    postgres,
    startWorker: () => stack.startWorker(),
    killWorker: () => stack.stopWorker('SIGKILL'),
    restartTemporal: () => stack.restartTemporal(),
    startServer: (index) => stack.startServer(index),
    killServer: (index) => stack.stopServer(index, 'SIGKILL'),
    stopRedis: () => stack.stopVault(),
    startRedis: () => stack.startVault(),
    close: async () => {
      await stack.stop();
      await postgres.close();
      removeData();
    },
  };
}
