import type { Keyring } from '../crypto/keyring';
import type { BatchItem, ItemOutcome, ItemSettled } from '../domain/batch-model';
import type { Signed } from '../domain/signed';
import { signedResult } from './signed-results';

/** What Temporal says of an item's payment workflow: whether it has closed, and the status it last published. */
export interface ItemWorkflow {
  closed: boolean;
  status: string | undefined;
}

export interface BatchActivityDeps {
  /** Reads up to `limit` of a batch's items from `fromPosition` on, in upload order (the records' `batch_items`). */
  readItems: (batchId: string, fromPosition: number, limit: number) => Promise<BatchItem[]>;
  /** Reads up to `limit` references of a batch's items from `fromPosition` on, in upload order. */
  readReferences: (batchId: string, fromPosition: number, limit: number) => Promise<string[]>;
  /** Describes an item's payment workflow; undefined when there is none. */
  describeItem: (paymentId: string) => Promise<ItemWorkflow | undefined>;
  /** Signs the results for the batch run that asked (SIGNING_KEYS): it pays and counts nothing else. */
  signingKeys: Keyring;
}

const OUTCOMES = ['succeeded', 'failed', 'needs_review'] as const satisfies readonly ItemOutcome[];
/** Items described at once: a batch has at most its concurrency in flight, up to 1,000. */
const DESCRIBE_AT_ONCE = 20;

/** Builds the payout batch activities around their dependencies, so tests hand in fakes. */
export function createBatchActivities({ readItems, readReferences, describeItem, signingKeys }: BatchActivityDeps) {
  return {
    /** Fetches one page of a batch's items from the records, where they wait rather than in the batch's input. */
    async loadBatchItems(batchId: string, fromPosition: number, limit: number): Promise<Signed<BatchItem[]>> {
      return signedResult(signingKeys, 'batch-items', await readItems(batchId, fromPosition, limit));
    },

    /** The references of the items a cancelled batch never started, the first `limit` of them: shown, never paid. */
    async notStartedReferences(batchId: string, fromPosition: number, limit: number): Promise<string[]> {
      return await readReferences(batchId, fromPosition, limit);
    },

    /**
     * The outcomes of items whose report has not reached the batch, read from their workflows: the status each last
     * published, or `needs_review` for one that closed without an outcome (terminated). Items still on their way are
     * left out; they report themselves.
     */
    async itemOutcomes(paymentIds: string[]): Promise<Signed<ItemSettled[]>> {
      const reports: ItemSettled[] = [];
      for (let i = 0; i < paymentIds.length; i += DESCRIBE_AT_ONCE) {
        const ids = paymentIds.slice(i, i + DESCRIBE_AT_ONCE);
        const described = await Promise.all(ids.map(describeItem));
        ids.forEach((paymentId, k) => {
          const item = described[k];
          const status = item?.status;
          if (isOutcome(status)) {
            reports.push({ paymentId, status });
          } else if (item?.closed) {
            reports.push({ paymentId, status: 'needs_review' });
          }
        });
      }
      return signedResult(signingKeys, 'item-outcomes', reports);
    },
  };
}

function isOutcome(status: string | undefined): status is ItemOutcome {
  return (OUTCOMES as readonly (string | undefined)[]).includes(status);
}

export type BatchActivities = ReturnType<typeof createBatchActivities>;
