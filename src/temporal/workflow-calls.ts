import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { QueryDefinition, UpdateDefinition } from '@temporalio/common';
import { PaymentError, temporalCall, translateTemporalError } from './errors';

/** A workflow's state from its query while it runs, or from its result once closed (no worker needed then). */
export async function queryOrResult<T>(
  client: Client,
  workflowId: string,
  query: QueryDefinition<T>,
  timeoutMs: number,
): Promise<T> {
  const handle = client.workflow.getHandle(workflowId);
  try {
    return await client.withDeadline(Date.now() + timeoutMs, () => handle.query(query));
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new PaymentError('not_found', `no ${describe(workflowId)}`);
    const description = await temporalCall(() => handle.describe()).catch(() => undefined);
    if (description && description.status.name !== 'RUNNING') return (await handle.result()) as T;
    throw new PaymentError('unavailable', `the ${describe(workflowId)} cannot be read right now (no worker answered)`);
  }
}

/** Runs an Update; a refusal by its validator and a closed workflow become `conflict`, a missing one `not_found`. */
export async function executeUpdate<T, A>(
  client: Client,
  workflowId: string,
  update: UpdateDefinition<T, [A]>,
  arg: A,
  closedMessage: string,
): Promise<T> {
  const handle = client.workflow.getHandle(workflowId);
  try {
    return await handle.executeUpdate(update, { args: [arg] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      throw new PaymentError('conflict', err.cause?.message ?? closedMessage);
    }
    if (err instanceof WorkflowNotFoundError) {
      const exists = await temporalCall(() => handle.describe()).then(
        () => true,
        (e: unknown) => {
          if (e instanceof WorkflowNotFoundError) return false;
          throw e;
        },
      );
      throw exists
        ? new PaymentError('conflict', closedMessage)
        : new PaymentError('not_found', `no ${describe(workflowId)}`);
    }
    throw translateTemporalError(err);
  }
}

function describe(workflowId: string): string {
  return workflowId.startsWith('batch-') ? `payout batch ${workflowId}` : `payment ${workflowId}`;
}
