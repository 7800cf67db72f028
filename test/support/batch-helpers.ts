import assert from 'node:assert/strict';
import { eventually } from '../../src/local/eventually';
import { sampleBatchItems } from '../../src/local/sample-requests';
import type { BatchProgress } from '../../src/domain/batch-model';
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
  return eventually(
    async () => {
      const response = await stack.api<BatchProgress>('GET', `/v1/payout-batches/${id}`, undefined, OPERATOR_KEY);
      assert.equal(response.status, 200, `GET answered ${response.status}`);
      assert.ok(done(response.body), `it is ${JSON.stringify(response.body)}`);
      return response.body;
    },
    { timeoutMs, what: `batch ${id} getting there (${done.toString()})` },
  );
}
