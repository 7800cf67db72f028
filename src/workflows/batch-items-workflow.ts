import { condition, setHandler, setWorkflowOptions } from '@temporalio/workflow';
import type { BatchItem } from '../domain/batch-model';
import { batchItemsQuery, releaseItemsSignal } from './definitions';
import { versioned } from './versioning';

/**
 * Holds one page of a batch's items until the batch has started them all. The items stay out of the batch
 * workflow's own input, which would pass Temporal's payload limit for large batches and be copied into every
 * continued-as-new run; an open workflow also outlives the namespace retention that a closed one is subject to.
 */
export async function batchItemsWorkflow(items: BatchItem[]): Promise<void> {
  let released = false;
  setHandler(batchItemsQuery, () => items);
  setHandler(releaseItemsSignal, () => {
    released = true;
  });
  await condition(() => released);
}

// A page only holds items until its batch has started them: it follows new builds rather than keep an old one alive.
setWorkflowOptions(versioned('AUTO_UPGRADE'), batchItemsWorkflow);
