import assert from 'node:assert/strict';
import { request } from 'undici';
import {
  callbackTokenSettings,
  notificationSettings,
  providerConfig,
  publicBaseUrl,
  vaultKeyring,
  workerSchema,
} from '../../src/config/process-settings';
import { parseKeyring } from '../../src/crypto/keyring';
import { parseConfig } from '../../src/config/config-loading';
import { WORKFLOW_BUNDLE } from '../../src/local/build-outputs';
import type { WorkerConfig } from '../../src/config/process-settings';
import type { PaymentActivityDeps } from '../../src/activities/payment-activities';
import { CallbackTokens } from '../../src/crypto/callback-tokens';
import type { ProviderClient } from '../../src/provider/provider-client';
import type { PaymentResource, PaymentStatus } from '../../src/domain/payment-model';
import { createProviderClient } from '../../src/provider/provider-client';
import type { Sandbox, SandboxOptions } from '../../src/sandbox/sandbox-app';
import { createPaymentWorker } from '../../src/temporal/payment-worker';
import { connectClient } from '../../src/temporal/temporal-client';
import type { PaymentWorker } from '../../src/temporal/payment-worker';
import type { CardVault } from '../../src/vault/card-vault';
import { createRedisVault } from '../../src/vault/redis-vault';
import { WORKER_QUERY_TIMEOUT_MS, openDatabase } from '../../src/records/database';
import type { Database } from '../../src/records/database';
import { eventually } from '../../src/local/eventually';
import { buildStack, serverInProcess } from '../../src/local/stack-builder';
import type { Launcher } from '../../src/local/stack-builder';
import { installTestRuntime } from './test-runtime';
import { failedTaskCount, reportNondeterminism } from './failed-tasks';
import { assertDocumented } from './openapi-checks';

export const MERCHANT_KEY = 'mk_test_0123456789abcdef';
export const OTHER_MERCHANT_KEY = 'mk_other_0123456789abcdef';
export const OPERATOR_KEY = 'ok_test_0123456789abcdef';
/** The person OPERATOR_KEY belongs to (OPERATOR_API_KEYS entries are `name:key`). */
export const OPERATOR_NAME = 'ada.ops';
/** CODEC_TOKEN_SECRET of the test stacks: signs the Web UI's codec tokens. */
export const TEST_CODEC_TOKEN_SECRET = 'test-codec-token-secret-0123456789abcdef';
export const SANDBOX_TOKEN = 'sandbox-test-token';
/** ENCRYPTION_KEYS of the test stacks (fixed, so tests can decode what they find in Temporal). */
/** The keys key-rotation.test.ts rotates between; every other process here can read what they sealed. */
export const ROTATION_OLD_KEY = `old:${Buffer.alloc(32, 11).toString('base64')}`;
export const ROTATION_NEW_KEY = `new:${Buffer.alloc(32, 22).toString('base64')}`;
/** Every test process's keyring: its own key encrypts; the rotation test's keys decrypt (one shared namespace). */
export const TEST_ENCRYPTION_KEYS = `test-1:${Buffer.alloc(32, 7).toString('base64')},${ROTATION_OLD_KEY},${ROTATION_NEW_KEY}`;
/** VAULT_KEYS of every test process: the card vault's own keys, apart from ENCRYPTION_KEYS. */
export const TEST_VAULT_KEYS = `vault-1:${Buffer.alloc(32, 13).toString('base64')}`;
/** SIGNING_KEYS of every test process: the server signs with them, the worker verifies. */
export const TEST_SIGNING_KEYS = `sign-1:${Buffer.alloc(32, 9).toString('base64')}`;
export const TEST_CALLBACK_SECRET = 'test-callback-secret-0123456789abcdef';
/** CALLBACK_KEYS of the test stacks: the worker's callback URLs carry tokens made under them. */
export const TEST_CALLBACK_KEYS = `cb-1:${Buffer.alloc(32, 5).toString('base64')}`;

