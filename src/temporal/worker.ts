import { NativeConnection, Worker } from '@temporalio/worker';
import type { WorkerOptions } from '@temporalio/worker';
import { createPaymentActivities } from '../activities/payment-activities';
import type { PaymentActivityDeps } from '../activities/payment-activities';

export interface PaymentWorkerOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  deps: PaymentActivityDeps;
  /** A prebuilt workflow bundle (tests, production images); the workflow sources are bundled when absent. */
  workflowBundlePath?: string;
}

/** Creates the payment worker: the payment workflow and the activities built around their dependencies. */
export async function createPaymentWorker(options: PaymentWorkerOptions): Promise<Worker> {
  const connection = await NativeConnection.connect({ address: options.address });
  const workflows: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = options.workflowBundlePath
    ? { workflowBundle: { codePath: options.workflowBundlePath } }
    : { workflowsPath: require.resolve('../workflows') };
  return Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: createPaymentActivities(options.deps),
    ...workflows,
  });
}
