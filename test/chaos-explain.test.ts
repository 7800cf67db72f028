import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PaymentFacts } from '../scripts/chaos/explain';
import { explain } from '../scripts/chaos/explain';

// The chaos harness's rules for which outcomes its faults explain: the harness passes only when every payment ends
// where these allow, so they must be neither looser nor stricter than the product.

const clean = (overrides: Partial<PaymentFacts>): PaymentFacts => ({
  type: 'mobile_money_debit',
  scenario: '00',
  received: 1,
  initiationFaults: ['none'],
  answerMaybeLost: false,
  reconciliationHit: false,
  callbacks: { faults: [], delivered: [{ at: 1, status: '1' }] },
  ...overrides,
});

describe('chaos explanations', () => {
  it('without faults, only the scenario outcome', () => {
    assert.deepEqual(explain(clean({})).allowed, ['succeeded']);
    assert.deepEqual(
      explain(clean({ scenario: '11', callbacks: { faults: [], delivered: [{ at: 1, status: '0' }] } })).allowed,
      ['failed'],
    );
    assert.deepEqual(explain(clean({ scenario: '33', callbacks: { faults: [], delivered: [] } })).allowed, [
      'needs_review',
    ]);
    assert.deepEqual(explain(clean({ scenario: '22', callbacks: { faults: [], delivered: [] } })).allowed, [
      'succeeded',
    ]);
    assert.deepEqual(explain(clean({ scenario: '88', callbacks: { faults: [], delivered: [] } })).allowed, ['failed']);
    assert.deepEqual(explain(clean({ scenario: '44', callbacks: { faults: [], delivered: [] } })).allowed, [
      'needs_review',
    ]);
    assert.deepEqual(
      explain(clean({ type: 'bank_credit', scenario: '44', callbacks: { faults: [], delivered: [] } })).allowed,
      ['failed'],
    );
  });

  it('a request the provider never received: review, or not_sent for a bank credit', () => {
    const lost = { received: 0, initiationFaults: ['500' as const], callbacks: { faults: [], delivered: [] } };
    assert.deepEqual(explain(clean(lost)).allowed, ['needs_review']);
    assert.deepEqual(explain(clean({ ...lost, type: 'bank_credit' })).allowed, ['failed']);
    assert.deepEqual(explain(clean(lost)).causes, ['initiation 500']);
  });

  it('a lost answer and a dropped callback: only a bank credit can still be found, by reference', () => {
    const facts = { initiationFaults: ['timeout' as const], callbacks: { faults: ['drop' as const], delivered: [] } };
    assert.deepEqual(explain(clean(facts)).allowed, ['needs_review']);
    assert.deepEqual(explain(clean({ ...facts, type: 'bank_credit' })).allowed, ['succeeded']);
    // The callback carries the transaction id, so a lost answer alone changes nothing.
    assert.deepEqual(explain(clean({ initiationFaults: ['timeout'] })).allowed, ['succeeded']);
  });

  it('success then reversal: the first callback the server took decides, either one once they were reordered', () => {
    const reordered = {
      faults: ['reorder' as const],
      delivered: [
        { at: 1, status: '0' },
        { at: 2, status: '1' },
      ],
    };
    assert.deepEqual(explain(clean({ scenario: '77', callbacks: reordered })).allowed.sort(), ['failed', 'succeeded']);
    const inOrder = {
      faults: [],
      delivered: [
        { at: 1, status: '1' },
        { at: 2, status: '0' },
      ],
    };
    assert.deepEqual(explain(clean({ scenario: '77', callbacks: inOrder })).allowed, ['succeeded']);
  });

  it('a kill during reconciliation may leave it for an operator', () => {
    const facts = clean({
      type: 'bank_credit',
      scenario: '44',
      reconciliationHit: true,
      callbacks: { faults: [], delivered: [] },
    });
    assert.deepEqual(explain(facts).allowed.sort(), ['failed', 'needs_review']);
  });

  it('a kill near the initiation adds what a lost answer allows', () => {
    const facts = clean({ scenario: '22', answerMaybeLost: true, callbacks: { faults: [], delivered: [] } });
    assert.deepEqual(explain(facts).allowed.sort(), ['needs_review', 'succeeded']);
    assert.deepEqual(explain(facts).causes, ['a kill or restart during initiation']);
  });
});
