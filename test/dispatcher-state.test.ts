import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NotificationOrder } from '../src/domain/notification-delivery';
import type { NotificationEvent } from '../src/domain/notification';
import { DispatcherState } from '../src/workflows/dispatcher-state';

const NOW = new Date('2026-05-01T12:00:00Z');
let counter = 0;

function order(subject: string, type: NotificationOrder['event']['type'] = 'payment.succeeded'): NotificationOrder {
  return {
    event: {
      id: `evt_${String(++counter).padStart(12, '0')}`,
      type,
      created_at: NOW.toISOString(),
      merchant_id: 'acme',
      // The dispatcher never reads the resource: an id stands for it here.
      data: { object: { id: subject } as unknown as NotificationEvent['data']['object'] },
    },
    subject,
    retry: { initialMs: 60_000, maxIntervalMs: 3_600_000, forMs: 86_400_000, attemptTimeoutMs: 12_000 },
  };
}

const ids = (entries: { record: { event_id: string } }[]) => entries.map((e) => e.record.event_id);

describe("a merchant's dispatcher state", () => {
  it("sends one subject's events one at a time, in order, and different subjects side by side up to the cap", () => {
    const state = new DispatcherState();
    const [a1, a2, b1, c1] = [order('a', 'payment.action_required'), order('a'), order('b'), order('c')];
    for (const o of [a1, a2, b1, c1]) assert.equal(state.enqueue(o, NOW), true);
    assert.deepEqual(ids(state.start(2, NOW)), [a1.event.id, b1.event.id]);
    assert.equal(state.canStart(2), false, 'the cap holds c back');
    state.finish(a1.event.id, { status: 'delivered', attempts: 3 }, NOW);
    assert.deepEqual(ids(state.start(2, NOW)), [a2.event.id], "a's next event goes only once the first is done");
    state.finish(b1.event.id, { status: 'failed', attempts: 9, error: 'http_500' }, NOW);
    assert.deepEqual(ids(state.start(3, NOW)), [c1.event.id]);
    const byId = new Map(state.records().map((r) => [r.event_id, r]));
    assert.equal(byId.get(a1.event.id)?.attempts, 3);
    assert.equal(byId.get(b1.event.id)?.status, 'failed');
    assert.equal(byId.get(b1.event.id)?.last_error, 'http_500');
  });

  it('drops an event id it has seen (a repeated hand-off), also after continuing as new', () => {
    const state = new DispatcherState();
    const o = order('a');
    assert.equal(state.enqueue(o, NOW), true);
    assert.equal(state.enqueue(o, NOW), false);
    state.start(10, NOW);
    state.finish(o.event.id, { status: 'delivered', attempts: 1 }, NOW);
    const next = new DispatcherState(JSON.parse(JSON.stringify(state.carry())) as ReturnType<typeof state.carry>);
    assert.equal(next.enqueue(o, NOW), false);
    assert.equal(next.records()[0]?.status, 'delivered');
  });

  it('carries a delivery cut off by continue-as-new back to the head of its subject', () => {
    const state = new DispatcherState();
    const [first, second] = [order('a'), order('a')];
    state.enqueue(first, NOW);
    state.enqueue(second, NOW);
    state.start(10, NOW);
    const next = new DispatcherState(JSON.parse(JSON.stringify(state.carry())) as ReturnType<typeof state.carry>);
    assert.deepEqual(ids(next.start(10, NOW)), [first.event.id]);
    assert.ok(next.records()[0]?.first_attempt_at, 'its retry window still counts from its first attempt');
  });

  it('replays only failed or stopped events, at the end of their subject', () => {
    const state = new DispatcherState();
    const [gone, later] = [order('a'), order('a')];
    state.enqueue(gone, NOW);
    state.enqueue(later, NOW);
    state.start(10, NOW);
    assert.match(state.replayRefusal(gone.event.id) ?? '', /is delivering/);
    state.finish(gone.event.id, { status: 'stopped', attempts: 1, error: 'http_410' }, NOW);
    assert.equal(state.replayRefusal(gone.event.id), undefined);
    assert.equal(state.replay(gone.event.id)?.replays, 1);
    assert.deepEqual(ids(state.start(10, NOW)), [later.event.id]);
    state.finish(later.event.id, { status: 'delivered', attempts: 1 }, NOW);
    assert.deepEqual(ids(state.start(10, NOW)), [gone.event.id]);
    assert.match(state.replayRefusal('evt_unknown000') ?? '', /no event/);
  });

  it('keeps a bounded number of finished records, and the bodies of delivered events not at all', () => {
    const state = new DispatcherState();
    for (let i = 0; i < 260; i++) {
      const o = order(`s${i}`);
      state.enqueue(o, NOW);
      state.start(1, NOW);
      state.finish(o.event.id, { status: 'delivered', attempts: 1 }, NOW);
    }
    assert.equal(state.records().length, 200);
    assert.ok(state.carry().entries.every((e) => e.order === undefined));
  });
});
