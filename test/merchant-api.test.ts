import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { eventually } from '../src/local/eventually';
import { passesLuhn } from '../src/domain/card';
import { OPERATOR_KEY, OTHER_MERCHANT_KEY, startStack } from './support/test-stack';
import type { ApiResponse, Stack } from './support/test-stack';
import { paymentRequest, uniqueReference } from './support/request-builders';

interface ErrorBody {
  error: { code: string; message: string; fields: { path: string; message: string }[] };
}

describe('merchant API', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ sandbox: { auto3ds: undefined }, env: { MERCHANT_MAX_AMOUNTS: 'other:100' } });
  });
  after(() => stack?.close());

  it('the same reference and body again: 200 with the same payment, nothing re-sent upstream', async () => {
    const body = paymentRequest('mobile_money_debit', '00');
    const first = await stack.api('POST', '/v1/payments', body);
    assert.equal(first.status, 201);
    const second = await stack.api('POST', '/v1/payments', body);
    assert.equal(second.status, 200);
    assert.equal(second.body.id, first.body.id);
    await stack.waitForStatus(first.body.id, ['succeeded']);
    const third = await stack.api('POST', '/v1/payments', body);
    assert.equal(third.status, 200);
    assert.equal(third.body.status, 'succeeded');
    assert.equal((await stack.upstreamRequests(first.body.id)).length, 1);
  });

  it('the same reference with a different body: 409', async () => {
    const body = paymentRequest('bank_credit', '00');
    assert.equal((await stack.api('POST', '/v1/payments', body)).status, 201);
    const conflict = await stack.api<ErrorBody>('POST', '/v1/payments', { ...body, amount: 251 });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.error.code, 'conflict');
  });

  it('no card oracle: re-sending a card reference with a wrong card number or expiry answers as the right one', async () => {
    // Scenario 99 settles at once (no 3-D Secure): the payment no longer changes between the re-sends.
    const body = paymentRequest('card_payment', '99');
    assert.ok(body.type === 'card_payment');
    const created = await stack.api('POST', '/v1/payments', body);
    assert.equal(created.status, 201);
    await stack.waitForStatus(created.body.id, ['succeeded']);
    // Other middle digits, the same first six and last four, a valid Luhn check digit: a plausible guess.
    const guesses = Array.from({ length: 100 }, (_, n) => `411111${String(n).padStart(2, '0')}11111111`.slice(0, 16));
    const wrongNumber = guesses.find((number) => number !== body.card_number && passesLuhn(number));
    assert.ok(wrongNumber);
    const right = await stack.api('POST', '/v1/payments', body);
    assert.equal(right.status, 200);
    for (const wrong of [
      { card_number: wrongNumber },
      { expiry_month: '01' },
      { card_cvv: '999' },
      { card_number: '5555555555554444', expiry_year: String(Number(body.expiry_year) + 1) },
    ]) {
      const answer: ApiResponse = await stack.api('POST', '/v1/payments', { ...body, ...wrong });
      assert.equal(answer.status, right.status, JSON.stringify(wrong));
      assert.deepEqual(answer.body, right.body, JSON.stringify(wrong));
    }
    // Everything but the card data still counts: another amount with the same reference is a conflict.
    assert.equal((await stack.api('POST', '/v1/payments', { ...body, amount: 41 })).status, 409);
    assert.equal((await stack.upstreamRequests(created.body.id)).length, 1, 'nothing re-sent upstream');
  });

  it("amounts: at least 0.01, two decimals at most, at most the merchant's limit (MERCHANT_MAX_AMOUNTS)", async () => {
    const fieldsOf = async (body: unknown, key?: string) => {
      const answer = await stack.api<ErrorBody>('POST', '/v1/payments', body, key);
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      return answer.body.error.fields;
    };
    const payment = (amount: number) => ({ ...paymentRequest('mobile_money_debit', '00'), amount });
    for (const amount of [0, 0.001, -1, 1_000_000.01, 1e300]) {
      const fields = await fieldsOf(payment(amount));
      assert.ok(fields.length > 0 && fields.every((f) => f.path === 'amount'), `${amount}: ${JSON.stringify(fields)}`);
    }
    assert.deepEqual(await fieldsOf(payment(1_000_000.01)), [
      { path: 'amount', message: "must be at most 1000000.00 (this merchant's limit)" },
    ]);
    assert.deepEqual(await fieldsOf(payment(0)), [{ path: 'amount', message: 'must be at least 0.01' }]);
    // "other" is limited to 100 per payment and per batch item; "acme" has the default.
    assert.deepEqual(await fieldsOf(payment(100.01), OTHER_MERCHANT_KEY), [
      { path: 'amount', message: "must be at most 100.00 (this merchant's limit)" },
    ]);
    assert.equal((await stack.api('POST', '/v1/payments', payment(100), OTHER_MERCHANT_KEY)).status, 201);
    assert.equal((await stack.api('POST', '/v1/payments', payment(0.01))).status, 201);
    const batch = {
      reference: uniqueReference('limited-batch'),
      items: [
        { ...paymentRequest('bank_credit', '00', 'item-1'), amount: 100 },
        { ...paymentRequest('bank_credit', '00', 'item-2'), amount: 150 },
      ],
    };
    const refused = await stack.api<ErrorBody>('POST', '/v1/payout-batches', batch, OTHER_MERCHANT_KEY);
    assert.equal(refused.status, 400);
    assert.deepEqual(
      refused.body.error.fields.map((f) => f.path),
      ['items.1.amount'],
    );
  });

  it('20 concurrent duplicates: one workflow, one upstream call', async () => {
    const body = paymentRequest('mobile_money_debit', '00', uniqueReference('concurrent'));
    const responses = await Promise.all(Array.from({ length: 20 }, () => stack.api('POST', '/v1/payments', body)));
    const statuses = responses.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, ...Array<number>(18).fill(200), 201].sort());
    assert.equal(new Set(responses.map((r) => r.body.id)).size, 1);
    const payment = await stack.waitForStatus(responses[0]!.body.id, ['succeeded']);
    assert.equal((await stack.upstreamRequests(payment.id)).length, 1);
  });

  it('invalid input: 400 naming every bad field', async () => {
    const response = await stack.api<ErrorBody>('POST', '/v1/payments', {
      type: 'card_payment',
      reference: 'bad ref!',
      amount: 10.005,
      channel: 1,
      first_name: '',
      last_name: 'Mensah',
      email: 'not-an-email',
      phone_number: '233241234567',
      card_number: '4111111111111112',
      card_cvv: '12',
      expiry_month: '13',
      expiry_year: '2030',
      return_url: 'javascript:alert(1)',
      extra: 'x',
    });
    assert.equal(response.status, 400);
    const paths = response.body.error.fields.map((f) => f.path).sort();
    assert.deepEqual(paths, [
      'amount',
      'card_cvv',
      'card_number',
      'email',
      'expiry_month',
      'extra',
      'first_name',
      'phone_number',
      'reference',
      'return_url',
    ]);
    const unknownType = await stack.api<ErrorBody>('POST', '/v1/payments', { type: 'cash' });
    assert.equal(unknownType.status, 400);
    assert.deepEqual(
      unknownType.body.error.fields.map((f) => f.path),
      ['type'],
    );
  });

  it('missing or wrong key: 401; an operator key cannot create payments', async () => {
    const body = paymentRequest('mobile_money_debit', '00');
    const missing = await stack.api<ErrorBody>('POST', '/v1/payments', body, null);
    assert.equal(missing.status, 401);
    assert.equal(missing.body.error.code, 'unauthorized');
    assert.equal((await stack.api('POST', '/v1/payments', body, 'mk_wrong_0123456789abcdef')).status, 401);
    assert.equal((await stack.api('GET', '/v1/payments', undefined, null)).status, 401);
    assert.equal((await stack.api('POST', '/v1/payments', body, OPERATOR_KEY)).status, 403);
  });

  it("a merchant never sees or touches another merchant's payment", async () => {
    const body = paymentRequest('mobile_money_debit', '00');
    const created = await stack.api('POST', '/v1/payments', body);
    const path = `/v1/payments/${encodeURIComponent(created.body.id)}`;
    assert.equal((await stack.api('GET', path, undefined, OTHER_MERCHANT_KEY)).status, 404);
    assert.equal((await stack.api('GET', path)).status, 200);
    assert.equal((await stack.api('GET', path, undefined, OPERATOR_KEY)).status, 200);
    // The same reference is the other merchant's own, separate payment: neither a 409 nor the first one.
    const theirs = await stack.api('POST', '/v1/payments', body, OTHER_MERCHANT_KEY);
    assert.equal(theirs.status, 201);
    assert.notEqual(theirs.body.id, created.body.id);
    const resolve = { outcome: 'failed', note: 'not mine' };
    assert.equal((await stack.api('POST', `${path}/resolve`, resolve, OTHER_MERCHANT_KEY)).status, 403);
    const listed = await stack.api<{ data: { id: string }[] }>(
      'GET',
      `/v1/payments?reference=${body.reference}`,
      undefined,
      OTHER_MERCHANT_KEY,
    );
    assert.equal(listed.status, 200);
    assert.ok(listed.body.data.every((p) => p.id !== created.body.id));
  });

  it('a forged callback is refused with 404 and changes nothing', async () => {
    const created = await stack.api('POST', '/v1/payments', paymentRequest('mobile_money_debit', '33'));
    const id = encodeURIComponent(created.body.id);
    const forged = await request(`${stack.baseUrl}/v1/callbacks/${id}/forged-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ transaction_id: '1', status: '1', message: 'ok' }),
    });
    assert.equal(forged.statusCode, 404);
    await forged.body.dump();
    const unknown = await request(`${stack.baseUrl}/v1/callbacks/payment-acme-nope/forged-token?status=1`, {
      method: 'POST',
    });
    assert.equal(unknown.statusCode, 404);
    await unknown.body.dump();
    const payment = (await stack.api('GET', `/v1/payments/${id}`)).body;
    assert.ok(['pending', 'initiating'].includes(payment.status));
    assert.ok(!payment.events.some((e) => e.type.startsWith('callback')));
  });

  it('callbacks are accepted as JSON, form and query string (by POST); garbage is a 400', async () => {
    const created = await stack.api('POST', '/v1/payments', paymentRequest('bank_credit', '33'));
    const pending = await stack.waitForStatus(created.body.id, ['pending']);
    const callbackUrl = (await stack.upstreamTransactions(pending.id))[0]?.callback_url;
    assert.ok(callbackUrl);
    const garbage = await request(callbackUrl, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    assert.equal(garbage.statusCode, 400);
    await garbage.body.dump();
    const form = await request(callbackUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'status=2&message=still+pending',
    });
    assert.equal(form.statusCode, 200);
    await form.body.dump();
    // It settles the payment only because it names the acknowledged transaction and the amount, and the provider's
    // status query says the same (a callback is a hint).
    const transaction = pending.provider.transaction_id;
    assert.ok(stack.sandbox.succeedSilently(Number(transaction)));
    const viaQuery = await request(`${callbackUrl}?status=1&message=paid&amount=250&transaction_id=${transaction}`, {
      method: 'POST',
    });
    assert.equal(viaQuery.statusCode, 200);
    await viaQuery.body.dump();
    const viaGet = await request(`${callbackUrl}?status=1&message=paid&amount=250&transaction_id=${transaction}`);
    assert.equal(viaGet.statusCode, 405, 'GET only with CALLBACK_ALLOW_GET');
    await viaGet.body.dump();
    const payment = await stack.waitForStatus(pending.id, ['succeeded']);
    assert.ok(payment.events.some((e) => e.type === 'callback_received' && e.outcome === 'pending'));
  });

  it('3-D Secure: the payer approves on the redirect page and the payment completes', async () => {
    const created = await stack.api('POST', '/v1/payments', paymentRequest('card_payment', '00'));
    assert.equal(created.status, 201);
    const url = created.body.next_action?.url;
    assert.ok(url, JSON.stringify(created.body));
    const page = await request(url);
    const html = await page.body.text();
    assert.equal(page.statusCode, 200);
    assert.match(html, /Approve/);
    const action = /action="([^"]*approve[^"]*)"/i.exec(html)?.[1];
    assert.ok(action, 'the page has an approve form');
    const approve = await request(new URL(action, url).toString(), { method: 'POST' });
    assert.equal(approve.statusCode, 303);
    assert.equal(approve.headers.location, 'https://merchant.example/return');
    await approve.body.dump();
    const payment = await stack.waitForStatus(created.body.id, ['succeeded']);
    assert.equal(payment.card?.last4, '1111');
  });

  it('metadata: answered on POST, GET and lists, part of the body (other metadata is a 409), never sent upstream', async () => {
    const marker = `meta-${Date.now()}`;
    const metadata = { order_id: marker, note: `${marker} ${'é'.repeat(400)}`, [`k${'x'.repeat(39)}`]: '' };
    for (const [type, scenario] of [
      ['mobile_money_debit', '00'],
      ['bank_credit', '00'],
      ['card_payment', '99'],
    ] as const) {
      const body = { ...paymentRequest(type, scenario), metadata };
      const created = await stack.api('POST', '/v1/payments', body);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.deepEqual(created.body.metadata, metadata, type);
      const settled = await stack.waitForStatus(created.body.id, ['succeeded']);
      assert.deepEqual(settled.metadata, metadata, `${type}: kept through the workflow's changes`);
      const read = await stack.api('GET', `/v1/payments/${created.body.id}`);
      assert.deepEqual(read.body.metadata, metadata, type);
      const list = await stack.api<{ data: { id: string; metadata?: unknown }[] }>(
        'GET',
        `/v1/payments?reference=${body.reference}`,
      );
      assert.deepEqual(
        list.body.data.map((p) => [p.id, p.metadata]),
        [[created.body.id, metadata]],
      );
      assert.equal((await stack.api('POST', '/v1/payments', body)).status, 200, `${type}: the same metadata again`);
      const other = await stack.api<ErrorBody>('POST', '/v1/payments', { ...body, metadata: { order_id: 'other' } });
      assert.equal(other.status, 409, `${type}: other metadata with the same reference`);
      const without = await stack.api<ErrorBody>('POST', '/v1/payments', paymentRequest(type, scenario));
      assert.equal(without.status, 201, 'a payment without metadata');
      assert.equal('metadata' in without.body, false, 'no metadata answered when none was given');

      const upstream = await stack.upstreamRequests(created.body.id);
      assert.equal(upstream.length, 1, type);
      const sent = JSON.stringify(upstream);
      assert.ok(!sent.includes(marker) && !sent.includes('order_id'), `${type}: the provider saw ${sent}`);
    }
    const log = JSON.stringify(await stack.sandboxGet<unknown[]>('/sandbox/requests'));
    assert.ok(log.length > 2 && !log.includes(marker), "the sandbox's request log holds no metadata");
  });

  it('bad metadata: 400 naming the field, nothing started', async () => {
    const cases: [unknown, string][] = [
      [Object.fromEntries(Array.from({ length: 21 }, (_, n) => [`key${n}`, 'v'])), 'metadata'],
      [{ ['k'.repeat(41)]: 'v' }, `metadata.${'k'.repeat(41)}`],
      [{ '': 'v' }, 'metadata.'],
      [{ some_key: 'v'.repeat(501) }, 'metadata.some_key'],
      [{ some_key: 5 }, 'metadata.some_key'],
      [{ some_key: null }, 'metadata.some_key'],
      [{ some_key: { nested: 'v' } }, 'metadata.some_key'],
      [['a'], 'metadata'],
      ['a=b', 'metadata'],
    ];
    for (const [metadata, path] of cases) {
      const body = { ...paymentRequest('bank_credit', '00'), metadata };
      const answer = await stack.api<ErrorBody>('POST', '/v1/payments', body);
      assert.equal(answer.status, 400, JSON.stringify(metadata).slice(0, 80));
      assert.deepEqual(
        answer.body.error.fields.map((f) => f.path),
        [path],
        JSON.stringify(answer.body.error.fields).slice(0, 200),
      );
      const id = `payment-acme-${body.reference}`;
      assert.equal((await stack.api('GET', `/v1/payments/${id}`, undefined, OPERATOR_KEY)).status, 404);
    }
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, n) => [`key${n}`, 'v'.repeat(500)]));
    const full = await stack.api('POST', '/v1/payments', { ...paymentRequest('bank_credit', '00'), metadata: twenty });
    assert.equal(full.status, 201, '20 pairs of 500 characters are accepted');
    assert.deepEqual(full.body.metadata, twenty);
  });

  it('lists payments filtered by status and type', async () => {
    const created = await stack.api('POST', '/v1/payments', paymentRequest('bank_credit', '11'));
    await stack.waitForStatus(created.body.id, ['failed']);
    await eventually(
      async () => {
        const list = await stack.api<{ data: { id: string; status: string; type: string }[] }>(
          'GET',
          '/v1/payments?status=failed&type=bank_credit&limit=50',
        );
        assert.equal(list.status, 200);
        assert.ok(list.body.data.every((p) => p.status === 'failed' && p.type === 'bank_credit'));
        assert.ok(list.body.data.map((p) => p.id).includes(created.body.id));
      },
      { timeoutMs: 10_000, what: `the failed bank credit ${created.body.id} listed` },
    );
    const bad = await stack.api<ErrorBody>('GET', '/v1/payments?status=lost&limit=0&reference=a%22%20OR%20x');
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.error.fields.map((f) => f.path).sort(), ['limit', 'reference', 'status']);
  });
});
