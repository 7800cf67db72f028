import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../src/local/eventually';
import type { PaymentResource, PaymentStatus } from '../src/domain/payment-model';
import { PAYMENT_TYPES } from '../src/domain/requests';
import type { PaymentType } from '../src/domain/requests';
import { OPERATOR_KEY, startStack } from './support/test-stack';
import type { Stack } from './support/test-stack';
import { paymentRequest } from './support/request-builders';

const FINAL: PaymentStatus[] = ['succeeded', 'failed', 'needs_review'];
const eventTypes = (p: PaymentResource) => p.events.map((e) => e.type);

describe('every sandbox scenario, for every payment type, on a real Temporal', () => {
  let stack: Stack;
  const created = new Map<string, { type: PaymentType; scenario: string; first: PaymentResource }>();
  const settled = new Map<string, PaymentResource>();
  const key = (type: PaymentType, scenario: string) => `${type}/${scenario}`;

  before(async () => {
    stack = await startStack();
    const scenarios = ['00', '11', '22', '33', '44', '55', '66', '77', '88', '99'];
    await Promise.all(
      PAYMENT_TYPES.flatMap((type) =>
        scenarios.map(async (scenario) => {
          const response = await stack.api('POST', '/v1/payments', paymentRequest(type, scenario));
          assert.equal(response.status, 201, JSON.stringify(response.body));
          created.set(key(type, scenario), { type, scenario, first: response.body });
        }),
      ),
    );
    await Promise.all(
      [...created.entries()].map(async ([k, { first }]) => {
        settled.set(k, await stack.waitForStatus(first.id, FINAL, 45_000));
      }),
    );
  });
  after(() => stack?.close());

  const settledOf = (type: PaymentType, scenario: string) => {
    const payment = settled.get(key(type, scenario));
    assert.ok(payment, `no payment for ${type}/${scenario}`);
    return payment;
  };

  /** Re-reads a payment until the predicate holds (later callbacks arrive after the first outcome). */
  const rereadUntil = (payment: PaymentResource, predicate: (p: PaymentResource) => boolean) =>
    eventually(
      async () => {
        const latest = (await stack.api('GET', `/v1/payments/${encodeURIComponent(payment.id)}`)).body;
        assert.ok(predicate(latest), `events: ${eventTypes(latest).join()}`);
        return latest;
      },
      { timeoutMs: 10_000, intervalMs: 200, what: `payment ${payment.id} ${predicate.toString()}` },
    );

  for (const type of PAYMENT_TYPES) {
    describe(type, () => {
      it('default: succeeds on the callback', () => {
        const payment = settledOf(type, '00');
        assert.equal(payment.status, 'succeeded');
        // The stack has a status query: the callback settles once it confirms.
        assert.ok(eventTypes(payment).includes('callback_confirmed'));
        assert.ok(payment.provider.transaction_id);
        assert.equal(payment.failure, null);
      });

      it('11: fails on the failure callback', () => {
        const payment = settledOf(type, '11');
        assert.equal(payment.status, 'failed');
        assert.equal(payment.failure?.code, 'provider_declined');
      });

      it('22: succeeds through reconciliation', () => {
        const payment = settledOf(type, '22');
        assert.equal(payment.status, 'succeeded');
        const events = eventTypes(payment);
        assert.ok(events.includes('timed_out'), events.join());
        assert.ok(events.includes('status_checked'), events.join());
        assert.ok(!events.includes('callback_received'));
      });

      it('33: goes to review, then an operator resolves it', async () => {
        const payment = settledOf(type, '33');
        assert.equal(payment.status, 'needs_review');
        assert.ok(eventTypes(payment).filter((e) => e === 'status_checked').length >= 2);
        const path = `/v1/payments/${encodeURIComponent(payment.id)}/resolve`;
        const byMerchant = await stack.api('POST', path, { outcome: 'failed', note: 'nope' });
        assert.equal(byMerchant.status, 403);
        const resolved = await stack.api(
          'POST',
          path,
          { outcome: 'failed', note: 'customer confirmed no debit' },
          OPERATOR_KEY,
        );
        assert.equal(resolved.status, 200, JSON.stringify(resolved.body));
        assert.equal(resolved.body.status, 'failed');
        assert.equal(resolved.body.failure?.code, 'operator_resolved');
        const again = await stack.api('POST', path, { outcome: 'succeeded', note: 'second thoughts' }, OPERATOR_KEY);
        assert.equal(again.status, 409);
        assert.equal((await stack.waitForStatus(payment.id, ['failed'])).status, 'failed');
      });

      it('44: a 500 at initiation is never retried and never succeeds', async () => {
        const payment = settledOf(type, '44');
        assert.notEqual(payment.status, 'succeeded');
        if (type === 'bank_credit') {
          // Its reference lets reconciliation ask the provider, which never had it: failed, no operator needed.
          assert.equal(payment.status, 'failed');
          assert.equal(payment.failure?.code, 'not_sent');
        } else {
          assert.equal(payment.status, 'needs_review');
        }
        assert.ok(eventTypes(payment).includes('initiation_unknown'));
        assert.equal((await stack.upstreamRequests(payment.id)).length, 1, 'exactly one initiation request upstream');
      });

      it('55: a slow answer still succeeds, with exactly one upstream transaction', async () => {
        const payment = settledOf(type, '55');
        assert.equal(payment.status, 'succeeded');
        assert.equal((await stack.upstreamTransactions(payment.id)).length, 1);
        assert.equal((await stack.upstreamRequests(payment.id)).length, 1);
      });

      it('66: repeated success callbacks change nothing', async () => {
        const payment = await rereadUntil(settledOf(type, '66'), (p) => eventTypes(p).includes('callback_duplicate'));
        assert.equal(payment.status, 'succeeded');
        assert.equal(eventTypes(payment).filter((e) => e === 'succeeded').length, 1);
      });

      it('77: success then failure: the first outcome wins, the contradiction is recorded', async () => {
        assert.equal(settledOf(type, '77').status, 'succeeded');
        const payment = await rereadUntil(settledOf(type, '77'), (p) =>
          eventTypes(p).includes('callback_contradicting'),
        );
        assert.equal(payment.status, 'succeeded');
      });

      it("88: a 400 at initiation fails with the provider's reason", () => {
        const payment = settledOf(type, '88');
        assert.equal(payment.status, 'failed');
        assert.ok(payment.failure?.message && payment.failure.message.length > 3, JSON.stringify(payment.failure));
        assert.ok(eventTypes(payment).includes('initiation_rejected'));
      });

      it('99: a callback before the initiation answer still succeeds', () => {
        const payment = settledOf(type, '99');
        assert.equal(payment.status, 'succeeded');
        assert.ok(eventTypes(payment).includes('initiated'));
      });
    });
  }

  it('card payments answer with the 3-D Secure redirect', () => {
    const first = created.get(key('card_payment', '00'))?.first;
    assert.equal(first?.next_action?.type, 'redirect');
    assert.match(first?.next_action?.url ?? '', /\/sandbox\/3ds\//);
    assert.equal(first?.card?.last4, '1111');
    assert.ok(!JSON.stringify(first).includes('4111111111111111'));
  });
});
