import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BankCreditRequest } from '../src/domain/requests';
import { classifyStatus, describeBody, ProviderError } from '../src/provider/provider-errors';
import { encodeInitiation, formatAmount, parseAck, providerReference } from '../src/provider/wire';
import { createRedactor } from '../src/provider/redact';
import { parseRetryAfter, retryDelay } from '../src/provider/retry';

const urls = { baseUrl: 'https://api.provider.test/', mobileMoneyBaseUrl: 'https://mm.provider.test' };

void describe('wire helpers', () => {
  void it('formats amounts as plain decimals with at most two places', () => {
    assert.equal(formatAmount(12.5), '12.5');
    assert.equal(formatAmount(40), '40');
    assert.equal(formatAmount(0.1 + 0.2), '0.3');
    assert.equal(formatAmount(1234567.89), '1234567.89');
    for (const bad of [0, -1, 1.234, Number.NaN, Number.POSITIVE_INFINITY, 1e21]) {
      assert.throws(
        () => formatAmount(bad),
        (err) => err instanceof ProviderError && err.verdict === 'rejected',
      );
    }
  });

  void it('names the reference we can query by: the payment id, for bank credits only', () => {
    assert.equal(providerReference('bank_credit', 'pay_3'), 'pay_3');
    assert.equal(providerReference('mobile_money_debit', 'pay_1'), undefined);
    assert.equal(providerReference('card_payment', 'pay_2'), undefined);
  });

  void it('defaults a missing bank credit description to the merchant reference', () => {
    const bank: BankCreditRequest = {
      type: 'bank_credit',
      reference: 'payout-77',
      amount: 250,
      customer_name: 'Kofi Boateng',
      bank_code: 'GH030100',
      account_number: '1234567890',
    };
    const wire = encodeInitiation(bank, 'pay_3', 'https://cb.test/x', urls);
    assert.equal(wire.url, 'https://api.provider.test/api/custom/transactions/partner/credits/banks');
    assert.equal(wire.contentType, 'application/json');
    assert.equal((JSON.parse(wire.body) as { description: string }).description, 'payout-77');
  });

  void it('tolerates extra fields, numeric strings and missing optional ack fields', () => {
    assert.deepEqual(parseAck('bank_credit', { code: 411, message: 'Pending', extra: true }), {
      transactionId: null,
      statusCode: '411',
      message: 'Pending',
      redirectUrl: null,
    });
    assert.equal(parseAck('card_payment', { transaction: { id: '601', status: '2' } })?.redirectUrl, null);
    assert.equal(parseAck('card_payment', { transaction: { id: 601 } }), undefined);
    assert.equal(parseAck('mobile_money_debit', null), undefined);
    assert.equal(parseAck('mobile_money_debit', { transaction: { id: 1.5e300, status: '2' } }), undefined);
  });
});

void describe('error helpers', () => {
  void it('classifies HTTP statuses by the one table', () => {
    assert.equal(classifyStatus(200), null);
    assert.equal(classifyStatus(201), null);
    assert.equal(classifyStatus(429), 'not_sent');
    for (const s of [400, 401, 403, 404, 408, 409, 422]) assert.equal(classifyStatus(s), 'rejected');
    for (const s of [100, 301, 302, 500, 502, 503, 504, 600]) assert.equal(classifyStatus(s), 'unknown');
  });

  void it('finds the provider reason in the usual places', () => {
    assert.deepEqual(describeBody('{"error":"invalid_token","error_description":"expired"}'), {
      code: undefined,
      message: 'expired; invalid_token',
    });
    assert.deepEqual(describeBody('{"status":"error","status_message":"Insufficient balance"}'), {
      code: 'error',
      message: 'Insufficient balance',
    });
    assert.deepEqual(describeBody('{"errors":[{"field":"amount","message":"too small"}]}'), {
      code: undefined,
      message: 'field: amount; message: too small',
    });
    assert.deepEqual(describeBody(''), { code: undefined, message: undefined });
    assert.equal(describeBody('{}').message, undefined);
    assert.equal(describeBody('x'.repeat(5000)).message?.length, 300);
  });

  void it('redacts secrets and card-shaped numbers only', () => {
    const redact = createRedactor(['tok_1', '4111111111111111', '123']);
    assert.equal(
      redact('tok_1 4111111111111111 cvv 123 x1234 amount 12.50 x-1230'),
      '[redacted] [redacted] cvv [redacted] x1234 amount 12.50 x-1230',
    );
    // A card number next to other digits is still found.
    assert.equal(redact('ref 1234 5555-5555-5555-4444 end'), 'ref [redacted] end');
    assert.equal(redact('ref 98 4111 1111 1111 1111'), 'ref [redacted]');
    assert.equal(redact('phone 233241234567 amount 12.50'), 'phone 233241234567 amount 12.50');
  });

  void it('reads Retry-After and bounds the delay', () => {
    assert.equal(parseRetryAfter('3'), 3000);
    assert.equal(parseRetryAfter(['1', '9']), 1000);
    assert.equal(parseRetryAfter(new Date(10_000).toUTCString(), 4_000), 6000);
    assert.equal(parseRetryAfter('soon'), undefined);
    assert.equal(parseRetryAfter(undefined), undefined);
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map((n) => retryDelay(n, 250, 5000)),
      [250, 500, 1000, 2000, 4000, 5000],
    );
    assert.equal(retryDelay(1, 250, 5000, 60_000), 5000);
    assert.equal(retryDelay(3, 250, 5000, 100), 1000);
  });
});
