import { NativeConnection, Worker } from '@temporalio/worker';
import type { WorkerOptions } from '@temporalio/worker';
import { createPaymentActivities } from '../activities/payment-activities';
import type { PaymentActivityDeps } from '../activities/payment-activities';
import type { Keyring } from '../crypto/keyring';
import { createDataConverter } from './data-converter';

export interface PaymentWorkerOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  /** Encrypts every payload the worker sends and decrypts what it reads (ENCRYPTION_KEYS). */
  keyring: Keyring;
  deps: PaymentActivityDeps;
  /** A prebuilt workflow bundle (tests, production images), bundled with FAILURE_CONVERTER_PATH; built here when absent. */
  workflowBundlePath?: string;
}

export interface PaymentWorker {
  worker: Worker;
  /** Runs until the worker shuts down (SIGINT/SIGTERM or `worker.shutdown()`), then closes its connection. */
  run(): Promise<void>;
}

/** Creates the payment worker: the payment workflow and the activities built around their dependencies. */
export async function createPaymentWorker(options: PaymentWorkerOptions): Promise<PaymentWorker> {
  const connection = await NativeConnection.connect({ address: options.address });
  const workflows: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = options.workflowBundlePath
    ? { workflowBundle: { codePath: options.workflowBundlePath } }
    : { workflowsPath: require.resolve('../workflows') };
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: createPaymentActivities(options.deps),
    dataConverter: createDataConverter(options.keyring),
    ...workflows,
  });
  return {
    worker,
    run: async () => {
      try {
        await worker.run();
      } finally {
        await connection.close();
      }
    },
  };
}