/** Callback tokens as a test stack makes them (a week's lifetime), for tests that build callback URLs. */
export function testCallbackTokens(publicBaseUrl?: string, keys = TEST_CALLBACK_KEYS): CallbackTokens {
  const settings = callbackTokenSettings({ CALLBACK_KEYS: parseKeyring(keys), CALLBACK_TOKEN_TTL: 7 * 86_400_000 });
  return new CallbackTokens(settings, publicBaseUrl);
}
/** The key of each stack's notified merchant (`stack.notifiedMerchant`), the one with a MERCHANT_WEBHOOKS entry. */
export const NOTIFIED_MERCHANT_KEY = 'mk_notified_0123456789abcdef';
/** The secret that merchant's notifications are signed with, and the sandbox's merchant verifies them with. */
export const TEST_NOTIFICATION_SECRET = 'whsec_test_0123456789abcdef0123456789';

/** Address of the dev server, the vault's and the database's URLs that `npm test` prepared, and the bundle it built. */
export function testEnvironment(): { address: string; bundlePath: string; vaultUrl: string; databaseUrl: string } {
  const address = process.env.TEST_TEMPORAL_ADDRESS;
  const vaultUrl = process.env.TEST_VAULT_URL;
  const databaseUrl = process.env.TEST_DATABASE_URL;
  if (!address || !vaultUrl || !databaseUrl) {
    throw new Error('run the integration tests through `npm test` (it starts Temporal, Redis and PostgreSQL)');
  }
  return { address, bundlePath: WORKFLOW_BUNDLE, vaultUrl, databaseUrl };
}

/** A Temporal client of the shared dev server that reads the test stacks' encrypted payloads. */
export function connectTestClient(): ReturnType<typeof connectClient> {
  return connectClient({
    TEMPORAL_ADDRESS: testEnvironment().address,
    TEMPORAL_NAMESPACE: 'default',
    ENCRYPTION_KEYS: parseKeyring(TEST_ENCRYPTION_KEYS),
  });
}

export interface StackOptions {
  sandbox?: Partial<SandboxOptions>;
  env?: Record<string, string>;
  /** Start no in-process worker (the test runs its own). */
  withoutWorker?: boolean;
  /** Reuse a task queue (a second stack taking over the first one's payments). */
  taskQueue?: string;
  /** Where the server writes its log lines. */
  logStream?: NodeJS.WritableStream;
}

export interface SandboxRecord {
  callback_url?: string | null;
  /** A ledger transaction's status at the sandbox: `2` pending, `1` succeeded, `0` failed. */
  status?: string;
  body?: { callback_url?: string };
}

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | undefined>;
}

export interface Stack {
  baseUrl: string;
  /** A merchant of this stack alone whose notifications go to the sandbox's merchant side (short retry schedule). */
  notifiedMerchant: string;
  sandbox: Sandbox;
  taskQueue: string;
  workerEnv: Record<string, string>;
  /** The server's Prometheus endpoint. */
  metricsUrl: string;
  /** The Prometheus endpoint of this process's Temporal Runtime, where the in-process worker reports (if any). */
  workerMetricsUrl?: string;
  api<T = PaymentResource>(method: string, path: string, body?: unknown, key?: string | null): Promise<ApiResponse<T>>;
  waitForStatus(id: string, statuses: PaymentStatus[], timeoutMs?: number): Promise<PaymentResource>;
  sandboxGet<T>(path: string): Promise<T>;
  /** Initiation requests the sandbox received for one payment (found by its callback URL). */
  upstreamRequests(paymentId: string): Promise<SandboxRecord[]>;
  /** Transactions the sandbox created for one payment. */
  upstreamTransactions(paymentId: string): Promise<SandboxRecord[]>;
  close(): Promise<void>;
}

let stackCount = 0;

/** The payment activities' dependencies for a worker with this configuration. */
export function workerDeps(
  config: WorkerConfig,
  provider: ProviderClient,
  cardVault: CardVault,
  database: Database,
): PaymentActivityDeps {
  return {
    provider,
    cardVault,
    database,
    signingKeys: config.SIGNING_KEYS,
    callbackTokens: new CallbackTokens(callbackTokenSettings(config), publicBaseUrl(config)),
  };
}

