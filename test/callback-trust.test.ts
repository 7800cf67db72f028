import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { eventually } from '../src/local/eventually';
import type { PaymentResource } from '../src/domain/payment-model';
import { paymentRequest } from './support/request-builders';
import { OPERATOR_KEY, startStack, TEST_CALLBACK_KEYS, testCallbackTokens } from './support/test-stack';
import type { Stack } from './support/test-stack';

// Attacks on the callback route from outside: someone who learned a payment's callback URL (a proxy log, a leaked
// provider dashboard) posts what they like to it. The sandbox's ledger is the truth the status query reads.

/** A second callback key listed before the tests' one: new URLs carry it, the older key still verifies. */
const NEW_CALLBACK_KEY = `cb-2:${Buffer.alloc(32, 6).toString('base64')}`;
let stack: Stack;

before(async () => {
  // A long callback wait: whatever settles these payments comes from a callback, not from reconciliation.
  stack = await startStack({
    env: { CALLBACK_TIMEOUT_MOBILE_MONEY: '20s', CALLBACK_KEYS: `${NEW_CALLBACK_KEY},${TEST_CALLBACK_KEYS}` },
  });
});
after(() => stack?.close());

/** A mobile-money payment of a sandbox scenario, pending at the provider, and the callback URL the provider got. */
async function pendingPayment(scenario: string): Promise<{ payment: PaymentResource; url: string; ackId: string }> {
  const created = await stack.api<PaymentResource>(
    'POST',
    '/v1/payments',
    paymentRequest('mobile_money_debit', scenario),
  );
  assert.equal(created.status, 201);
  const payment = await stack.waitForStatus(created.body.id, ['pending']);
  const [upstream] = await stack.upstreamRequests(payment.id);
  const url = upstream?.body?.callback_url;
  assert.ok(url, 'the provider received a callback URL');
  const ackId = payment.provider.transaction_id;
  assert.ok(ackId, 'the provider acknowledged a transaction');
  return { payment, url, ackId };
}

async function post(url: string, body: Record<string, unknown>): Promise<number> {
  const response = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await response.body.dump();
  return response.statusCode;
}

async function paymentNow(id: string): Promise<PaymentResource> {
  return (await stack.api<PaymentResource>('GET', `/v1/payments/${id}`, undefined, OPERATOR_KEY)).body;
}

/** The payment once one of its events says `pattern` (10 s at most). */
async function once(id: string, pattern: RegExp): Promise<PaymentResource> {
  return eventually(
    async () => {
      const payment = await paymentNow(id);
      assert.ok(payment.events.some((e) => pattern.test(e.message ?? '')));
      return payment;
    },
    { timeoutMs: 10_000, intervalMs: 200, what: `an event of ${id} matching ${pattern}` },
  );
}

describe('callbacks are hints when the provider can be asked', () => {
  it('a leaked URL posting status=0 for the acknowledged transaction does not fail a payment the provider took', async () => {
    const { payment, url, ackId } = await pendingPayment('22'); // the provider succeeds and never calls back
    await eventually(async () => assert.equal((await stack.upstreamTransactions(payment.id))[0]?.status, '1'), {
      timeoutMs: 10_000,
      intervalMs: 100,
      what: 'the sandbox to take the debit',
    });
    const forged = { status: '0', transaction_id: ackId, message: 'Declined', amount: payment.amount };
    assert.equal(await post(url, forged), 200, 'the URL is genuine: the callback is taken as a hint');
    const settled = await stack.waitForStatus(payment.id, ['succeeded', 'failed']);
    assert.equal(settled.status, 'succeeded');
    assert.equal(settled.failure, null);
    assert.ok(settled.events.some((e) => /status query says succeeded, which settles/.test(e.message ?? '')));
  });

  it('a forged success with the exact amount does not settle while the provider says pending', async () => {
    const { payment, url, ackId } = await pendingPayment('33'); // stays pending at the provider
    const forged = { status: '1', transaction_id: ackId, message: 'Approved', amount: payment.amount };
    assert.equal(await post(url, forged), 200);
    const after = await once(payment.id, /the status query says pending; ignored/);
    assert.equal(after.status, 'pending');
    assert.ok(!after.events.some((e) => e.type === 'succeeded'));
  });

  it('GET is refused with 405 and Allow: POST before the token is looked at, and settles nothing', async () => {
    const { payment, url, ackId } = await pendingPayment('33');
    const response = await request(`${url}?status=1&transaction_id=${ackId}&amount=${payment.amount}`);
    assert.equal(response.statusCode, 405);
    assert.equal(response.headers.allow, 'POST');
    assert.equal(((await response.body.json()) as { error: { code: string } }).error.code, 'method_not_allowed');
    const forgedToken = await request(`${stack.baseUrl}/v1/callbacks/${payment.id}/nope?status=1`);
    assert.equal(forgedToken.statusCode, 405, 'the same answer whatever the token: GET tells nothing');
    await forgedToken.body.dump();
    assert.equal((await paymentNow(payment.id)).events.filter((e) => e.type.startsWith('callback')).length, 0);
  });

  it('new URLs carry the first key; a token under an older listed key works, an expired or unlisted one does not', async () => {
    const { payment, url, ackId } = await pendingPayment('33');
    assert.match(url, /\/cb-2\.\d+\.[\w-]+$/, 'key id, expiry, MAC');
    const hint = { status: '2', transaction_id: ackId, message: 'still pending' };
    const base = `${stack.baseUrl}/v1/callbacks/${encodeURIComponent(payment.id)}`;
    const older = testCallbackTokens(); // cb-1, still listed second
    assert.equal(await post(`${base}/${older.tokenFor(payment.id)}`, hint), 200, 'rotation: the older key verifies');
    const expired = older.tokenFor(payment.id, Date.now() - 8 * 86_400_000);
    assert.equal(await post(`${base}/${expired}`, hint), 404, 'an expired token');
    const removed = testCallbackTokens(undefined, `cb-0:${Buffer.alloc(32, 4).toString('base64')}`);
    assert.equal(await post(`${base}/${removed.tokenFor(payment.id)}`, hint), 404, 'a key no longer listed');
    const [keyId, expiry, mac] = url.slice(url.lastIndexOf('/') + 1).split('.');
    const later = Number(expiry) + 86_400;
    assert.equal(await post(`${base}/${keyId}.${later}.${mac}`, hint), 404, 'an expiry moved without the key');
  });
});
