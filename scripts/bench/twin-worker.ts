// The twin's worker, as its own process beside the payment worker: `node --import tsx scripts/bench/twin-worker.ts`
// with TEMPORAL_ADDRESS and TASK_QUEUE.
import { NativeConnection, Worker } from '@temporalio/worker';
import type { TwinActivities } from './twin-workflow';

async function main(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS ?? '';
  const taskQueue = process.env.TASK_QUEUE ?? '';
  if (!address || !taskQueue) throw new Error('TEMPORAL_ADDRESS and TASK_QUEUE must be set');
  const connection = await NativeConnection.connect({ address });
  const activities: TwinActivities = { noop: () => Promise.resolve() };
  const worker = await Worker.create({
    connection,
    namespace: 'default',
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
