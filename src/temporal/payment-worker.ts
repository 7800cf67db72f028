import { Client, WorkflowNotFoundError } from '@temporalio/client';
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { WorkerOptions } from '@temporalio/worker';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { createBatchActivities } from '../activities/batch-activities';
import { createPaymentActivities } from '../activities/payment-activities';
import { createRecordActivities } from '../activities/record-activities';
import { NotificationRelay } from '../notifications/notification-relay';
import type { RelayDeps } from '../notifications/notification-relay';
import { SearchAttributes } from '../workflows/definitions';
import { readBatchItems, readBatchReferences } from '../records/batch-items';
import type { PaymentActivityDeps } from '../activities/payment-activities';
import { withProviderMetrics } from '../metrics/provider-metrics';
import { workflowMetricSinks } from '../metrics/workflow-metric-sinks';
import type { Keyring } from '../crypto/keyring';
import { activeTracing, WORKFLOW_INTERCEPTORS, workflowSpanSinks } from '../telemetry/tracing';
import { connectTemporal } from './connect-or-diagnose';
import type { TemporalEndpoint, TemporalSettings } from './connection-settings';
import { createDataConverter } from './data-converter';
import { deploymentVersion, versionedWorker } from './deployment';
import type { VersioningSettings } from './deployment';
import { limitWorkflowStackTraces } from './workflow-stack-traces';

export interface PaymentWorkerOptions {
  /** Where Temporal is and how to reach it (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS, API key, profile). */
  temporal: TemporalSettings;
  taskQueue: string;
  /** Encrypts every payload the worker sends and decrypts what it reads (ENCRYPTION_KEYS). */
  keyring: Keyring;
  /** Migration only: payloads written before encryption are let through instead of refused. */
  acceptUnencrypted?: boolean;
  /** Logs why a payload was refused (the workflow task then fails and retries until fixed). */
  onRefused?: (reason: string) => void;
  deps: PaymentActivityDeps;
  /** A prebuilt workflow bundle (tests, production images), bundled with FAILURE_CONVERTER_PATH; built here when absent. */
  workflowBundlePath?: string;
  /** Workflows kept in the worker's cache; bounds its memory when thousands of payments wait at once. */
  maxCachedWorkflows?: number;
  /** Frames a workflow's errors and promises capture (WORKER_WORKFLOW_STACK_TRACE_LIMIT); Node's 10 when absent. */
  workflowStackTraceLimit?: number;
  /** Worker Versioning (WORKER_VERSIONING=on): the deployment this worker's build belongs to; unversioned when absent. */
  versioning?: VersioningSettings;
  /** Merchants' notification URLs and the retry schedule (MERCHANT_WEBHOOKS, NOTIFICATION_*); none without. */
  notifications?: NotificationSettings;
}

/** What the notification relay needs besides what the worker has (the record database, a logger, a meter). */
export type NotificationSettings = Pick<RelayDeps, 'webhooks' | 'retry' | 'requestTimeoutMs'>;

export interface PaymentWorker {
  worker: Worker;
  /** The Temporal cluster and namespace it polls, and how the connection is secured. */
  endpoint: TemporalEndpoint;
  /** Its deployment version (deployment name and build id) when it runs versioned. */
  version?: WorkerDeploymentVersion;
  /** Runs until the worker shuts down (SIGINT/SIGTERM or `worker.shutdown()`), then closes its connection. */
  run(): Promise<void>;
}

/**
 * Creates the payment worker: the payment and batch workflows and the activities built around their dependencies
 * (the provider, the card vault, the record database).
 */
export async function createPaymentWorker(options: PaymentWorkerOptions): Promise<PaymentWorker> {
  const version = options.versioning && deploymentVersion(options.versioning, options.workflowBundlePath);
  const { connection, endpoint } = await connectTemporal(options.temporal, (opts) => NativeConnection.connect(opts));
  const { namespace } = endpoint;
  const tracing = activeTracing();
  // The labels every product metric of the worker carries (workflows', provider calls', notifications'), so one
  // dashboard filters them all; snake_case, as on Temporal's own series.
  const productMeter = Runtime.instance().metricMeter.withTags({ namespace, task_queue: options.taskQueue });
  const workflows: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = options.workflowBundlePath
    ? { workflowBundle: { codePath: options.workflowBundlePath } }
    : { workflowsPath: require.resolve('../workflows') };
  // Signed messages are verified here, outside the sandbox, before any workflow sees them.
  const dataConverter = createDataConverter(options.keyring, {
    verifySignatures: options.deps.signingKeys,
    acceptUnencrypted: options.acceptUnencrypted,
    onRefused: options.onRefused,
  });
  const client = new Client({
    connection,
    namespace,
    dataConverter,
    interceptors: { workflow: tracing?.clientInterceptors ?? [] },
  });
  if (options.workflowStackTraceLimit !== undefined) limitWorkflowStackTraces(options.workflowStackTraceLimit);
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue: options.taskQueue,
    activities: {
      ...createPaymentActivities({
        ...options.deps,
        provider: withProviderMetrics(options.deps.provider, productMeter),
      }),
      ...createRecordActivities(options.deps.database, options.deps.signingKeys),
      ...createBatchActivities({
        signingKeys: options.deps.signingKeys,
        readItems: (batchId, fromPosition, limit) =>
          readBatchItems(options.deps.database, batchId, fromPosition, limit),
        readReferences: (batchId, fromPosition, limit) =>
          readBatchReferences(options.deps.database, batchId, fromPosition, limit),
        describeItem: async (paymentId) => {
          try {
            const description = await client.workflow.getHandle(paymentId).describe();
            const status = description.typedSearchAttributes.get(SearchAttributes.status);
            return { closed: description.status.name !== 'RUNNING', status };
          } catch (err) {
            if (err instanceof WorkflowNotFoundError) return undefined;
            throw err;
          }
        },
      }),
    },
    maxCachedWorkflows: options.maxCachedWorkflows,
    // How long a workflow task waits for the worker that has its workflow cached before any worker may take it. The
    // SDK's 10 s kept a killed worker's payments waiting that much longer after their heartbeats had timed out.
    stickyQueueScheduleToStartTimeout: '3s',
    dataConverter,
    ...(version ? { workerDeploymentOptions: versionedWorker(version) } : {}),
    // The prebuilt bundle holds the workflow interceptors already (scripts/bundle-workflows.ts).
    interceptors: {
      activity: tracing?.activityInterceptors ?? [],
      workflowModules: options.workflowBundlePath ? [] : [WORKFLOW_INTERCEPTORS],
    },
    sinks: { ...workflowSpanSinks(tracing), ...workflowMetricSinks(productMeter) },
    ...workflows,
  });
  return {
    worker,
    endpoint,
    version,
    run: async () => {
      // Merchants' notifications go out from the outbox while the worker runs, and stop with it.
      const relay = options.notifications
        ? new NotificationRelay({
            ...options.notifications,
            database: options.deps.database,
            log: Runtime.instance().logger,
            meter: productMeter,
          })
        : undefined;
      relay?.start();
      try {
        await worker.run();
      } finally {
        await relay?.stop();
        await connection.close();
      }
    },
  };
}
