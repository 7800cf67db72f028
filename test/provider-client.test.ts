import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { errors, MockAgent } from 'undici';
import type { MobileMoneyDebitRequest, CardPaymentRequest, BankCreditRequest } from '../src/domain/requests';
import { createProviderClient, type ProviderClient, type ProviderConfig } from '../src/provider/provider-client';
import { ProviderError } from '../src/provider/provider-errors';
import { classifyTransportError } from '../src/provider/provider-errors';

const BASE = 'http://provider.test';
const MM = 'http://mm.provider.test';
const TOKEN = 'tok_SECRET_abc123';
const CARD = '4111111111111111';
const CVV = '987';

const config: ProviderConfig = {
  baseUrl: BASE,
  mobileMoneyBaseUrl: MM,
  token: TOKEN,
  connectTimeoutMs: 1000,
  requestTimeoutMs: 2000,
  safeRetries: 0,
};

const mobileMoney: MobileMoneyDebitRequest = {
  type: 'mobile_money_debit',
  reference: 'order-1001',
  amount: 12.5,
  channel: 1,
  phone_number: '233241234567',
  name: 'Ama Mensah',
  voucher_code: 'V-77',
};

const card: CardPaymentRequest = {
  type: 'card_payment',
  reference: 'order-1002',
  amount: 40,
  channel: 2,
  first_name: 'Ama',
  last_name: 'Mensah',
  email: 'ama@example.com',
  phone_number: '+233241234567',
  card_number: CARD,
  card_cvv: CVV,
  expiry_month: '12',
  expiry_year: '2030',
  return_url: 'https://merchant.example/return',
};

const bank: BankCreditRequest = {
  type: 'bank_credit',
  reference: 'payout-77',
  amount: 250.1,
  customer_name: 'Kofi Boateng',
  bank_code: 'GH030100',
  account_number: '1234567890',
  description: 'May payout',
};

const CALLBACK = 'https://orchestrator.example/v1/callbacks/pay_1/hmac';

const mmAck = {
  transaction: { id: 501, status: '2', status_message: 'Request sent, pending processing', callback_url: CALLBACK },
  type: 'success',
  message: 'Transaction initiated',
};
const cardAck = {
  transaction: { id: 601, provider_id: 9001, status: '2', medium_details: { threeds_url: 'https://3ds.test/go/601' } },
};
const bankAck = { code: '411', provider_id: 7001, amount: '250.10', message: 'Pending Gateway Response' };

interface Captured {
  path: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}

function setup(overrides: Partial<ProviderConfig> = {}) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const sleeps: number[] = [];
  const client = createProviderClient(
    { ...config, ...overrides },
    {
      dispatcher: agent,
      sleep: (ms) => {
        sleeps.push(ms);
        return Promise.resolve();
      },
    },
  );
  return { agent, base: agent.get(BASE), mm: agent.get(MM), client, sleeps };
}

function capture(into: Captured[], statusCode: number, data: unknown) {
  return (opts: { path: string; method: string; headers?: unknown; body?: unknown }) => {
    into.push({
      path: opts.path,
      method: opts.method,
      headers: opts.headers as Record<string, string>,
      body: typeof opts.body === 'string' ? opts.body : '',
    });
    return { statusCode, data: typeof data === 'string' ? data : JSON.stringify(data) };
  };
}

