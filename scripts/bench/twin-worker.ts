// The twin's worker, as its own process beside the payment worker: `node --import tsx scripts/bench/twin-worker.ts`
// with TASK_QUEUE and Temporal's connection variables (TEMPORAL_ADDRESS; on a cluster TEMPORAL_CONFIG_FILE, the
// worker's profile: only a worker's token may poll).
import { NativeConnection, Worker } from '@temporalio/worker';
import { connectTemporal } from '../../src/temporal/connect-or-diagnose';
import type { TwinActivities } from './twin-workflow';

async function main(): Promise<void> {
  const taskQueue = process.env.TASK_QUEUE ?? '';
  if (!process.env.TEMPORAL_ADDRESS || !taskQueue) throw new Error('TEMPORAL_ADDRESS and TASK_QUEUE must be set');
  const { connection, endpoint } = await connectTemporal(process.env, (options) => NativeConnection.connect(options));
  const activities: TwinActivities = { noop: () => Promise.resolve() };
  const worker = await Worker.create({
    connection,
    namespace: endpoint.namespace,
    taskQueue,
    workflowsPath: require.resolve('./twin-workflow'),
    activities,
  });
  process.stdout.write(`twin worker: polling task queue ${taskQueue}\n`);
  await worker.run();
  await connection.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`twin worker: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
