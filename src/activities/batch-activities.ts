import type { BatchItem } from '../domain/batch';

export interface BatchActivityDeps {
  /** Reads the items a page workflow holds. */
  readItems: (pageWorkflowId: string) => Promise<BatchItem[]>;
}

/** Builds the payout batch activities around their dependencies, so tests hand in fakes. */
export function createBatchActivities({ readItems }: BatchActivityDeps) {
  return {
    /** Fetches one page of a batch's items, which live in their page workflow rather than in the batch's history. */
    async loadBatchItems(pageWorkflowId: string): Promise<BatchItem[]> {
      return readItems(pageWorkflowId);
    },
  };
}

export type BatchActivities = ReturnType<typeof createBatchActivities>;
