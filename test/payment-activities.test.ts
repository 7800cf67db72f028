import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { createPaymentActivities } from '../src/activities/payment-activities';
import { FailureTypes } from '../src/domain/payment';
import type { ProviderAck } from '../src/domain/payment';
import { ProviderError } from '../src/provider';
import type { ProviderClient } from '../src/provider';
import { paymentRequest } from './support/requests';

const ack: ProviderAck = { transactionId: '1', statusCode: '2', message: 'pending', redirectUrl: null };
const input = {
  paymentId: 'payment-acme-r1',
  request: paymentRequest('bank_credit', '00', 'r1'),
  callbackUrl: 'http://x',
};

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
      const failure = await failureOf(createPaymentActivities({ provider }).initiatePayment(input));
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
    const failure = await failureOf(createPaymentActivities({ provider }).initiatePayment(input));
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
    const activities = createPaymentActivities({ provider });
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
});
