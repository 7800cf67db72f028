import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';

/** The workflow a run belongs to, from Temporal's visibility; undefined when visibility does not know it (yet). */
export async function describeRun(
  client: Client,
  runId: string,
): Promise<{ workflowId: string; workflowType: string } | undefined> {
  const { executions } = await client.workflowService.listWorkflowExecutions({
    namespace: client.options.namespace,
    query: `RunId = '${runId}'`,
  });
  const workflowId = executions[0]?.execution?.workflowId;
  return workflowId ? { workflowId, workflowType: executions[0]?.type?.name ?? 'unknown' } : undefined;
}

/**
 * Hears of the worker's tasks failed for nondeterminism (installWorkerRuntime's `onNondeterminism`) and logs, once per
 * run, which workflow it is: such a run does not move again until its code is fixed or it is reset
 * (docs/operating.md#a-workflow-that-fails-its-task), and core's own line names only the run.
 */
export function nondeterminismAlert(
  client: () => Client | undefined,
  logger: Logger,
): (runId: string, reason: string) => void {
  const told = new Set<string>();
  return (runId, reason) => {
    const temporal = client();
    if (told.has(runId) || !temporal) return;
    told.add(runId);
    const message = 'a workflow fails its task for nondeterminism and will not move until fixed or reset';
    void describeRun(temporal, runId).then(
      (run) => logger.error({ runId, ...run, reason }, message),
      (err: unknown) => logger.error({ runId, reason, err }, message),
    );
  };
}
