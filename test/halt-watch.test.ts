import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HaltWatch, failureKind, itemReport } from '../src/domain/halt-watch';
import type { HaltWatchCarry } from '../src/domain/halt-watch';
import type { ItemSettled } from '../src/domain/batch-model';
import type { PaymentResource } from '../src/domain/payment-model';

const now = new Date('2026-01-01T00:00:00.000Z');
const rules = { window: 4, failureShare: 0.5, providerErrors: 3 };
const fresh = (): HaltWatchCarry => ({ recent: [], providerRun: [] });
const failed = (id: string, code = 'provider_declined'): ItemSettled => ({
  paymentId: id,
  status: 'failed',
  failure: { code, kind: failureKind(code) },
});
const succeeded = (id: string): ItemSettled => ({ paymentId: id, status: 'succeeded' });
const trouble = (id: string): ItemSettled => ({
  paymentId: id,
  status: 'in_flight',
  failure: { code: 'http_503', kind: 'provider' },
});

describe('failureKind', () => {
  it('tells provider-wide failures (authentication, 5xx, unreachable) from an item’s own', () => {
    for (const code of ['http_401', 'http_403', 'http_429', 'http_500', 'http_503', 'provider_unreachable', 'not_sent'])
      assert.equal(failureKind(code), 'provider', code);
    for (const code of ['http_400', 'http_404', 'E_ACCOUNT_CLOSED', 'provider_declined', 'card_data_unavailable'])
      assert.equal(failureKind(code), 'item', code);
  });
});

describe('HaltWatch', () => {
  it('halts once more than the share of a full window of settled items failed, not before the window fills', () => {
    const watch = new HaltWatch(rules, fresh());
    assert.equal(watch.observe(failed('a'), now), undefined);
    assert.equal(watch.observe(failed('b'), now), undefined);
    assert.equal(watch.observe(succeeded('c'), now), undefined, '2 of 3: the window is not full');
    assert.equal(watch.observe(succeeded('d'), now), undefined, '2 of 4 is not more than half');
    assert.equal(watch.observe(failed('e'), now), undefined, 'b c d e: 2 of the latest 4');
    assert.equal(watch.observe(failed('f'), now), undefined, 'c d e f: 2 of the latest 4');
    const halt = watch.observe(failed('g'), now);
    assert.equal(halt?.reason, 'failure_share', 'd e f g: 3 of the latest 4');
    assert.match(halt?.message ?? '', /3 of the latest 4 settled items failed \(more than 50 %\)/);
  });

  it('halts on a run of provider-wide errors, counting each item once; an item that goes through ends the run', () => {
    const watch = new HaltWatch(rules, fresh());
    assert.equal(watch.observe(trouble('a'), now), undefined);
    assert.equal(watch.observe(trouble('a'), now), undefined, 'the same item again');
    assert.equal(watch.observe(failed('a', 'not_sent'), now), undefined, 'its outcome is the same error');
    assert.equal(watch.observe(succeeded('x'), now), undefined);
    assert.equal(watch.observe(trouble('b'), now), undefined);
    assert.equal(watch.observe({ paymentId: 'q', status: 'failed' }, now), undefined, 'a failure of unknown kind');
    assert.equal(watch.observe(trouble('c'), now), undefined);
    assert.equal(watch.observe(trouble('d'), now)?.reason, 'provider_errors');
  });

  it('starts over on reset and keeps its bookkeeping in the carried state it was given', () => {
    const carried = fresh();
    const watch = new HaltWatch(rules, carried);
    ['a', 'b', 'c'].forEach((id) => watch.observe(failed(id), now));
    assert.deepEqual(carried.recent, [true, true, true]);
    const continued = new HaltWatch(rules, carried);
    assert.equal(continued.observe(failed('d'), now)?.reason, 'failure_share');
    continued.reset();
    assert.deepEqual(carried, fresh());
    assert.equal(continued.observe(failed('e'), now), undefined);
  });

  it('never halts a batch started without rules', () => {
    const watch = new HaltWatch(undefined, fresh());
    for (let i = 0; i < 100; i++) assert.equal(watch.observe(failed(`i${i}`, 'http_500'), now), undefined);
  });
});

describe('itemReport', () => {
  const resource = (patch: Partial<PaymentResource>): PaymentResource => ({
    id: 'p1',
    type: 'bank_credit',
    reference: 'r1',
    status: 'pending',
    amount: 10,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    provider: { transaction_id: null, status_code: null, message: null },
    next_action: null,
    failure: null,
    events: [],
    ...patch,
  });

  it('reports an outcome with its failure’s code and kind, and a provider-wide initiation error while pending', () => {
    assert.equal(itemReport(resource({})), null);
    assert.deepEqual(itemReport(resource({ status: 'succeeded' })), { paymentId: 'p1', status: 'succeeded' });
    assert.deepEqual(
      itemReport(resource({ status: 'failed', failure: { code: 'http_401', message: 'Unauthenticated.' } })),
      { paymentId: 'p1', status: 'failed', failure: { code: 'http_401', kind: 'provider' } },
    );
    const unknown = { at: now.toISOString(), type: 'initiation_unknown' as const, message: 'HTTP 500' };
    assert.deepEqual(itemReport(resource({ events: [{ ...unknown, status_code: 'http_500' }] })), {
      paymentId: 'p1',
      status: 'in_flight',
      failure: { code: 'http_500', kind: 'provider' },
    });
    assert.equal(itemReport(resource({ events: [{ ...unknown, status_code: 'E_TIMEOUT_ITEM' }] })), null);
  });
});
