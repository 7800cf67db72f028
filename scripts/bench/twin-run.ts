import { WithStartWorkflowOperation } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { twinGo, twinReady, twinWorkflow } from './twin-workflow';

/**
 * One twin from start to result, as a payment's merchant lives it: started with its Update (answered once its
 * activity is done), then, `signalDelayMs` later, its signal; resolves to its workflow id once it has completed.
 */
export async function runTwin(
  client: Client,
  taskQueue: string,
  workflowId: string,
  signalDelayMs = 0,
): Promise<string> {
  const start = new WithStartWorkflowOperation(twinWorkflow, {
    workflowId,
    taskQueue,
    workflowIdConflictPolicy: 'FAIL',
  });
  await client.workflow.executeUpdateWithStart(twinReady, { startWorkflowOperation: start });
  const handle = await start.workflowHandle();
  if (signalDelayMs > 0) await new Promise((r) => setTimeout(r, signalDelayMs));
  await handle.signal(twinGo);
  if ((await handle.result()) !== 'done') throw new Error(`twin ${handle.workflowId} did not complete`);
  return handle.workflowId;
}
