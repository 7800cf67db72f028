import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ITEM_STAGES } from '../src/domain/batch-model';
import type { BatchProgress, ItemStage, Tally } from '../src/domain/batch-model';
import { progressLine } from '../src/cli/progress';
import { watchLine } from '../src/cli/batch-watch';
import { batchPace } from '../src/payments/batch-figures';

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

  it("takes the pace from the items' records: done per second from the first start to the latest change", () => {
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    const tally = (status: 'succeeded' | 'failed' | 'pending', count: number, from: number, to: number) => ({
      status,
      count,
      amount: count * 10,
      firstCreatedAt: at(from),
      lastUpdatedAt: at(to),
    });
    assert.deepEqual(batchPace(100, [tally('pending', 5, 0, 1)]), { items_per_second: null, seconds_left: null });
    assert.deepEqual(
      batchPace(100, [tally('succeeded', 30, 0, 8), tally('failed', 10, 1, 10), tally('pending', 5, 9, 9)]),
      {
        items_per_second: 4,
        seconds_left: 15,
      },
    );
  });

  it('shows the counts by stage beside the bar, and why a batch halted itself', () => {
    const halted = {
      ...batch({ succeeded: 2, failed: 8, in_flight: 3 }, 20),
      status: 'paused' as const,
      paused_by: 'system',
      halt: { reason: 'failure_share' as const, message: '8 of the latest 10 settled items failed', at: '' },
    };
    assert.equal(
      watchLine({ batch: halted, pace: { items_per_second: 2, seconds_left: 5 } }),
      '[###############...............] 10/20  50%  2.0/s  ~5s left  paused' +
        '  | in flight 3 · succeeded 2 · failed 8 · review 0 · not started 0' +
        '  halted: 8 of the latest 10 settled items failed',
    );
  });
});