function codeError(code: string, message = `${code} happened`): Error {
  return Object.assign(new Error(message), { code });
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ProviderError, `expected a ProviderError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the call to fail');
}

const initiateMobileMoney = (client: ProviderClient) =>
  client.initiate({ paymentId: 'pay_1', request: mobileMoney, callbackUrl: CALLBACK });

void describe('wire encodings and acknowledgements', () => {
  void it('sends mobile money as a form with the bearer header and maps the ack', async () => {
    const { mm, client, agent } = setup();
    const seen: Captured[] = [];
    mm.intercept({ path: '/api/pay', method: 'POST' }).reply(capture(seen, 200, mmAck));
    const ack = await initiateMobileMoney(client);
    assert.deepEqual(ack, {
      transactionId: '501',
      statusCode: '2',
      message: 'Request sent, pending processing',
      redirectUrl: null,
    });
    const [req] = seen;
    assert.ok(req);
    assert.equal(req.method, 'POST');
    assert.equal(req.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(req.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.deepEqual(
      [...new URLSearchParams(req.body)],
      [
        ['channel', '1'],
        ['phone_number', '233241234567'],
        ['name', 'Ama Mensah'],
        ['amount', '12.5'],
        ['voucher_code', 'V-77'],
        ['callback_url', CALLBACK],
      ],
    );
    agent.assertNoPendingInterceptors();
  });

  void it('omits voucher_code when absent and falls back to the top-level message', async () => {
    const { mm, client } = setup();
    const seen: Captured[] = [];
    mm.intercept({ path: '/api/pay', method: 'POST' }).reply(
      capture(seen, 200, { transaction: { id: '77', status: 2 }, message: 'queued' }),
    );
    const { voucher_code: _omit, ...withoutVoucher } = mobileMoney;
    const ack = await client.initiate({ paymentId: 'pay_1', request: withoutVoucher, callbackUrl: CALLBACK });
    assert.deepEqual(ack, { transactionId: '77', statusCode: '2', message: 'queued', redirectUrl: null });
    assert.equal(new URLSearchParams(seen[0]?.body).has('voucher_code'), false);
  });

  void it('sends a card payment as a form to /api/v2/pay and returns the 3-D Secure redirect', async () => {
    const { base, client } = setup();
    const seen: Captured[] = [];
    base.intercept({ path: '/api/v2/pay', method: 'POST' }).reply(capture(seen, 200, cardAck));
    const ack = await client.initiate({ paymentId: 'pay_2', request: card, callbackUrl: CALLBACK });
    assert.deepEqual(ack, {
      transactionId: '601',
      statusCode: '2',
      message: '',
      redirectUrl: 'https://3ds.test/go/601',
    });
    const req = seen[0];
    assert.ok(req);
    assert.equal(req.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(req.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.ok(req.body.includes('phone_number=%2B233241234567'), 'the plus sign is form-encoded');
    assert.deepEqual(Object.fromEntries(new URLSearchParams(req.body)), {
      channel: '2',
      first_name: 'Ama',
      last_name: 'Mensah',
      email: 'ama@example.com',
      phone_number: '+233241234567',
      card_number: CARD,
      card_cvv: CVV,
      expiry_month: '12',
      expiry_year: '2030',
      amount: '40',
      callback_url: CALLBACK,
      return_url: 'https://merchant.example/return',
    });
  });

  void it('passes on only an http(s) 3-D Secure address', async () => {
    const { base, client } = setup();
    base
      .intercept({ path: '/api/v2/pay', method: 'POST' })
      .reply(200, { transaction: { id: 1, status: '2', medium_details: { threeds_url: 'javascript:alert(1)' } } });
    const ack = await client.initiate({ paymentId: 'pay_2', request: card, callbackUrl: CALLBACK });
    assert.equal(ack.redirectUrl, null);
  });

  void it('sends a bank credit as JSON with our payment id as reference and maps provider_id', async () => {
    const { base, client } = setup();
    const seen: Captured[] = [];
    base
      .intercept({ path: '/api/custom/transactions/partner/credits/banks', method: 'POST' })
      .reply(capture(seen, 200, bankAck));
    const ack = await client.initiate({ paymentId: 'pay_3', request: bank, callbackUrl: CALLBACK });
    assert.deepEqual(ack, {
      transactionId: '7001',
      statusCode: '411',
      message: 'Pending Gateway Response',
      redirectUrl: null,
    });
    const req = seen[0];
    assert.ok(req);
    assert.equal(req.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(req.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(req.body), {
      customerName: 'Kofi Boateng',
      bank_code: 'GH030100',
      amount: 250.1,
      accountNumber: '1234567890',
      description: 'May payout',
      reference: 'pay_3',
      callback_url: CALLBACK,
    });
  });

  void it('keeps a path prefix of the configured base URL', async () => {
    const { base, client } = setup({ baseUrl: `${BASE}/prefix/` });
    base.intercept({ path: '/prefix/api/v2/pay', method: 'POST' }).reply(200, cardAck);
    const ack = await client.initiate({ paymentId: 'pay_2', request: card, callbackUrl: CALLBACK });
    assert.equal(ack.transactionId, '601');
  });
});

void describe('the verdict of a failed exchange', () => {
  for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']) {
    void it(`${code}: not_sent`, async () => {
      const { mm, client } = setup();
      mm.intercept({ path: '/api/pay', method: 'POST' }).replyWithError(codeError(code));
      const err = await failure(initiateMobileMoney(client));
      assert.equal(err.verdict, 'not_sent');
      assert.equal(err.errorCode, code);
      assert.equal(err.attempts, 1);
    });
  }

  void it('connect timeout: not_sent', async () => {
    const { mm, client } = setup();
    mm.intercept({ path: '/api/pay', method: 'POST' }).replyWithError(new errors.ConnectTimeoutError());
    const err = await failure(initiateMobileMoney(client));
    assert.equal(err.verdict, 'not_sent');
    assert.equal(err.errorCode, 'UND_ERR_CONNECT_TIMEOUT');
  });

  const afterSent: [string, () => Error][] = [
    ['headers timeout', () => new errors.HeadersTimeoutError()],
    ['body timeout', () => new errors.BodyTimeoutError()],
    ['ECONNRESET', () => codeError('ECONNRESET', 'read ECONNRESET')],
    ['EPIPE', () => codeError('EPIPE', 'write EPIPE')],
    ['socket closed', () => new errors.SocketError('other side closed')],
    ['client closed', () => new errors.ClientClosedError()],
    ['request aborted', () => new errors.RequestAbortedError()],
    ['abort signal', () => new DOMException('The operation was aborted due to timeout', 'TimeoutError')],
    ['unrecognised error', () => new Error('something odd')],
    ['unrecognised code', () => codeError('ETIMEDOUT')],
  ];
  for (const [name, make] of afterSent) {
    void it(`${name}: unknown and never retried`, async () => {
      const { mm, client, sleeps } = setup({ safeRetries: 3 });
      mm.intercept({ path: '/api/pay', method: 'POST' }).replyWithError(make());
      mm.intercept({ path: '/api/pay', method: 'POST' }).reply(200, mmAck);
      const err = await failure(initiateMobileMoney(client));
      assert.equal(err.verdict, 'unknown');
      assert.equal(err.attempts, 1);
      assert.deepEqual(sleeps, []);
    });
  }

  for (const status of [400, 401, 403, 404, 409, 422]) {
    void it(`HTTP ${status}: rejected`, async () => {
      const { mm, client } = setup({ safeRetries: 3 });
      mm.intercept({ path: '/api/pay', method: 'POST' }).reply(status, { message: `nope ${status}` });
      const err = await failure(initiateMobileMoney(client));
      assert.equal(err.verdict, 'rejected');
      assert.equal(err.httpStatus, status);
      assert.equal(err.providerMessage, `nope ${status}`);
      assert.equal(err.attempts, 1);
    });
  }

  void it('HTTP 400 with an error body: the provider reason and code are kept', async () => {
    const { base, client } = setup();
    base.intercept({ path: '/api/custom/transactions/partner/credits/banks', method: 'POST' }).reply(400, {
      code: 'E_ACCOUNT',
      error: 'invalid account',
      errors: { accountNumber: ['is not a valid account number'] },
    });
    const err = await failure(client.initiate({ paymentId: 'pay_3', request: bank, callbackUrl: CALLBACK }));
    assert.equal(err.verdict, 'rejected');
    assert.equal(err.providerCode, 'E_ACCOUNT');
    assert.equal(err.providerMessage, 'invalid account; accountNumber: is not a valid account number');
    assert.match(err.message, /HTTP 400: invalid account/);
  });

  void it('an error page that is not JSON gives a truncated text reason', async () => {
    const { mm, client } = setup();
    mm.intercept({ path: '/api/pay', method: 'POST' }).reply(
      401,
      `<html><body><h1>Unauthorized</h1>${'x'.repeat(900)}`,
    );
    const err = await failure(initiateMobileMoney(client));
    assert.equal(err.verdict, 'rejected');
    assert.ok(err.providerMessage?.startsWith('Unauthorized'));
    assert.ok((err.providerMessage?.length ?? 0) <= 300);
  });

  for (const status of [500, 502, 503, 504, 302]) {
    void it(`HTTP ${status}: unknown and never retried`, async () => {
      const { mm, client, sleeps } = setup({ safeRetries: 3 });
      mm.intercept({ path: '/api/pay', method: 'POST' }).reply(status, 'upstream trouble');
      mm.intercept({ path: '/api/pay', method: 'POST' }).reply(200, mmAck);
      const err = await failure(initiateMobileMoney(client));
      assert.equal(err.verdict, 'unknown');
      assert.equal(err.httpStatus, status);
      assert.equal(err.attempts, 1);
      assert.deepEqual(sleeps, []);
    });
  }

  for (const [name, body] of [
    ['not JSON', 'OK'],
    ['empty', ''],
    ['JSON without a transaction', '{"status":"error","message":"try later"}'],
    ['transaction without a status', '{"transaction":{"id":5}}'],
    ['unsafe numeric id', '{"transaction":{"id":12345678901234567890,"status":"2"}}'],
  ] as const) {
    void it(`HTTP 200 whose body is ${name}: unknown (it may have been created)`, async () => {
      const { mm, client } = setup({ safeRetries: 3 });
      mm.intercept({ path: '/api/pay', method: 'POST' }).reply(200, body);
      const err = await failure(initiateMobileMoney(client));
      assert.equal(err.verdict, 'unknown');
      assert.equal(err.httpStatus, 200);
      assert.equal(err.attempts, 1);
    });
  }

  void it('HTTP 200 with the ack of another operation type is unknown', async () => {
    const { base, client } = setup();
    base.intercept({ path: '/api/custom/transactions/partner/credits/banks', method: 'POST' }).reply(200, mmAck);
    const err = await failure(client.initiate({ paymentId: 'pay_3', request: bank, callbackUrl: CALLBACK }));
    assert.equal(err.verdict, 'unknown');
  });

  void it('happy-eyeballs attempts are safe only when every attempt never connected', () => {
    const refused = new AggregateError([codeError('ECONNREFUSED'), codeError('ECONNREFUSED')]);
    assert.equal(classifyTransportError(Object.assign(refused, { code: 'ECONNREFUSED' })).verdict, 'not_sent');
    const mixed = new AggregateError([codeError('ECONNREFUSED'), codeError('ETIMEDOUT')]);
    assert.equal(classifyTransportError(Object.assign(mixed, { code: 'ECONNREFUSED' })).verdict, 'unknown');
    const wrapped = new TypeError('fetch failed', { cause: codeError('ENOTFOUND') });
    assert.equal(classifyTransportError(wrapped).verdict, 'not_sent');
    const resetAfterRefused = Object.assign(codeError('ECONNREFUSED'), { cause: codeError('ECONNRESET') });
    assert.equal(classifyTransportError(resetAfterRefused).verdict, 'unknown');
    assert.equal(classifyTransportError('a string').verdict, 'unknown');
  });
});

void describe('retries', () => {
  void it('retries a connection failure exactly safeRetries times with growing backoff, then gives up', async () => {
    const { mm, client, sleeps, agent } = setup({ safeRetries: 2 });
    mm.intercept({ path: '/api/pay', method: 'POST' }).replyWithError(codeError('ECONNREFUSED')).times(3);
    // A fourth attempt would succeed: it must never be made.
    mm.intercept({ path: '/api/pay', method: 'POST' }).reply(200, mmAck);
    const err = await failure(initiateMobileMoney(client));
    assert.equal(err.verdict, 'not_sent');
    assert.equal(err.attempts, 3);
    assert.deepEqual(sleeps, [250, 500]);
    assert.equal(agent.pendingInterceptors().length, 1);
  });

  void it('succeeds when a retry gets through', async () => {
    const { mm, client, sleeps } = setup({ safeRetries: 4 });
    mm.intercept({ path: '/api/pay', method: 'POST' }).replyWithError(codeError('ENOTFOUND')).times(2);
    mm.intercept({ path: '/api/pay', method: 'POST' }).reply(200, mmAck);
    const ack = await initiateMobileMoney(client);
    assert.equal(ack.transactionId, '501');
    assert.equal(sleeps.length, 2);
  });

  void it('does not retry at all with safeRetries 0', async () => {
    const { mm, client, agent } = setup({ safeRetries: 0 });
    mm.intercept({ path: '/api/pay', method: 'POST' }).replyWithError(codeError('ECONNREFUSED'));
    mm.intercept({ path: '/api/pay', method: 'POST' }).reply(200, mmAck);
    const err = await failure(initiateMobileMoney(client));
    assert.equal(err.attempts, 1);
    assert.equal(agent.pendingInterceptors().length, 1);
  });

  void it('HTTP 429: not_sent, honouring Retry-After up to the cap', async () => {
    const { mm, client, sleeps } = setup({ safeRetries: 2 });
    mm.intercept({ path: '/api/pay', method: 'POST' }).reply(
      429,
      { message: 'slow down' },
      {
        headers: { 'retry-after': '2' },
      },
    );
    mm.intercept({ path: '/api/pay', method: 'POST' }).reply(429, '', { headers: { 'retry-after': '3600' } });
    mm.intercept({ path: '/api/pay', method: 'POST' }).reply(200, mmAck);
    const ack = await initiateMobileMoney(client);
    assert.equal(ack.transactionId, '501');
    assert.deepEqual(sleeps, [2000, 5000]);
  });

  void it('HTTP 429 on the last attempt surfaces as not_sent with retryAfterMs', async () => {
    const { mm, client } = setup({ safeRetries: 0 });
    mm.intercept({ path: '/api/pay', method: 'POST' }).reply(
      429,
      { error: 'rate limited' },
      {
        headers: { 'retry-after': '7' },
      },
    );
    const err = await failure(initiateMobileMoney(client));
    assert.equal(err.verdict, 'not_sent');
    assert.equal(err.httpStatus, 429);
    assert.equal(err.retryAfterMs, 7000);
    assert.equal(err.providerMessage, 'rate limited');
  });
});

void describe('secrets never appear in errors', () => {
  const leaks = (err: ProviderError) => {
    const visible = [err.message, err.providerMessage ?? '', err.providerCode ?? '', JSON.stringify(err)].join('\n');
    for (const secret of [TOKEN, CARD, '4111 1111 1111 1111', CVV]) {
      assert.ok(!visible.includes(secret), `error exposes ${secret}: ${visible}`);
    }
    assert.ok(!(err.stack ?? '').includes(TOKEN) && !(err.stack ?? '').includes(CARD));
  };
  const cardCall = (client: ProviderClient) =>
    client.initiate({ paymentId: 'pay_2', request: card, callbackUrl: CALLBACK });

  void it('redacts an echoed request in a 400 body', async () => {
    const { base, client } = setup();
    base.intercept({ path: '/api/v2/pay', method: 'POST' }).reply(400, {
      message: `card ${CARD} with cvv ${CVV} declined for Bearer ${TOKEN}`,
      errors: { card_number: [`4111 1111 1111 1111 is blocked`] },
      code: TOKEN,
    });
    const err = await failure(cardCall(client));
    assert.equal(err.verdict, 'rejected');
    assert.match(err.providerMessage ?? '', /card \[redacted\] with cvv \[redacted\]/);
    leaks(err);
  });

  void it('redacts an echoed request in an unrecognised 2xx body and in 5xx text', async () => {
    const { base, client } = setup();
    base.intercept({ path: '/api/v2/pay', method: 'POST' }).reply(200, { message: `echo ${CARD} ${CVV} ${TOKEN}` });
    leaks(await failure(cardCall(client)));
    base.intercept({ path: '/api/v2/pay', method: 'POST' }).reply(500, `internal error card_number=${CARD}&cvv=${CVV}`);
    leaks(await failure(cardCall(client)));
  });

  void it('redacts card data echoed in an acknowledgement message', async () => {
    const { base, client } = setup();
    base
      .intercept({ path: '/api/v2/pay', method: 'POST' })
      .reply(200, { transaction: { id: 1, status: '2', status_message: `charging ${CARD} cvv ${CVV}` } });
    const ack = await cardCall(client);
    assert.equal(ack.message, 'charging [redacted] cvv [redacted]');
  });

  void it('redacts transport error messages', async () => {
    const { base, client } = setup();
    base
      .intercept({ path: '/api/v2/pay', method: 'POST' })
      .replyWithError(codeError('ECONNRESET', `reset while sending ${CARD} with ${TOKEN}`));
    leaks(await failure(cardCall(client)));
  });
});

void describe('status query', () => {
  const statusUrl = `${BASE}/api/transactions/{transaction_id}`;
  const statusByReferenceUrl = `${BASE}/api/transactions?reference={reference}`;

  void it('is not configured: null and canCheckStatus false', async () => {
    const { client } = setup();
    assert.equal(client.canCheckStatus, false);
    assert.equal(await client.checkStatus({ transactionId: '501', reference: 'pay_1' }), null);
  });

  void it('asks by transaction id with the bearer header and maps the code', async () => {
    const { base, client } = setup({ statusUrl });
    assert.equal(client.canCheckStatus, true);
    const seen: Captured[] = [];
    base
      .intercept({ path: '/api/transactions/501', method: 'GET' })
      .reply(capture(seen, 200, { transaction_id: 501, status: '1', message: 'Paid' }));
    const check = await client.checkStatus({ transactionId: '501', reference: null });
    assert.deepEqual(check, {
      state: 'succeeded',
      transactionId: '501',
      statusCode: '1',
      message: 'Paid',
      amount: null,
    });
    assert.equal(seen[0]?.headers.authorization, `Bearer ${TOKEN}`);
  });

  void it('accepts code or status_code and keeps unknown codes unknown', async () => {
    const { base, client } = setup({ statusUrl });
    base.intercept({ path: '/api/transactions/1', method: 'GET' }).reply(200, { code: '0' });
    base.intercept({ path: '/api/transactions/2', method: 'GET' }).reply(200, { data: { status_code: 2 } });
    base.intercept({ path: '/api/transactions/3', method: 'GET' }).reply(200, { status: 'weird' });
    assert.equal((await client.checkStatus({ transactionId: '1', reference: null }))?.state, 'failed');
    assert.equal((await client.checkStatus({ transactionId: '2', reference: null }))?.state, 'pending');
    assert.equal((await client.checkStatus({ transactionId: '3', reference: null }))?.state, 'unknown');
  });

  void it('404 means not_found', async () => {
    const { base, client } = setup({ statusUrl });
    base.intercept({ path: '/api/transactions/501', method: 'GET' }).reply(404, { message: 'no such transaction' });
    assert.deepEqual(await client.checkStatus({ transactionId: '501', reference: null }), {
      state: 'not_found',
      transactionId: '501',
      statusCode: null,
      message: 'no such transaction',
      amount: null,
    });
  });

  void it('asks by reference, URL-encoded, when no transaction id is known', async () => {
    const { base, client } = setup({ statusUrl, statusByReferenceUrl });
    const seen: Captured[] = [];
    base
      .intercept({ path: () => true, method: 'GET' })
      .reply(capture(seen, 200, { transaction_id: '7001', status: '33' }));
    const check = await client.checkStatus({ transactionId: null, reference: 'pay/1 &x' });
    assert.equal(seen[0]?.path, '/api/transactions?reference=pay%2F1%20%26x');
    assert.deepEqual(check, {
      state: 'unknown',
      transactionId: '7001',
      statusCode: '33',
      message: null,
      amount: null,
    });
  });

  void it('a relative template is resolved under the base URL; an empty list is not_found', async () => {
    const { base, client } = setup({ statusByReferenceUrl: '/api/transactions?reference={reference}' });
    base.intercept({ path: '/api/transactions?reference=pay_3', method: 'GET' }).reply(200, []);
    assert.equal((await client.checkStatus({ transactionId: '7001', reference: 'pay_3' }))?.state, 'not_found');
  });

  void it('returns null when it knows only what is not configured', async () => {
    const { client } = setup({ statusByReferenceUrl });
    assert.equal(await client.checkStatus({ transactionId: '501', reference: null }), null);
  });

  void it('untrustworthy answers and failures throw ProviderError', async () => {
    const { base, client } = setup({ statusUrl });
    base.intercept({ path: '/api/transactions/1', method: 'GET' }).reply(200, { transaction_id: '2', status: '1' });
    base.intercept({ path: '/api/transactions/1', method: 'GET' }).reply(200, [{ status: '1' }, { status: '0' }]);
    base.intercept({ path: '/api/transactions/1', method: 'GET' }).reply(200, { message: 'no status here' });
    base.intercept({ path: '/api/transactions/1', method: 'GET' }).reply(503, 'busy');
    base.intercept({ path: '/api/transactions/1', method: 'GET' }).reply(401, { message: 'bad token' });
    const query = { transactionId: '1', reference: null };
    assert.equal((await failure(client.checkStatus(query))).verdict, 'unknown');
    assert.equal((await failure(client.checkStatus(query))).verdict, 'unknown');
    assert.equal((await failure(client.checkStatus(query))).verdict, 'unknown');
    assert.equal((await failure(client.checkStatus(query))).verdict, 'unknown');
    const rejected = await failure(client.checkStatus(query));
    assert.equal(rejected.verdict, 'rejected');
    assert.equal(rejected.providerMessage, 'bad token');
  });

  void it('rejects a template without its placeholder at creation', () => {
    assert.throws(
      () => createProviderClient({ ...config, statusUrl: `${BASE}/api/transactions` }),
      /statusUrl must be an http\(s\) URL template containing \{transaction_id\}/,
    );
    assert.throws(() => createProviderClient({ ...config, token: 'bad\ntoken' }), /token/);
  });
});

void describe('over real sockets (own keep-alive Agent)', () => {
  async function listen(server: Server): Promise<string> {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  async function stop(server: Server): Promise<void> {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  const real = (url: string, overrides: Partial<ProviderConfig> = {}) =>
    createProviderClient(
      { ...config, baseUrl: url, mobileMoneyBaseUrl: url, requestTimeoutMs: 300, ...overrides },
      { sleep: () => Promise.resolve() },
    );

  void it('a closed port is not_sent and retried', async () => {
    const server = createServer();
    const url = await listen(server);
    await stop(server);
    const client = real(url, { safeRetries: 1 });
    const err = await failure(initiateMobileMoney(client));
    assert.equal(err.verdict, 'not_sent');
    assert.equal(err.errorCode, 'ECONNREFUSED');
    assert.equal(err.attempts, 2);
    await client.close();
  });

  void it('no answer in time is unknown (headers timeout) and not retried', async () => {
    let received = 0;
    const server = createServer(() => {
      received++;
    });
    const url = await listen(server);
    const client = real(url, { safeRetries: 3 });
    const err = await failure(initiateMobileMoney(client));
    assert.equal(err.verdict, 'unknown');
    assert.equal(err.errorCode, 'UND_ERR_HEADERS_TIMEOUT');
    assert.equal(received, 1);
    await client.close();
    await stop(server);
  });

  void it('a connection dropped after the request arrived is unknown', async () => {
    const server = createServer((req) => req.socket.destroy());
    const url = await listen(server);
    const client = real(url, { safeRetries: 3 });
    const err = await failure(initiateMobileMoney(client));
    assert.equal(err.verdict, 'unknown');
    assert.equal(err.attempts, 1);
    await client.close();
    await stop(server);
  });

  void it('a body that stalls after a 200 is unknown', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"transaction":');
    });
    const url = await listen(server);
    const client = real(url);
    const err = await failure(initiateMobileMoney(client));
    assert.equal(err.verdict, 'unknown');
    assert.equal(err.errorCode, 'UND_ERR_BODY_TIMEOUT');
    await client.close();
    await stop(server);
  });

  void it('reuses one keep-alive connection and sends the bearer header', async () => {
    let connections = 0;
    const auth: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      auth.push(req.headers.authorization);
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(mmAck));
      });
    });
    server.on('connection', () => connections++);
    const url = await listen(server);
    const client = real(url);
    for (let i = 0; i < 5; i++) await initiateMobileMoney(client);
    // undici may open a second connection while the first is being released; it must not open one per request.
    assert.ok(connections <= 2, `${connections} connections for 5 requests`);
    assert.deepEqual(auth, Array<string>(5).fill(`Bearer ${TOKEN}`));
    await client.close();
    await stop(server);
  });
});
