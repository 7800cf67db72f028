import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCallback } from '../src/provider/wire';
import { providerState } from '../src/provider/codes';

void describe('provider codes', () => {
  void it('maps the one table and leaves everything else unknown', () => {
    assert.equal(providerState('1'), 'succeeded');
    assert.equal(providerState('0'), 'failed');
    assert.equal(providerState('2'), 'pending');
    assert.equal(providerState('411'), 'pending');
    assert.equal(providerState(1), 'succeeded');
    assert.equal(providerState(' 0 '), 'failed');
    for (const code of [
      '3',
      '01',
      '1.0',
      'success',
      'failed',
      '',
      'toString',
      'constructor',
      '__proto__',
      null,
      undefined,
    ]) {
      assert.equal(providerState(code), 'unknown', String(code));
    }
  });
});

void describe('parseCallback', () => {
  void it('reads the sandbox JSON shape', () => {
    assert.deepEqual(
      parseCallback({ transaction_id: 501, reference: 'pay_1', status: '1', message: 'Approved', amount: 12.5 }),
      { state: 'succeeded', transactionId: '501', statusCode: '1', message: 'Approved', amount: 12.5 },
    );
  });

  void it('reads form strings', () => {
    assert.deepEqual(parseCallback({ transactionId: '601', status: '0', reason: 'Declined', amount: '40.00' }), {
      state: 'failed',
      transactionId: '601',
      statusCode: '0',
      message: 'Declined',
      amount: 40,
    });
  });

  void it('accepts code, status_code, status_message, id and provider_id', () => {
    assert.deepEqual(parseCallback({ provider_id: 7001, code: '411', status_message: 'Pending Gateway Response' }), {
      state: 'pending',
      transactionId: '7001',
      statusCode: '411',
      message: 'Pending Gateway Response',
      amount: null,
    });
    assert.equal(parseCallback({ id: '9', status_code: 1 })?.state, 'succeeded');
    assert.equal(parseCallback({ id: '9', status_code: 1 })?.transactionId, '9');
    assert.equal(parseCallback({ id: '9', transaction_id: '10' })?.transactionId, '10', 'transaction_id wins over id');
  });

  void it('reads records nested under transaction, data or data.transaction', () => {
    const expected = { state: 'succeeded', transactionId: '501', statusCode: '1', message: 'ok', amount: 12.5 };
    const record = { id: 501, status: '1', status_message: 'ok', amount: '12.5' };
    assert.deepEqual(parseCallback({ transaction: record }), expected);
    assert.deepEqual(parseCallback({ data: record }), expected);
    assert.deepEqual(parseCallback({ data: { transaction: record } }), expected);
    assert.deepEqual(parseCallback({ data: JSON.stringify(record) }), expected, 'form field carrying JSON');
    assert.deepEqual(parseCallback({ event: 'payment', transaction: record, message: 'envelope' }), {
      ...expected,
      message: 'envelope',
    });
  });

  void it('a nested transaction describes itself better than its envelope', () => {
    const parsed = parseCallback({ id: 'evt_1', status: 'delivered', transaction: { id: 501, status: '0' } });
    assert.equal(parsed?.transactionId, '501');
    assert.equal(parsed?.statusCode, '0');
    assert.equal(parsed?.state, 'failed');
  });

  void it('keeps unknown statuses unknown', () => {
    assert.equal(parseCallback({ transaction_id: '1', status: '7' })?.state, 'unknown');
    assert.equal(parseCallback({ transaction_id: '1', status: 'SUCCESS' })?.state, 'unknown');
    assert.deepEqual(parseCallback({ transaction_id: '1' }), {
      state: 'unknown',
      transactionId: '1',
      statusCode: null,
      message: null,
      amount: null,
    });
    assert.equal(parseCallback({ status: '1' })?.transactionId, null);
  });

  void it('returns null for garbage', () => {
    assert.equal(parseCallback({}), null);
    assert.equal(parseCallback({ foo: 'bar', message: 'hello' }), null);
    assert.equal(parseCallback({ status: '', transaction_id: '   ' }), null);
    assert.equal(
      parseCallback({ status: ['1', '0'], transaction_id: { nested: true } }),
      null,
      'repeated or odd values',
    );
    assert.equal(parseCallback({ data: 'not json' }), null);
    assert.equal(parseCallback(null as unknown as Record<string, unknown>), null);
    assert.equal(parseCallback(['1'] as unknown as Record<string, unknown>), null);
    assert.equal(
      parseCallback(JSON.parse('{"__proto__":{"status":"1","transaction_id":"1"}}') as Record<string, unknown>),
      null,
    );
  });

  void it('ignores amounts that are not numbers and caps strings', () => {
    const parsed = parseCallback({
      transaction_id: 'x'.repeat(1000),
      status: '1',
      message: `line\nbreak ${'m'.repeat(1000)}`,
      amount: '1,000.00',
    });
    assert.equal(parsed?.amount, null);
    assert.ok((parsed?.transactionId?.length ?? 0) <= 300);
    assert.ok((parsed?.message?.length ?? 0) <= 300);
    assert.ok(!parsed?.message?.includes('\n'));
    assert.equal(parseCallback({ status: '1', amount: Number.NaN })?.amount, null);
  });
});
