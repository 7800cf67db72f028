import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig, serverSchema, workerSchema } from '../src/config';

const valid = {
  MERCHANT_API_KEYS: 'acme:0123456789abcdef0123,fallback0123456789ab',
  OPERATOR_API_KEYS: 'op-0123456789abcdef',
  CALLBACK_SECRET: 's'.repeat(32),
  PROVIDER_BASE_URL: 'https://provider.example',
  PROVIDER_TOKEN: 'provider-token',
};

describe('configuration', () => {
  it('applies the documented defaults and parses durations and keys', () => {
    const config = parseConfig(serverSchema, valid);
    assert.equal(config.PORT, 3000);
    assert.equal(config.TASK_QUEUE, 'payments');
    assert.equal(config.CALLBACK_TIMEOUT_MOBILE_MONEY, 5 * 60_000);
    assert.equal(config.CALLBACK_TIMEOUT_CARD, 15 * 60_000);
    assert.equal(config.CALLBACK_TIMEOUT_BANK_CREDIT, 30 * 60_000);
    assert.equal(config.RECONCILE_FOR, 3_600_000);
    assert.deepEqual(config.MERCHANT_API_KEYS, [
      { merchantId: 'acme', key: '0123456789abcdef0123' },
      { merchantId: 'default', key: 'fallback0123456789ab' },
    ]);
    assert.deepEqual(config.VOUCHER_CHANNELS, []);
    assert.equal(config.BATCH_CONCURRENCY, 20);
    assert.equal(config.BANK_LIST_REFRESH, 3_600_000);
  });

  it('names every bad variable and never echoes a secret', () => {
    assert.throws(
      () =>
        parseConfig(serverSchema, { ...valid, PORT: 'http', RECONCILE_FOR: '5 minutes', CALLBACK_SECRET: 'hunter2' }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, /PORT/);
        assert.match(err.message, /RECONCILE_FOR: "5 minutes" is not a duration/);
        assert.match(err.message, /CALLBACK_SECRET: must be at least 32 characters/);
        assert.ok(!err.message.includes('hunter2'));
        return true;
      },
    );
  });

  it('reports missing required settings', () => {
    assert.throws(
      () => parseConfig(workerSchema, {}),
      /PROVIDER_BASE_URL: is required[\s\S]*PROVIDER_TOKEN: is required/,
    );
  });

  it('defaults the metrics endpoints and rejects a metrics address that is not host:port', () => {
    assert.equal(parseConfig(serverSchema, valid).METRICS_PORT, 9465);
    const provider = { PROVIDER_BASE_URL: 'http://provider.test', PROVIDER_TOKEN: 't' };
    assert.equal(parseConfig(workerSchema, provider).WORKER_METRICS_ADDRESS, '0.0.0.0:9464');
    assert.equal(
      parseConfig(workerSchema, { ...provider, WORKER_METRICS_ADDRESS: '127.0.0.1:9100' }).WORKER_METRICS_ADDRESS,
      '127.0.0.1:9100',
    );
    assert.throws(
      () => parseConfig(workerSchema, { ...provider, WORKER_METRICS_ADDRESS: '9464' }),
      /WORKER_METRICS_ADDRESS: must be host:port/,
    );
    assert.throws(
      () => parseConfig(workerSchema, { ...provider, WORKER_METRICS_ADDRESS: 'localhost:99999' }),
      /WORKER_METRICS_ADDRESS: the port must be at most 65535/,
    );
  });
});
