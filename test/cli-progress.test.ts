import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ITEM_STAGES } from '../src/domain/batch-model';
import type { BatchProgress, ItemStage, Tally } from '../src/domain/batch-model';
import { RateMeter, progressLine } from '../src/cli/progress';

function batch(counts: Partial<Record<ItemStage, number>>, total = 1000): BatchProgress {
  const items = Object.fromEntries(
    ITEM_STAGES.map((stage) => [stage, { count: counts[stage] ?? 0, amount: 0 }]),
  ) as Record<ItemStage, Tally>;
  return {
    id: 'batch-acme-b',
    reference: 'b',
    status: 'running',
    concurrency: 20,
    created_at: '',
    started_at: '',
    finished_at: null,
    total: { count: total, amount: 0 },
    items,
    needs_review: [],
    not_started: null,
    paused_by: null,
    starts_at: null,
    approvals_required: 0,
    approvals: [],
    approval_expires_at: null,
  };
}

describe('batch progress display', () => {
  it('draws done/total, percentage, rate and time left', () => {
    const line = progressLine(batch({ succeeded: 400, failed: 80, needs_review: 20, in_flight: 20 }), 10, 10);
    assert.equal(line, '[#####.....] 500/1000  50%  10.0/s  ~50s left  running  (20 in review)');
    assert.match(progressLine(batch({}), 0, 10), /^\[\.{10}\] 0\/1000 {2}0% {2}0\.0\/s {2}estimating…/);
    assert.match(progressLine(batch({ succeeded: 10 }), 0.01, 10), /~27h30m left/);
  });

  it('measures the rate over a sliding window', () => {
    const meter = new RateMeter(10_000);
    assert.equal(meter.sample(0, 0), 0);
    assert.equal(meter.sample(5_000, 50), 10);
    assert.equal(meter.sample(10_000, 100), 10);
    // The first sample falls out of the window: the rate follows the recent pace.
    assert.equal(meter.sample(20_000, 400), 30);
  });
});
