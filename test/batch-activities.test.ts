import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { parseKeyring } from '../src/crypto/keyring';
import { signatureProblem } from '../src/crypto/signing';
import type { BatchItem, ItemSettled } from '../src/domain/batch-model';
import type { Signed } from '../src/domain/signed';
import { createBatchActivities } from '../src/activities/batch-activities';
import type { ItemWorkflow } from '../src/activities/batch-activities';

describe('itemOutcomes: what a batch counts for items whose report never came', () => {
  const workflows: Record<string, ItemWorkflow | undefined> = {
    reported: { closed: true, status: 'succeeded' },
    inReview: { closed: false, status: 'needs_review' },
    failedRunning: { closed: false, status: 'failed' },
    terminated: { closed: true, status: 'pending' },
    terminatedEarly: { closed: true, status: 'initiating' },
    waiting: { closed: false, status: 'pending' },
    missing: undefined,
  };
  const described: string[] = [];
  const batchActivities = createBatchActivities({
    signingKeys: parseKeyring(`s1:${Buffer.alloc(32, 3).toString('base64')}`),
    readItems: () => Promise.reject(new Error('not used')),
    readReferences: () => Promise.reject(new Error('not used')),
    describeItem: (id) => {
      described.push(id);
      return Promise.resolve(workflows[id]);
    },
  });
  // Run as Temporal would, inside an activity: the answer is signed for it.
  const activities = {
    itemOutcomes: async (ids: string[]) =>
      (
        await new MockActivityEnvironment().run<
          [string[]],
          Signed<ItemSettled[]>,
          (what: string[]) => Promise<Signed<ItemSettled[]>>
        >((what) => batchActivities.itemOutcomes(what), ids)
      ).body,
  };

  it('takes the status a payment published, needs_review for one closed without an outcome, and leaves the rest', async () => {
    const ids = Object.keys(workflows);
    assert.deepEqual(await activities.itemOutcomes(ids), [
      { paymentId: 'reported', status: 'succeeded' },
      { paymentId: 'inReview', status: 'needs_review' },
      { paymentId: 'failedRunning', status: 'failed' },
      { paymentId: 'terminated', status: 'needs_review' },
      { paymentId: 'terminatedEarly', status: 'needs_review' },
    ]);
    assert.deepEqual(described, ids);
  });

  it('describes a long list in slices, every item once', async () => {
    described.length = 0;
    const ids = Array.from({ length: 45 }, (_, i) => (i % 2 ? 'waiting' : 'reported'));
    assert.equal((await activities.itemOutcomes(ids)).length, 23);
    assert.equal(described.length, 45);
  });
});

describe('loadBatchItems: a page of a batch’s items from the records', () => {
  it('reads the batch’s items from a position on and answers them signed for the activity', async () => {
    const asked: [string, number, number][] = [];
    const stored = [{ body: { paymentId: 'payment-acme-b~1' } }, { body: { paymentId: 'payment-acme-b~2' } }];
    const signingKeys = parseKeyring(`s1:${Buffer.alloc(32, 3).toString('base64')}`);
    const batchActivities = createBatchActivities({
      signingKeys,
      readItems: (batchId, fromPosition, limit) => {
        asked.push([batchId, fromPosition, limit]);
        return Promise.resolve(stored as unknown as BatchItem[]);
      },
      readReferences: () => Promise.reject(new Error('not used')),
      describeItem: () => Promise.reject(new Error('not used')),
    });
    const answer = await new MockActivityEnvironment().run<
      [string, number, number],
      Signed<BatchItem[]>,
      (batchId: string, from: number, limit: number) => Promise<Signed<BatchItem[]>>
    >((batchId, from, limit) => batchActivities.loadBatchItems(batchId, from, limit), 'batch-acme-b', 500, 500);
    assert.deepEqual(asked, [['batch-acme-b', 500, 500]]);
    assert.equal(answer.kind, 'batch-items');
    assert.deepEqual(answer.body, stored);
    assert.equal(signatureProblem(signingKeys, answer), undefined, 'signed with SIGNING_KEYS');
  });
});
