import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { request } from 'undici';

/**
 * A worker's pollers by kind (workflow_task, sticky_workflow_task, activity_task, …), from the SDK's
 * `temporal_num_pollers` gauge on its Prometheus endpoint; waits up to 10 s for the first polls to show.
 */
export async function workerPollers(metricsAddress: string): Promise<Record<string, number>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const response = await request(`http://${metricsAddress}/metrics`);
    const pollers: Record<string, number> = {};
    for (const line of (await response.body.text()).split('\n')) {
      const match = /^temporal_num_pollers\{([^}]*)\} (\S+)$/.exec(line);
      const kind = /poller_type="([^"]+)"/.exec(match?.[1] ?? '')?.[1];
      if (match?.[2] && kind) pollers[kind] = (pollers[kind] ?? 0) + Number(match[2]);
    }
    if (Object.values(pollers).some((n) => n > 0) || Date.now() > deadline) return pollers;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** "workflow_task 2 · sticky_workflow_task 8 · activity_task 10". */
export function pollersLine(pollers: Record<string, number>): string {
  return (
    Object.entries(pollers)
      .filter(([, n]) => n > 0)
      .map(([kind, n]) => `${kind} ${n}`)
      .join(' · ') || 'none seen'
  );
}

/** How many workers (poller identities) Temporal sees on a task queue, for workflow tasks and for activity tasks. */
export async function queuePollers(client: Client, taskQueue: string): Promise<{ workflow: number; activity: number }> {
  const count = async (taskQueueType: temporal.api.enums.v1.TaskQueueType) => {
    const { pollers } = await client.workflowService.describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      taskQueueType,
    });
    return new Set(pollers.map((p) => p.identity)).size;
  };
  return {
    workflow: await count(temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW),
    activity: await count(temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY),
  };
}
