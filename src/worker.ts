import { loadConfigOrExit, workerSchema } from './config';
import type { WorkerConfig } from './config';
import { createProviderClient } from './provider';
import type { ProviderConfig } from './provider';
import { createPaymentWorker } from './temporal/worker';
import { createRedisVault } from './vault/redis-vault';

/** The provider client's settings, from the worker's configuration. */
export function providerConfig(config: WorkerConfig): ProviderConfig {
  return {
    baseUrl: config.PROVIDER_BASE_URL,
    mobileMoneyBaseUrl: config.PROVIDER_MOBILE_MONEY_BASE_URL ?? config.PROVIDER_BASE_URL,
    token: config.PROVIDER_TOKEN,
    connectTimeoutMs: config.PROVIDER_CONNECT_TIMEOUT,
    requestTimeoutMs: config.PROVIDER_TIMEOUT,
    safeRetries: config.PROVIDER_SAFE_RETRIES,
    statusUrl: config.PROVIDER_STATUS_URL,
    statusByReferenceUrl: config.PROVIDER_STATUS_BY_REFERENCE_URL,
  };
}

async function main(): Promise<void> {
  const config = loadConfigOrExit(workerSchema, 'worker');
  const provider = createProviderClient(providerConfig(config));
  const cardVault = await createRedisVault({ url: config.VAULT_URL, keyring: config.ENCRYPTION_KEYS });
  const paymentWorker = await createPaymentWorker({
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TASK_QUEUE,
    keyring: config.ENCRYPTION_KEYS,
    workflowBundlePath: config.WORKFLOW_BUNDLE_PATH,
    deps: { provider, cardVault },
  });
  process.stdout.write(`worker: polling task queue ${config.TASK_QUEUE} on ${config.TEMPORAL_ADDRESS}\n`);
  // Worker.run() returns once SIGINT/SIGTERM has drained the worker.
  await paymentWorker.run();
  await provider.close();
  await cardVault.close();
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`worker: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
