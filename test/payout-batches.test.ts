import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BatchProgress } from '../src/domain/batch';
import { batchBody, waitForBatch } from './support/batches';
import { uniqueReference } from './support/requests';
import { OPERATOR_KEY, OTHER_MERCHANT_KEY, startStack } from './support/stack';
import type { Stack } from './support/stack';

let stack: Stack;
before(async () => {
  stack = await startStack({ env: { BATCH_CONCURRENCY: '4' } });
});
after(async () => {
  await stack?.close();
});

describe('payout batches', () => {
  it('runs every item as its own payment and completes with the counts', async () => {
    const body = batchBody(uniqueReference('b'), 12, ['00', '11', '33']);
    const created = await stack.api<BatchProgress>('POST', '/v1/payout-batches', body);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const batch = await waitForBatch(stack, created.body.id, (b) => b.status === 'completed');
    assert.equal(batch.items.succeeded.count, 4);
    assert.equal(batch.items.failed.count, 4);
    assert.equal(batch.items.needs_review.count, 4);
  });
});