/** The payment worker in this process, as src/worker.ts builds it from its environment. */
function inProcessWorker(taskQueue: string, bundlePath: string): Launcher {
  return async (env) => {
    const workerConfig = parseConfig(workerSchema, env);
    const provider = createProviderClient(providerConfig(workerConfig));
    const cardVault = await createRedisVault({ url: workerConfig.VAULT_URL, keyring: vaultKeyring(workerConfig) });
    const database = openDatabase(testDatabaseUrl(env), { queryTimeoutMs: WORKER_QUERY_TIMEOUT_MS });
    const worker: PaymentWorker = await createPaymentWorker({
      temporal: workerConfig,
      taskQueue,
      keyring: workerConfig.ENCRYPTION_KEYS,
      workflowBundlePath: bundlePath,
      maxCachedWorkflows: workerConfig.WORKER_MAX_CACHED_WORKFLOWS,
      workflowStackTraceLimit: workerConfig.WORKER_WORKFLOW_STACK_TRACE_LIMIT,
      deps: workerDeps(workerConfig, provider, cardVault, database),
      notifications: notificationSettings(workerConfig),
    });
    const run = worker.run();
    return {
      async stop() {
        worker.worker.shutdown();
        await run;
        await provider.close();
        await cardVault.close();
        await database.end();
      },
    };
  };
}

/** The record database of a test worker: the stack's DATABASE_URL, else the one `npm test` prepared. */
export function testDatabaseUrl(env: Record<string, string | undefined> = {}): string {
  const url = env.DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('run the integration tests through `npm test` (it starts PostgreSQL)');
  return url;
}

