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

/** The `[TMPRL1100] …` sentence of core's failure, else the failure as core wrote it. */
export function nondeterminismReason(failure: string): string {
  return /\[TMPRL1100\][^\\"]*/.exec(failure)?.[0] ?? failure;
}

/**
 * Hears of the worker's failed workflow tasks (installWorkerRuntime's `onFailedTask`) and logs, once per run, which
 * workflow fails for nondeterminism: such a run does not move again until its code is fixed or it is reset
 * (docs/operating.md#a-workflow-that-fails-its-task), and core's own line names only the run.
 */
export function nondeterminismAlert(
  client: () => Client | undefined,
  logger: Logger,
): (runId: string, failure: string) => void {
  const told = new Set<string>();
  return (runId, failure) => {
    const temporal = client();
    if (!failure.includes('TMPRL1100') || told.has(runId) || !temporal) return;
    told.add(runId);
    const reason = nondeterminismReason(failure);
    const message = 'a workflow fails its task for nondeterminism and will not move until fixed or reset';
    void describeRun(temporal, runId).then(
      (run) => logger.error({ runId, ...run, reason }, message),
      (err: unknown) => logger.error({ runId, reason, err }, message),
    );
  };
}
