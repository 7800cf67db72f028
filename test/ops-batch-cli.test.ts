import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BatchProgress } from '../src/domain/batch-model';
import { batchBody } from './support/batch-helpers';
import { ops } from './support/ops-cli-runner';
import { uniqueReference } from './support/request-builders';
import { startStack } from './support/test-stack';
import type { Stack } from './support/test-stack';

let stack: Stack;
let batchId: string;
before(async () => {
  // Scenario 22 settles only by reconciliation, a few seconds per item: slow enough to pause.
  stack = await startStack({ env: { BATCH_CONCURRENCY: '2' } });
  const created = await stack.api<BatchProgress>(
    'POST',
    '/v1/payout-batches',
    batchBody(uniqueReference('cli'), 8, ['22']),
  );
  assert.equal(created.status, 201);
  batchId = created.body.id;
});
after(async () => {
  await stack?.close();
});

describe('ops batch', () => {
  it('pauses and resumes a batch, printing its progress as JSON', async () => {
    const paused = await ops(['batch', 'pause', batchId, '--json']);
    assert.equal(paused.code, 0, paused.stderr);
    assert.equal((JSON.parse(paused.stdout) as BatchProgress).status, 'paused');
    const pausedBy = (JSON.parse(paused.stdout) as BatchProgress).paused_by;
    assert.ok(pausedBy && pausedBy !== 'merchant', `an operator's hold: ${pausedBy}`);
    const shown = await ops(['batch', 'show', batchId]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`status: +paused \\(by ${pausedBy.replace(/\./g, '\\.')}\\)`));
    assert.match(shown.stdout, /STATUS +COUNT +AMOUNT/);
    const resumed = await ops(['batch', 'resume', batchId, '--json']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal((JSON.parse(resumed.stdout) as BatchProgress).status, 'running');
  });

  it('follows a batch to the end with progress lines, then prints the summary table', async () => {
    const followed = await ops(['batch', 'follow', batchId, '--interval', '200ms']);
    assert.equal(followed.code, 0, followed.stderr);
    assert.match(followed.stdout, /\[[#.]{30}\] \d+\/8 +\d+% +[\d.]+\/s/, 'a progress line');
    assert.match(followed.stdout, /\[#{30}\] 8\/8 +100%.*completed/, 'the last line is complete');
    assert.match(followed.stdout, /^succeeded +8 +\d+/m, 'the summary table counts the items');
    assert.match(followed.stdout, /^total +8 +\d+/m);

    const json = await ops(['batch', 'follow', batchId, '--json']);
    assert.equal(json.code, 0, json.stderr);
    const progress = JSON.parse(json.stdout) as BatchProgress;
    assert.equal(progress.status, 'completed');
    assert.equal(progress.items.succeeded.count, 8);
  });

  it('explains refusals, unknown batches and bad options', async () => {
    const late = await ops(['batch', 'cancel', batchId]);
    assert.equal(late.code, 4);
    assert.match(late.stderr, /already (finished|completed)/);
    const missing = await ops(['batch', 'show', 'batch-acme-no-such-batch']);
    assert.equal(missing.code, 3);
    assert.match(missing.stderr, /no payout batch batch-acme-no-such-batch/);
    const bad = await ops(['batch', 'follow', batchId, '--interval', 'soon']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--interval: "soon" is not a duration/);
  });
});
