import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { createPaymentActivities } from '../src/activities/payment-activities';
import { FailureTypes } from '../src/domain/payment';
import type { ProviderAck } from '../src/domain/payment';
import { ProviderError } from '../src/provider';
import type { ProviderClient } from '../src/provider';
import type { PaymentRequest } from '../src/domain/requests';
import { detachCard } from '../src/vault/card-data';
import { createMemoryVault } from '../src/vault/card-vault';
import { paymentRequest, storedRequest } from './support/requests';

const ack: ProviderAck = { transactionId: '1', statusCode: '2', message: 'pending', redirectUrl: null };
const input = {
  paymentId: 'payment-acme-r1',
  request: storedRequest('bank_credit', '00', 'r1'),
  callbackUrl: 'http://x',
};

const cardVault = createMemoryVault();

function fakeProvider(overrides: Partial<ProviderClient>): ProviderClient {
  return {
    initiate: () => Promise.resolve(ack),
    checkStatus: () => Promise.resolve(null),
    canCheckStatus: true,
    listBanks: () => Promise.resolve([]),
    close: () => Promise.resolve(),
    ...overrides,
  };
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ApplicationFailure);
    return err;
  }
  assert.fail('expected an ApplicationFailure');
}

describe('payment activities', () => {
  it('turn each classification into one non-retryable ApplicationFailure type', async () => {
    const cases = [
      ['definite_rejection', FailureTypes.rejected],
      ['ambiguous', FailureTypes.unknown],
      ['safe_to_retry', FailureTypes.unreachable],
    ] as const;
    for (const [classification, type] of cases) {
      const provider = fakeProvider({
        initiate: () =>
          Promise.reject(
            new ProviderError('boom', { classification, httpStatus: 400, providerMessage: 'Account closed' }),
          ),
      });
      const failure = await failureOf(createPaymentActivities({ provider, cardVault }).initiatePayment(input));
      assert.equal(failure.type, type);
      assert.equal(failure.nonRetryable, true);
      if (classification === 'definite_rejection') {
        assert.deepEqual(failure.details?.[0], { code: 'http_400', message: 'Account closed' });
      }
    }
  });

  it('an acknowledgement that already says failed is a definite rejection', async () => {
    const provider = fakeProvider({
      initiate: () => Promise.resolve({ ...ack, statusCode: '0', message: 'Declined' }),
    });
    const failure = await failureOf(createPaymentActivities({ provider, cardVault }).initiatePayment(input));
    assert.equal(failure.type, FailureTypes.rejected);
  });

  it('status checks ask by transaction id, and by our reference for bank credits', async () => {
    const queries: unknown[] = [];
    const provider = fakeProvider({
      checkStatus: (q) => {
        queries.push(q);
        return Promise.resolve(null);
      },
    });
    const activities = createPaymentActivities({ provider, cardVault });
    await activities.checkPaymentStatus({ paymentId: 'p1', type: 'bank_credit', transactionId: null });
    await activities.checkPaymentStatus({ paymentId: 'p2', type: 'mobile_money_debit', transactionId: '7' });
    assert.deepEqual(queries, [
      { transactionId: null, reference: 'p1' },
      { transactionId: '7', reference: null },
    ]);
  });

  it('a failed status query is retryable unless the provider definitely refused it', async () => {
    const activities = (classification: 'ambiguous' | 'definite_rejection') =>
      createPaymentActivities({
        provider: fakeProvider({
          checkStatus: () => Promise.reject(new ProviderError('status query failed', { classification })),
        }),
        cardVault,
      });
    const transient = await failureOf(
      activities('ambiguous').checkPaymentStatus({ paymentId: 'p', type: 'card_payment', transactionId: '1' }),
    );
    assert.equal(transient.nonRetryable, false);
    const refused = await failureOf(
      activities('definite_rejection').checkPaymentStatus({ paymentId: 'p', type: 'card_payment', transactionId: '1' }),
    );
    assert.equal(refused.nonRetryable, true);
  });

  it('a card payment takes its card data out of the vault once, for the provider only', async () => {
    const sent: PaymentRequest[] = [];
    const provider = fakeProvider({
      initiate: (req) => {
        sent.push(req.request);
        return Promise.resolve(ack);
      },
    });
    const full = paymentRequest('card_payment', '00', 'c1');
    const stored = await detachCard(full, cardVault);
    assert.ok(stored.type === 'card_payment' && !('card_number' in stored) && !('card_cvv' in stored));
    assert.deepEqual(stored.card.last4, '1111');
    const card = { ...input, request: stored };
    const activities = createPaymentActivities({ provider, cardVault });
    assert.deepEqual(await activities.initiatePayment(card), ack);
    assert.deepEqual(sent, [full]);
    assert.equal(await cardVault.take(stored.card.token), null, 'the CVV is gone after its first use');
    const again = await failureOf(activities.initiatePayment(card));
    assert.equal(again.type, FailureTypes.rejected);
    assert.equal(again.nonRetryable, true);
    assert.deepEqual(again.details?.[0], {
      code: 'card_data_unavailable',
      message: 'the card data expired or was already used before initiation; nothing was sent to the provider',
    });
    assert.equal(sent.length, 1, 'nothing sent without card data');
  });

  it('unused card data expires', async () => {
    const shortVault = createMemoryVault(50);
    const token = await shortVault.put({
      card_number: '4111111111111111',
      card_cvv: '123',
      expiry_month: '12',
      expiry_year: '2031',
    });
    await new Promise((r) => setTimeout(r, 120));
    assert.equal(await shortVault.take(token), null);
  });
});
