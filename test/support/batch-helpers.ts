import { sampleBatchItems } from '../../src/local/sample-requests';
import type { BatchProgress } from '../../src/domain/batch';
import { OPERATOR_KEY } from './test-stack';
import type { Stack } from './test-stack';

/** A batch body whose items' sandbox scenarios cycle through `scenarios`. */
export function batchBody(reference: string, count: number, scenarios: readonly string[] = ['00']) {
  return { reference, items: sampleBatchItems(count, scenarios) };
}

/** Polls a batch until the predicate holds. */
export async function waitForBatch(
  stack: Stack,
  id: string,
  done: (batch: BatchProgress) => boolean,
  timeoutMs = 60_000,
): Promise<BatchProgress> {
  const deadline = Date.now() + timeoutMs;
  let last: BatchProgress | undefined;
  while (Date.now() < deadline) {
    const response = await stack.api<BatchProgress>('GET', `/v1/payout-batches/${id}`, undefined, OPERATOR_KEY);
    if (response.status === 200) {
      last = response.body;
      if (done(last)) return last;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`batch ${id} did not get there in time; last: ${JSON.stringify(last)}`);
}
