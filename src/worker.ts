import { loadConfigOrExit, providerConfig, workerSchema } from './config';
import { createLogger } from './logging';
import { createProviderClient } from './provider';
import { installWorkerRuntime } from './temporal/runtime';
import { createPaymentWorker } from './temporal/worker';

async function main(): Promise<void> {
  const config = loadConfigOrExit(workerSchema, 'worker');
  const logger = createLogger('worker', config.LOG_LEVEL, config.LOG_PRETTY);
  installWorkerRuntime({ logger, metricsAddress: config.WORKER_METRICS_ADDRESS });
  const provider = createProviderClient(providerConfig(config));
  const paymentWorker = await createPaymentWorker({
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TASK_QUEUE,
    workflowBundlePath: config.WORKFLOW_BUNDLE_PATH,
    maxCachedWorkflows: config.WORKER_MAX_CACHED_WORKFLOWS,
    deps: { provider },
  });
  process.stdout.write(
    `worker: polling task queue ${config.TASK_QUEUE} on ${config.TEMPORAL_ADDRESS}; ` +
      `metrics on http://${config.WORKER_METRICS_ADDRESS}/metrics\n`,
  );
  // Worker.run() returns once SIGINT/SIGTERM has drained the worker.
  await paymentWorker.run();
  await provider.close();
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`worker: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
