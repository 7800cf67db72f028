import { loadConfigOrExit } from './config/config-loading';
import {
  callbackTokenSettings,
  notificationSettings,
  providerConfig,
  publicBaseUrl,
  vaultKeyring,
  workerSchema,
} from './config/process-settings';
import { WORKFLOW_BUNDLE } from './local/build-outputs';
import { CallbackTokens } from './crypto/callback-tokens';
import { createLogger } from './logging';
import { createProviderClient } from './provider/provider-client';
import { securityOf } from './temporal/connection-settings';
import { installWorkerRuntime } from './temporal/worker-runtime';
import { createPaymentWorker } from './temporal/payment-worker';
import { nondeterminismAlert } from './temporal/nondeterminism-alert';
import { createRedisVault } from './vault/redis-vault';
import { StartMigrations, WORKER_QUERY_TIMEOUT_MS, openDatabase } from './records/database';
import { startTracing } from './telemetry/tracing';

async function main(): Promise<void> {
  const config = loadConfigOrExit(workerSchema, 'worker');
  const logger = createLogger('worker', config.LOG_LEVEL, config.LOG_PRETTY);
  // Before the worker is built: its interceptors and the provider calls pick tracing up when it is on.
  const tracing = await startTracing({ serviceName: 'payments-worker' });
  // Set once the worker (and its client) exists: a failed task can only come after that.
  const failedTasks: { alert?: (runId: string, reason: string) => void } = {};
  installWorkerRuntime({
    logger,
    metricsAddress: config.WORKER_METRICS_ADDRESS,
    onNondeterminism: (runId, reason) => failedTasks.alert?.(runId, reason),
  });
  const provider = createProviderClient(providerConfig(config));
  const cardVault = await createRedisVault({ url: config.VAULT_URL, keyring: vaultKeyring(config) });
  const database = openDatabase(config.DATABASE_URL, {
    applicationName: 'payments-worker',
    queryTimeoutMs: WORKER_QUERY_TIMEOUT_MS,
  });
  const migrations = new StartMigrations(database, (err) =>
    logger.warn({ err }, 'records: PostgreSQL is unreachable; the schema is migrated once it is back'),
  );
  await migrations.start();
  const paymentWorker = await createPaymentWorker({
    temporal: config,
    taskQueue: config.TASK_QUEUE,
    keyring: config.ENCRYPTION_KEYS,
    acceptUnencrypted: config.ACCEPT_UNENCRYPTED_PAYLOADS,
    onRefused: (reason) => logger.error({ reason }, 'the codec refused a payload from Temporal'),
    // Compiled, the worker runs the bundle built with it; from source (tsx) it bundles its own workflows.
    workflowBundlePath: config.WORKFLOW_BUNDLE_PATH ?? (__filename.endsWith('.js') ? WORKFLOW_BUNDLE : undefined),
    maxCachedWorkflows: config.WORKER_MAX_CACHED_WORKFLOWS,
    workflowStackTraceLimit: config.WORKER_WORKFLOW_STACK_TRACE_LIMIT,
    versioning:
      config.WORKER_VERSIONING === 'on'
        ? { deploymentName: config.WORKER_DEPLOYMENT_NAME, buildId: config.WORKER_BUILD_ID }
        : undefined,
    notifications: notificationSettings(config),
    deps: {
      provider,
      cardVault,
      database,
      signingKeys: config.SIGNING_KEYS,
      callbackTokens: new CallbackTokens(callbackTokenSettings(config), publicBaseUrl(config)),
    },
  });
  failedTasks.alert = nondeterminismAlert(() => paymentWorker.worker.client, logger);
  const { endpoint, version } = paymentWorker;
  const build = version ? `, build ${version.buildId} of deployment ${version.deploymentName}` : '';
  process.stdout.write(
    `worker: polling task queue ${config.TASK_QUEUE} on ${endpoint.address} (${securityOf(endpoint)}${build}); ` +
      `metrics on http://${config.WORKER_METRICS_ADDRESS}/metrics\n`,
  );
  // Worker.run() returns once SIGINT/SIGTERM has drained the worker.
  await paymentWorker.run();
  await provider.close();
  await cardVault.close();
  migrations.stop();
  await database.end();
  await tracing?.shutdown();
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`worker: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
