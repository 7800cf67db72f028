import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { describeRun } from '../../src/temporal/nondeterminism-alert';

const failed = new Map<string, string>();

/** Notes a run whose workflow task this process's workers failed for nondeterminism (installTestRuntime). */
export function noteNondeterminism(runId: string, reason: string): void {
  if (!failed.has(runId)) failed.set(runId, reason);
}

/** How many runs have failed a workflow task for nondeterminism so far: a stack reports those after its start. */
export function failedTaskCount(): number {
  return failed.size;
}

/**
 * Prints, for each run that failed a workflow task for nondeterminism since the `from`-th failure noted, which
 * workflow it is and the outline of its history (tasks, local activity markers, activities), and keeps the whole
 * history in .tmp/nondeterminism/: a flaky replay failure leaves what it takes to find its cause in the test's output.
 */
export async function reportNondeterminism(client: Client, from: number): Promise<void> {
  for (const [runId, reason] of [...failed].slice(from)) {
    const run = await describeRun(client, runId);
    if (!run) continue;
    const { workflowId, workflowType } = run;
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const dir = resolve(__dirname, '..', '..', '.tmp', 'nondeterminism');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${runId}.json`);
    writeFileSync(file, JSON.stringify(history));
    process.stdout.write(
      `# ${workflowType} ${workflowId} (run ${runId}) failed a task: ${reason}\n` +
        `#   history: ${file}\n#   outline: ${outline(history)}\n`,
    );
  }
}

const decoder = new TextDecoder();

/** Each workflow task's end, local activity marker (its seq) and activity of a history, by event id. */
function outline(history: temporal.api.history.v1.IHistory): string {
  const { EventType, WorkflowTaskFailedCause } = temporal.api.enums.v1;
  return (history.events ?? [])
    .map((event) => {
      const id = String(event.eventId);
      switch (event.eventType) {
        case EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
          return `${id}:done`;
        case EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
          return `${id}:failed(${WorkflowTaskFailedCause[event.workflowTaskFailedEventAttributes?.cause ?? 0]})`;
        case EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
          return `${id}:timed-out`;
        case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
          return `${id}:activity(${event.activityTaskScheduledEventAttributes?.activityType?.name})`;
        case EventType.EVENT_TYPE_MARKER_RECORDED: {
          const data = event.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
          const marker = data ? (JSON.parse(decoder.decode(data)) as { seq?: number; activity_type?: string }) : {};
          return `${id}:marker(${marker.seq ?? 'patch'} ${marker.activity_type ?? ''})`;
        }
        default:
          return undefined;
      }
    })
    .filter((entry) => entry !== undefined)
    .slice(-400)
    .join(' ');
}