/** Starts sandbox, worker and server in this process against the shared test dev server. */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const { address, bundlePath, vaultUrl, databaseUrl } = testEnvironment();
  // A Runtime that no worker or connection ever uses keeps the process alive: install it only for a worker.
  const workerMetricsUrl = options.withoutWorker ? undefined : await installTestRuntime();
  const failedBefore = failedTaskCount();
  const taskQueue = options.taskQueue ?? `test-${process.pid}-${++stackCount}-${Date.now()}`;
  // Its own merchant per stack: a dispatcher left on the dev server by an earlier stack (its worker gone) is not it.
  const notifiedMerchant = `n${process.pid.toString(36)}${stackCount.toString(36)}${Date.now().toString(36)}`;
  const built = await buildStack({
    temporal: { address },
    vault: { url: vaultUrl },
    database: { url: databaseUrl },
    sandbox: {
      token: SANDBOX_TOKEN,
      callbackDelayMs: 200,
      slowResponseMs: 8000,
      auto3ds: 'approve',
      host: '127.0.0.1',
      port: 0,
      logger: false,
      notificationSecrets: [TEST_NOTIFICATION_SECRET],
      ...options.sandbox,
    },
    env: ({ sandbox }) => ({
      shared: {
        TASK_QUEUE: taskQueue,
        PROVIDER_TOKEN: SANDBOX_TOKEN,
        CALLBACK_KEYS: TEST_CALLBACK_KEYS,
        SIGNING_KEYS: TEST_SIGNING_KEYS,
        ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
        VAULT_KEYS: TEST_VAULT_KEYS,
        LOG_LEVEL: 'warn',
      },
      worker: {
        PROVIDER_STATUS_URL: `${sandbox.url}/api/transactions/{transaction_id}`,
        PROVIDER_STATUS_BY_REFERENCE_URL: `${sandbox.url}/api/transactions?reference={reference}`,
        PROVIDER_TIMEOUT: '3s',
        PROVIDER_CONNECT_TIMEOUT: '1s',
        WORKFLOW_BUNDLE_PATH: bundlePath,
        MERCHANT_WEBHOOKS: JSON.stringify({
          [notifiedMerchant]: { url: `${sandbox.url}/merchant/notifications`, secrets: [TEST_NOTIFICATION_SECRET] },
        }),
        NOTIFICATION_RETRY_INITIAL: '200ms',
        NOTIFICATION_RETRY_MAX_INTERVAL: '1s',
        NOTIFICATION_RETRY_FOR: '30s',
        NOTIFICATION_TIMEOUT: '1s',
        ...options.env,
      },
      server: {
        HOST: '127.0.0.1',
        MERCHANT_API_KEYS: `acme:${MERCHANT_KEY},other:${OTHER_MERCHANT_KEY},${notifiedMerchant}:${NOTIFIED_MERCHANT_KEY}`,
        OPERATOR_API_KEYS: `${OPERATOR_NAME}:${OPERATOR_KEY}`,
        CODEC_TOKEN_SECRET: TEST_CODEC_TOKEN_SECRET,
        FINGERPRINT_SECRET: 'test-fingerprint-secret-0123456789abcdef',
        CALLBACK_TIMEOUT_MOBILE_MONEY: '3s',
        CALLBACK_TIMEOUT_CARD: '3s',
        CALLBACK_TIMEOUT_BANK_CREDIT: '3s',
        RECONCILE_FOR: '4s',
        RECONCILE_INTERVAL: '500ms',
        LATE_CALLBACK_WINDOW: '5s',
        INITIATION_WAIT: '5s', // the product's default; 2 s was too short for a card's redirect on a loaded machine
        ...options.env,
      },
    }),
    worker: options.withoutWorker ? undefined : inProcessWorker(taskQueue, bundlePath),
    servers: [serverInProcess(options.logStream)],
  });
  const { sandbox, workerEnv } = built;
  const baseUrl = built.serverUrls[0] ?? '';

  const api: Stack['api'] = async (method, path, body, key = MERCHANT_KEY) => {
    const response = await request(`${baseUrl}${path}`, {
      method: method as 'GET',
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await response.body.text();
    const answer = {
      status: response.statusCode,
      body: (text ? JSON.parse(text) : null) as never,
      headers: response.headers,
    };
    // Every answer is one the OpenAPI document gives for its route and status.
    assertDocumented(method, path, answer);
    return answer;
  };

  const sandboxGet = async <T>(path: string): Promise<T> => {
    const response = await request(`${sandbox.url}${path}`, {
      headers: { authorization: `Bearer ${options.sandbox?.token ?? SANDBOX_TOKEN}` },
    });
    if (response.statusCode !== 200) throw new Error(`sandbox ${path} answered ${response.statusCode}`);
    return (await response.body.json()) as T;
  };

  return {
    baseUrl,
    notifiedMerchant,
    sandbox,
    sandboxGet,
    taskQueue,
    workerEnv,
    metricsUrl: `http://127.0.0.1:${built.servers[0]?.metricsPort}/metrics`,
    workerMetricsUrl,
    api,
    async waitForStatus(id, statuses, timeoutMs = 30_000) {
      return eventually(
        async () => {
          const response = await api('GET', `/v1/payments/${encodeURIComponent(id)}`, undefined, OPERATOR_KEY);
          assert.equal(response.status, 200, `GET answered ${response.status}`);
          assert.ok(statuses.includes(response.body.status), `it is ${JSON.stringify(response.body)}`);
          return response.body;
        },
        { timeoutMs, intervalMs: 200, what: `payment ${id} reaching ${statuses.join('|')}` },
      );
    },
    async upstreamRequests(paymentId) {
      const requests = await sandboxGet<SandboxRecord[]>('/sandbox/requests');
      return requests.filter((r) => r.body?.callback_url?.includes(encodeURIComponent(paymentId)));
    },
    async upstreamTransactions(paymentId) {
      const ledger = await sandboxGet<SandboxRecord[]>('/sandbox/transactions');
      return ledger.filter((t) => t.callback_url?.includes(encodeURIComponent(paymentId)));
    },
    async close() {
      await reportFailedTasks(failedBefore);
      await built.stop();
    },
  };
}

/** Prints the runs that failed a workflow task for nondeterminism while the stack ran (failed-tasks.ts). */
async function reportFailedTasks(from: number): Promise<void> {
  if (failedTaskCount() === from) return;
  const client = await connectTestClient();
  try {
    await reportNondeterminism(client, from);
  } catch (err) {
    process.stdout.write(`# the failed workflow tasks could not be reported: ${String(err)}\n`);
  } finally {
    await client.connection.close();
  }
}
