import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../src/local/eventually';
import { createSandbox, type Sandbox, type SandboxOptions } from '../src/sandbox/sandbox-app';
import { sandboxOptionsFromEnv } from '../src/sandbox/env';

const TOKEN = 'test-token';
const DELAY_MS = 50;
const SLOW_MS = 300;
const AUTH = { authorization: `Bearer ${TOKEN}` };

interface ReceivedCallback {
  path: string;
  body: Record<string, unknown>;
}

/** A tiny callback receiver; paths under /fail-N/ answer 503 to their first N deliveries. */
class Receiver {
  readonly calls: ReceivedCallback[] = [];
  private readonly failuresSeen = new Map<string, number>();
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const path = request.url ?? '';
        const failures = Number(/\/fail-(\d+)\//.exec(path)?.[1] ?? 0);
        const seen = this.failuresSeen.get(path) ?? 0;
        if (seen < failures) {
          this.failuresSeen.set(path, seen + 1);
          response.writeHead(503).end();
          return;
        }
        this.calls.push({ path, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** A fresh callback URL whose deliveries can be told apart from every other test's. */
  callbackUrl(name: string): string {
    return `${this.url}/cb/${name}`;
  }

  callsTo(url: string): Record<string, unknown>[] {
    const path = new URL(url).pathname;
    return this.calls.filter((call) => call.path === path).map((call) => call.body);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve, reject) => this.server?.close((error) => (error ? reject(error) : resolve())));
  }
}

interface Answer {
  status: number;
  body: unknown;
  headers: Headers;
}

async function call(
  base: string,
  path: string,
  init: { method?: string; form?: Record<string, string>; json?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...AUTH, ...init.headers };
  let body: string | URLSearchParams | undefined;
  if (init.form) body = new URLSearchParams(init.form);
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${base}${path}`, {
    method: init.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body,
    redirect: 'manual',
  });
  const text = await response.text();
  const isJson = response.headers.get('content-type')?.includes('application/json') ?? false;
  return { status: response.status, body: isJson ? (JSON.parse(text) as unknown) : text, headers: response.headers };
}

function record(value: unknown): Record<string, unknown> {
  assert.equal(typeof value, 'object');
  assert.notEqual(value, null);
  return value as Record<string, unknown>;
}

/** A logged request body, or an empty object when none was parsed. */
function loggedBody(entry: Record<string, unknown> | undefined): Record<string, unknown> {
  const body = entry?.body;
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

type Probed<T> = T | undefined | false;

async function waitFor<T>(probe: () => Probed<T> | Promise<Probed<T>>, what: string, timeoutMs = 3000): Promise<T> {
  return eventually(
    async () => {
      const value = await probe();
      if (value === undefined || value === false) throw new Error(`no ${what} yet`);
      return value;
    },
    { timeoutMs, intervalMs: 10, what },
  );
}

function mobileMoneyForm(phone: string, callbackUrl?: string): Record<string, string> {
  const form: Record<string, string> = { channel: '1', phone_number: phone, name: 'Ama Mensah', amount: '12.50' };
  if (callbackUrl) form.callback_url = callbackUrl;
  return form;
}

function cardForm(phone: string, callbackUrl: string): Record<string, string> {
  return {
    channel: '1',
    first_name: 'Ama',
    last_name: 'Mensah',
    email: 'ama@example.com',
    phone_number: phone,
    card_number: '4111111111111111',
    card_cvv: '123',
    expiry_month: '12',
    expiry_year: '2030',
    amount: '40',
    callback_url: callbackUrl,
    return_url: 'https://merchant.example/return?order=1002',
  };
}

function bankJson(account: string, reference: string, callbackUrl?: string): Record<string, unknown> {
  return {
    customerName: 'Kofi Boateng',
    bank_code: 'GH030100',
    amount: 250,
    accountNumber: account,
    description: 'May payout',
    reference,
    ...(callbackUrl ? { callback_url: callbackUrl } : {}),
  };
}

const MOBILE_MONEY = '/api/pay';
const CARD = '/api/v2/pay';
const BANK = '/api/custom/transactions/partner/credits/banks';

function mobileMoneyId(answer: Answer): number {
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return record(record(answer.body).transaction).id as number;
}

async function sandboxTransactions(base: string): Promise<Record<string, unknown>[]> {
  const answer = await call(base, '/sandbox/transactions');
  assert.ok(Array.isArray(answer.body));
  return answer.body as Record<string, unknown>[];
}

async function sandboxRequests(base: string): Promise<Record<string, unknown>[]> {
  const answer = await call(base, '/sandbox/requests');
  assert.ok(Array.isArray(answer.body));
  return answer.body as Record<string, unknown>[];
}

async function startSandbox(overrides: Partial<SandboxOptions> = {}): Promise<Sandbox> {
  return createSandbox({ token: TOKEN, callbackDelayMs: DELAY_MS, slowResponseMs: SLOW_MS, port: 0, ...overrides });
}

const receiver = new Receiver();
before(() => receiver.start());
after(() => receiver.close());

void describe('sandbox provider', () => {
  let sandbox: Sandbox;
  let base = '';
  before(async () => {
    sandbox = await startSandbox();
    base = sandbox.url;
  });
  after(() => sandbox.close());

  void describe('bearer check', () => {
    for (const [path, method] of [
      [MOBILE_MONEY, 'POST'],
      [CARD, 'POST'],
      [BANK, 'POST'],
      ['/api/banks', 'GET'],
      ['/api/transactions/1001', 'GET'],
    ] as const) {
      void test(`${method} ${path} answers 401 without or with a wrong token`, async () => {
        for (const headers of [{ authorization: '' }, { authorization: 'Bearer nope' }, { authorization: TOKEN }]) {
          const answer = await call(base, path, { method, headers });
          assert.equal(answer.status, 401);
          assert.deepEqual(answer.body, { message: 'Unauthenticated.' });
        }
      });
    }
  });

  void describe('request encodings', () => {
    void test('mobile money and card take only form bodies', async () => {
      for (const path of [MOBILE_MONEY, CARD]) {
        const json = await call(base, path, { json: mobileMoneyForm('233241234567') });
        assert.equal(json.status, 415);
        assert.equal(record(json.body).code, 'E_UNSUPPORTED_MEDIA_TYPE');
        const text = await call(base, path, { method: 'POST', headers: { 'content-type': 'text/plain' } });
        assert.equal(text.status, 415);
      }
    });

    void test('bank credit takes only JSON bodies', async () => {
      const form = await call(base, BANK, { form: { customerName: 'Kofi' } });
      assert.equal(form.status, 415);
      assert.deepEqual(form.body, {
        status: 'error',
        code: 'E_UNSUPPORTED_MEDIA_TYPE',
        message: 'The request body must be application/json.',
      });
    });

    void test('malformed JSON is a 400 error body', async () => {
      const answer = await call(base, BANK, { method: 'POST', headers: { 'content-type': 'application/json' } });
      assert.equal(answer.status, 400);
      assert.equal(record(answer.body).status, 'error');
    });
  });

  void describe('validation', () => {
    void test('missing mobile money fields are each named', async () => {
      const answer = await call(base, MOBILE_MONEY, { form: { channel: '1' } });
      assert.equal(answer.status, 400);
      const body = record(answer.body);
      assert.equal(body.status, 'error');
      assert.equal(body.code, 'E_VALIDATION');
      assert.match(String(body.message), /phone_number/);
      assert.deepEqual(Object.keys(record(body.errors)).sort(), ['amount', 'name', 'phone_number']);
    });

    void test('mobile money phone numbers are digits without a plus, amounts positive', async () => {
      const answer = await call(base, MOBILE_MONEY, {
        form: { ...mobileMoneyForm('+233241234567'), amount: '-1', callback_url: 'not a url' },
      });
      assert.equal(answer.status, 400);
      assert.deepEqual(Object.keys(record(record(answer.body).errors)).sort(), [
        'amount',
        'callback_url',
        'phone_number',
      ]);
    });

    void test('card fields follow the spec', async () => {
      const form = {
        ...cardForm('233241234567', receiver.callbackUrl('card-invalid')),
        card_number: '4111111111111112',
        card_cvv: '12',
        email: 'nope',
        expiry_month: '13',
      };
      const answer = await call(base, CARD, { form });
      assert.equal(answer.status, 400);
      assert.deepEqual(Object.keys(record(record(answer.body).errors)).sort(), [
        'card_cvv',
        'card_number',
        'email',
        'expiry_month',
        'phone_number',
      ]);
    });

    void test('an unknown bank code is a 400', async () => {
      const answer = await call(base, BANK, { json: { ...bankJson('1234567890', 'bad-bank'), bank_code: 'XX000000' } });
      assert.equal(answer.status, 400);
      assert.deepEqual(Object.keys(record(record(answer.body).errors)), ['bank_code']);
    });

    void test('a bank credit body must be an object with every field', async () => {
      const answer = await call(base, BANK, { json: { bank_code: 'GH030100' } });
      assert.equal(answer.status, 400);
      assert.deepEqual(Object.keys(record(record(answer.body).errors)).sort(), [
        'accountNumber',
        'amount',
        'customerName',
        'description',
        'reference',
      ]);
      const array = await call(base, BANK, { json: [1] });
      assert.equal(array.status, 400);
    });
  });

  void describe('response shapes', () => {
    void test('mobile money acknowledgement', async () => {
      const callbackUrl = receiver.callbackUrl('shape-mm');
      const answer = await call(base, MOBILE_MONEY, {
        form: { ...mobileMoneyForm('233241234567', callbackUrl), voucher_code: 'V123' },
      });
      assert.equal(answer.status, 200);
      const body = record(answer.body);
      assert.equal(body.type, 'success');
      assert.equal(typeof body.message, 'string');
      const transaction = record(body.transaction);
      assert.equal(typeof transaction.id, 'number');
      assert.equal(typeof transaction.type, 'string');
      assert.equal(typeof transaction.merchant_id, 'number');
      assert.equal(typeof transaction.reference, 'string');
      assert.equal(typeof transaction.medium, 'string');
      assert.equal(transaction.amount, 12.5);
      assert.equal(typeof transaction.amount_details, 'string');
      assert.equal(transaction.status, '2');
      assert.equal(typeof transaction.status_message, 'string');
      const sender = record(transaction.sender_details);
      assert.equal(typeof sender.type, 'number');
      assert.equal(sender.no, '233241234567');
      assert.equal(sender.name, 'Ama Mensah');
      assert.ok('token' in sender);
      const recipient = record(transaction.recipient_details);
      assert.equal(typeof recipient.type, 'number');
      assert.equal(typeof recipient.no, 'number');
      assert.equal(typeof recipient.name, 'string');
      assert.equal(typeof transaction.description, 'string');
      assert.equal(typeof transaction.extra, 'string');
      assert.equal(typeof transaction.api, 'number');
      assert.equal(transaction.callback_url, callbackUrl);
      assert.match(String(transaction.created_at), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      assert.match(String(transaction.updated_at), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    });

    void test('card acknowledgement', async () => {
      const answer = await call(base, CARD, { form: cardForm('+233241234567', receiver.callbackUrl('shape-card')) });
      assert.equal(answer.status, 200);
      const body = record(answer.body);
      assert.deepEqual(Object.keys(body), ['transaction']);
      const transaction = record(body.transaction);
      assert.equal(typeof transaction.id, 'number');
      assert.equal(typeof transaction.merchant_id, 'string');
      assert.equal(typeof transaction.type, 'string');
      assert.equal(transaction.medium, 'VISA');
      assert.equal(typeof transaction.reference, 'string');
      assert.equal(typeof transaction.provider_id, 'number');
      assert.notEqual(transaction.provider_id, transaction.id);
      assert.equal(transaction.amount, 40);
      const details = record(transaction.amount_details);
      for (const key of ['cc', 'send', 'receive', 'send_local']) assert.equal(typeof details[key], 'number', key);
      for (const key of ['rate', 'send_currency', 'receive_currency']) assert.equal(typeof details[key], 'string', key);
      assert.equal(record(transaction.medium_details).threeds_url, `${base}/sandbox/3ds/${String(transaction.id)}`);
      assert.equal(transaction.status, '2');
    });

    void test('bank credit acknowledgement', async () => {
      const answer = await call(base, BANK, { json: bankJson('1234567890', 'shape-bank') });
      assert.equal(answer.status, 200);
      const body = record(answer.body);
      assert.deepEqual(Object.keys(body).sort(), ['amount', 'code', 'message', 'provider_id']);
      assert.equal(body.code, '411');
      assert.equal(typeof body.provider_id, 'number');
      assert.equal(body.amount, '250.00');
      assert.equal(body.message, 'Pending Gateway Response');
    });

    void test('ids increase', async () => {
      const first = mobileMoneyId(await call(base, MOBILE_MONEY, { form: mobileMoneyForm('233241234533') }));
      const second = mobileMoneyId(await call(base, MOBILE_MONEY, { form: mobileMoneyForm('233241234533') }));
      assert.ok(second > first);
    });
  });

  void describe('mobile money scenarios', () => {
    void test('any other digits: pending, then a success callback and status', async () => {
      const callbackUrl = receiver.callbackUrl('mm-success');
      const answer = await call(base, MOBILE_MONEY, { form: mobileMoneyForm('233241234567', callbackUrl) });
      const transaction = record(record(answer.body).transaction);
      const id = transaction.id as number;
      const pending = await call(base, `/api/transactions/${id}`);
      assert.deepEqual(pending.body, {
        transaction_id: id,
        status: '2',
        message: 'Request sent, pending processing',
        amount: 12.5,
      });
      const [callback] = await waitFor(
        () => receiver.callsTo(callbackUrl).length === 1 && receiver.callsTo(callbackUrl),
        'callback',
      );
      assert.deepEqual(callback, {
        transaction_id: id,
        reference: transaction.reference,
        status: '1',
        message: 'Transaction successful',
        amount: 12.5,
      });
      const byId = await call(base, `/api/transactions/${id}`);
      assert.deepEqual(byId.body, { transaction_id: id, status: '1', message: 'Transaction successful', amount: 12.5 });
      const byReference = await call(
        base,
        `/api/transactions?reference=${encodeURIComponent(String(transaction.reference))}`,
      );
      assert.deepEqual(byReference.body, byId.body);
    });

    void test('11: calls back failure', async () => {
      const callbackUrl = receiver.callbackUrl('mm-11');
      const id = mobileMoneyId(await call(base, MOBILE_MONEY, { form: mobileMoneyForm('233241234511', callbackUrl) }));
      const [callback] = await waitFor(
        () => receiver.callsTo(callbackUrl).length > 0 && receiver.callsTo(callbackUrl),
        'callback',
      );
      assert.equal(record(callback).status, '0');
      assert.equal(record((await call(base, `/api/transactions/${id}`)).body).status, '0');
    });

    void test('22: never calls back, status query answers success', async () => {
      const callbackUrl = receiver.callbackUrl('mm-22');
      const id = mobileMoneyId(await call(base, MOBILE_MONEY, { form: mobileMoneyForm('233241234522', callbackUrl) }));
      await sleep(DELAY_MS * 6);
      assert.equal(receiver.callsTo(callbackUrl).length, 0);
      assert.equal(record((await call(base, `/api/transactions/${id}`)).body).status, '1');
    });

    void test('33: never calls back, status query stays pending', async () => {
      const callbackUrl = receiver.callbackUrl('mm-33');
      const id = mobileMoneyId(await call(base, MOBILE_MONEY, { form: mobileMoneyForm('233241234533', callbackUrl) }));
      await sleep(DELAY_MS * 6);
      assert.equal(receiver.callsTo(callbackUrl).length, 0);
      assert.equal(record((await call(base, `/api/transactions/${id}`)).body).status, '2');
    });

    void test('44: HTTP 500, nothing created, request recorded', async () => {
      const callbackUrl = receiver.callbackUrl('mm-44');
      const answer = await call(base, MOBILE_MONEY, { form: mobileMoneyForm('233241234544', callbackUrl) });
      assert.equal(answer.status, 500);
      assert.deepEqual(answer.body, { status: 'error', code: 'E_INTERNAL', message: 'Internal server error' });
      const transactions = await sandboxTransactions(base);
      assert.ok(!transactions.some((transaction) => transaction.callback_url === callbackUrl));
      const requests = await sandboxRequests(base);
      const logged = requests.find((entry) => loggedBody(entry).callback_url === callbackUrl);
      assert.ok(logged);
      assert.equal(logged.response_status, 500);
      assert.equal(logged.path, MOBILE_MONEY);
      assert.equal(logged.transaction_id, null);
    });

    void test('55: creates the transaction and calls back, but answers only after slowResponseMs', async () => {
      const callbackUrl = receiver.callbackUrl('mm-55');
      const started = Date.now();
      const pending = call(base, MOBILE_MONEY, { form: mobileMoneyForm('233241234555', callbackUrl) });
      await waitFor(() => receiver.callsTo(callbackUrl).length > 0, 'callback before the answer');
      const requests = await sandboxRequests(base);
      const logged = requests.find((entry) => loggedBody(entry).callback_url === callbackUrl);
      assert.equal(logged?.response_status, null);
      const transactions = await sandboxTransactions(base);
      const created = transactions.find((transaction) => transaction.callback_url === callbackUrl);
      assert.equal(created?.scenario, 'slow_response');
      const answer = await pending;
      assert.equal(answer.status, 200);
      assert.ok(Date.now() - started >= SLOW_MS - 5);
      assert.equal(record(record(answer.body).transaction).id, created?.transaction_id);
    });

    void test('66: calls back success three times', async () => {
      const callbackUrl = receiver.callbackUrl('mm-66');
      mobileMoneyId(await call(base, MOBILE_MONEY, { form: mobileMoneyForm('233241234566', callbackUrl) }));
      const calls = await waitFor(
        () => receiver.callsTo(callbackUrl).length >= 3 && receiver.callsTo(callbackUrl),
        '3',
      );
      await sleep(DELAY_MS * 3);
      assert.equal(receiver.callsTo(callbackUrl).length, 3);
      assert.deepEqual(
        calls.map((callback) => callback.status),
        ['1', '1', '1'],
      );
    });

    void test('77: calls back success, then failure', async () => {
      const callbackUrl = receiver.callbackUrl('mm-77');
      const id = mobileMoneyId(await call(base, MOBILE_MONEY, { form: mobileMoneyForm('233241234577', callbackUrl) }));
      const calls = await waitFor(
        () => receiver.callsTo(callbackUrl).length >= 2 && receiver.callsTo(callbackUrl),
        '2',
      );
      assert.deepEqual(
        calls.map((callback) => callback.status),
        ['1', '0'],
      );
      assert.equal(record((await call(base, `/api/transactions/${id}`)).body).status, '0');
    });

    void test('88: HTTP 400 with a clear message, nothing created', async () => {
      const callbackUrl = receiver.callbackUrl('mm-88');
      const answer = await call(base, MOBILE_MONEY, { form: mobileMoneyForm('233241234588', callbackUrl) });
      assert.equal(answer.status, 400);
      assert.deepEqual(answer.body, {
        status: 'error',
        code: 'E_INSUFFICIENT_FUNDS',
        message: 'Insufficient funds in wallet',
      });
      const transactions = await sandboxTransactions(base);
      assert.ok(!transactions.some((transaction) => transaction.callback_url === callbackUrl));
    });

    void test('99: calls back success before answering', async () => {
      const callbackUrl = receiver.callbackUrl('mm-99');
      const answer = await call(base, MOBILE_MONEY, { form: mobileMoneyForm('233241234599', callbackUrl) });
      const calls = receiver.callsTo(callbackUrl);
      assert.equal(calls.length, 1);
      assert.equal(calls[0]?.status, '1');
      assert.equal(calls[0]?.transaction_id, mobileMoneyId(answer));
      assert.equal(record(record(answer.body).transaction).status, '2');
    });

    void test('no callback_url: the status still settles', async () => {
      const id = mobileMoneyId(await call(base, MOBILE_MONEY, { form: mobileMoneyForm('233241234567') }));
      await waitFor(async () => record((await call(base, `/api/transactions/${id}`)).body).status === '1', 'status');
    });

    void test('failed deliveries are retried', async () => {
      const callbackUrl = receiver.callbackUrl('fail-2/retry');
      const id = mobileMoneyId(await call(base, MOBILE_MONEY, { form: mobileMoneyForm('233241234567', callbackUrl) }));
      await waitFor(() => receiver.callsTo(callbackUrl).length === 1, 'delivery after two 503s');
      const transactions = await sandboxTransactions(base);
      const callbacks = transactions.find((transaction) => transaction.transaction_id === id)?.callbacks;
      assert.ok(Array.isArray(callbacks));
      const [first] = callbacks as Record<string, unknown>[];
      assert.equal(first?.state, 'delivered');
      assert.equal(first?.attempts, 3);
    });
  });

  void describe('card scenarios', () => {
    void test('calls back only once 3-D Secure is approved, and redirects to return_url', async () => {
      const callbackUrl = receiver.callbackUrl('card-approve');
      const form = cardForm('+233241234567', callbackUrl);
      const answer = await call(base, CARD, { form });
      const transaction = record(record(answer.body).transaction);
      const threedsUrl = String(record(transaction.medium_details).threeds_url);
      const page = await call(threedsUrl, '');
      assert.equal(page.status, 200);
      assert.match(String(page.body), /<form method="post" action="\/sandbox\/3ds\/\d+\/approve">/);
      assert.match(String(page.body), /<form method="post" action="\/sandbox\/3ds\/\d+\/decline">/);
      assert.match(String(page.body), /1111/);
      await sleep(DELAY_MS * 4);
      assert.equal(receiver.callsTo(callbackUrl).length, 0);
      const approved = await call(threedsUrl, '/approve', { method: 'POST' });
      assert.equal(approved.status, 303);
      assert.equal(approved.headers.get('location'), form.return_url);
      const [callback] = await waitFor(
        () => receiver.callsTo(callbackUrl).length > 0 && receiver.callsTo(callbackUrl),
        'cb',
      );
      assert.equal(record(callback).status, '1');
      assert.equal(record(callback).transaction_id, transaction.id);
      const status = await call(base, `/api/transactions/${String(transaction.id)}`);
      assert.equal(record(status.body).status, '1');
      const again = await call(threedsUrl, '/approve', { method: 'POST' });
      assert.equal(again.status, 303);
      await sleep(DELAY_MS * 3);
      assert.equal(receiver.callsTo(callbackUrl).length, 1);
    });

    void test('a declined 3-D Secure step calls back failure', async () => {
      const callbackUrl = receiver.callbackUrl('card-decline');
      const answer = await call(base, CARD, { form: cardForm('+233241234567', callbackUrl) });
      const transaction = record(record(answer.body).transaction);
      const declined = await call(base, `/sandbox/3ds/${String(transaction.id)}/decline`, { method: 'POST' });
      assert.equal(declined.status, 303);
      const [callback] = await waitFor(
        () => receiver.callsTo(callbackUrl).length > 0 && receiver.callsTo(callbackUrl),
        'cb',
      );
      assert.equal(record(callback).status, '0');
    });

    void test('11: calls back failure after approval', async () => {
      const callbackUrl = receiver.callbackUrl('card-11');
      const answer = await call(base, CARD, { form: cardForm('+233241234511', callbackUrl) });
      const id = String(record(record(answer.body).transaction).id);
      await call(base, `/sandbox/3ds/${id}/approve`, { method: 'POST' });
      const [callback] = await waitFor(
        () => receiver.callsTo(callbackUrl).length > 0 && receiver.callsTo(callbackUrl),
        'cb',
      );
      assert.equal(record(callback).status, '0');
    });

    void test('44 and 88: no transaction, 500 and 400', async () => {
      const failing = await call(base, CARD, { form: cardForm('+233241234544', receiver.callbackUrl('card-44')) });
      assert.equal(failing.status, 500);
      const declined = await call(base, CARD, { form: cardForm('+233241234588', receiver.callbackUrl('card-88')) });
      assert.equal(declined.status, 400);
      assert.deepEqual(declined.body, { status: 'error', code: 'E_CARD_DECLINED', message: 'Card declined by issuer' });
    });

    void test('99: calls back success before answering, without 3-D Secure', async () => {
      const callbackUrl = receiver.callbackUrl('card-99');
      const answer = await call(base, CARD, { form: cardForm('+233241234599', callbackUrl) });
      assert.equal(answer.status, 200);
      assert.deepEqual(
        receiver.callsTo(callbackUrl).map((callback) => callback.status),
        ['1'],
      );
    });

    void test('the 3-D Secure page of an unknown transaction is a 404', async () => {
      const page = await call(base, '/sandbox/3ds/999999');
      assert.equal(page.status, 404);
      const approve = await call(base, '/sandbox/3ds/999999/approve', { method: 'POST' });
      assert.equal(approve.status, 404);
    });

    void test('the request log keeps only the last four card digits and no CVV', async () => {
      const callbackUrl = receiver.callbackUrl('card-log');
      await call(base, CARD, { form: cardForm('+233241234533', callbackUrl) });
      const logged = (await sandboxRequests(base)).find((entry) => loggedBody(entry).callback_url === callbackUrl);
      const body = loggedBody(logged);
      assert.equal(body.card_number, '1111');
      assert.ok(!('card_cvv' in body));
      assert.equal(logged?.response_status, 200);
      assert.equal(logged?.content_type, 'application/x-www-form-urlencoded;charset=UTF-8');
    });
  });

  void describe('bank credit scenarios', () => {
    void test('success callback with the caller reference and provider_id; query by reference', async () => {
      const callbackUrl = receiver.callbackUrl('bank-success');
      const answer = await call(base, BANK, { json: bankJson('1234567890', 'payout-success', callbackUrl) });
      const providerId = record(answer.body).provider_id;
      const [callback] = await waitFor(
        () => receiver.callsTo(callbackUrl).length > 0 && receiver.callsTo(callbackUrl),
        'cb',
      );
      assert.deepEqual(callback, {
        transaction_id: providerId,
        reference: 'payout-success',
        status: '1',
        message: 'Transaction successful',
        amount: 250,
      });
      const byReference = await call(base, '/api/transactions?reference=payout-success');
      assert.deepEqual(byReference.body, {
        transaction_id: providerId,
        status: '1',
        message: 'Transaction successful',
        amount: 250,
      });
    });

    void test('11: calls back failure', async () => {
      const callbackUrl = receiver.callbackUrl('bank-11');
      await call(base, BANK, { json: bankJson('1234567811', 'payout-11', callbackUrl) });
      const [callback] = await waitFor(
        () => receiver.callsTo(callbackUrl).length > 0 && receiver.callsTo(callbackUrl),
        'cb',
      );
      assert.equal(record(callback).status, '0');
    });

    void test('88: account closed; 44: HTTP 500', async () => {
      const closed = await call(base, BANK, { json: bankJson('1234567888', 'payout-88') });
      assert.equal(closed.status, 400);
      assert.deepEqual(closed.body, { status: 'error', code: 'E_ACCOUNT_CLOSED', message: 'Account closed' });
      const failing = await call(base, BANK, { json: bankJson('1234567844', 'payout-44') });
      assert.equal(failing.status, 500);
      assert.equal((await call(base, '/api/transactions?reference=payout-44')).status, 404);
    });

    void test('amounts may come as numeric strings', async () => {
      const answer = await call(base, BANK, { json: { ...bankJson('1234567833', 'payout-string'), amount: '99.90' } });
      assert.equal(answer.status, 200);
      assert.equal(record(answer.body).amount, '99.90');
    });
  });

  void describe('extensions', () => {
    void test('/api/banks lists the supported banks', async () => {
      const answer = await call(base, '/api/banks');
      assert.equal(answer.status, 200);
      assert.ok(Array.isArray(answer.body));
      const banks = answer.body as Record<string, unknown>[];
      assert.ok(banks.length >= 3);
      assert.ok(banks.some((bank) => bank.code === 'GH030100' && typeof bank.name === 'string'));
    });

    void test('status query: unknown id or reference is a 404; a missing reference a 400', async () => {
      assert.deepEqual((await call(base, '/api/transactions/424242')).body, { message: 'Transaction not found' });
      assert.equal((await call(base, '/api/transactions/abc')).status, 404);
      assert.equal((await call(base, '/api/transactions?reference=nope')).status, 404);
      const missing = await call(base, '/api/transactions');
      assert.equal(missing.status, 400);
      assert.equal(record(missing.body).code, 'E_VALIDATION');
    });

    void test('/sandbox/transactions shows scenario, callback_url, status, type and callbacks', async () => {
      const callbackUrl = receiver.callbackUrl('listing');
      const id = mobileMoneyId(await call(base, MOBILE_MONEY, { form: mobileMoneyForm('233241234511', callbackUrl) }));
      await waitFor(() => receiver.callsTo(callbackUrl).length > 0, 'callback');
      const listed = (await sandboxTransactions(base)).find((transaction) => transaction.transaction_id === id);
      assert.equal(listed?.callback_url, callbackUrl);
      assert.equal(listed?.scenario, 'failure');
      assert.equal(listed?.status, '0');
      assert.equal(listed?.type, 'mobile_money');
      const callbacks = listed?.callbacks as Record<string, unknown>[];
      assert.equal(callbacks.length, 1);
      assert.equal(callbacks[0]?.state, 'delivered');
    });

    void test('the ledger and request log need the bearer token; the payer-facing 3-D Secure page does not', async () => {
      const callbackUrl = receiver.callbackUrl('guarded');
      const answer = await call(base, CARD, { form: cardForm('+233241234533', callbackUrl) });
      const id = String(record(record(answer.body).transaction).id);
      for (const path of [
        '/sandbox/transactions',
        '/sandbox/requests',
        '/sandbox//transactions',
        '/sandbox/requests?x',
      ]) {
        for (const headers of [{}, { authorization: 'Bearer wrong-token' }, { authorization: TOKEN }] as Record<
          string,
          string
        >[]) {
          const refused = await fetch(`${base}${path}`, { headers });
          const text = await refused.text();
          assert.equal(refused.status, 401, `${path} with ${JSON.stringify(headers)}`);
          assert.ok(!text.includes(callbackUrl) && !text.includes('233241234533'), 'nothing of the ledger shown');
        }
      }
      assert.ok(
        (await sandboxTransactions(base)).some((t) => t.callback_url === callbackUrl),
        'with the token',
      );
      const page = await fetch(`${base}/sandbox/3ds/${id}`);
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.ok(html.includes('1111') && !html.includes(callbackUrl) && !html.includes('Ama'), 'no personal data');
    });
  });
});

void describe('auto3ds', () => {
  for (const [decision, status] of [
    ['approve', '1'],
    ['decline', '0'],
  ] as const) {
    void test(`${decision} settles 3-D Secure without a browser`, async () => {
      const sandbox = await startSandbox({ auto3ds: decision });
      try {
        const callbackUrl = receiver.callbackUrl(`auto3ds-${decision}`);
        const answer = await call(sandbox.url, CARD, { form: cardForm('+233241234567', callbackUrl) });
        assert.equal(answer.status, 200);
        const [callback] = await waitFor(
          () => receiver.callsTo(callbackUrl).length > 0 && receiver.callsTo(callbackUrl),
          'callback',
        );
        assert.equal(record(callback).status, status);
      } finally {
        await sandbox.close();
      }
    });
  }
});

void describe('publicUrl', () => {
  void test('is the base of threeds_url', async () => {
    const sandbox = await startSandbox({ publicUrl: 'https://sandbox.example/' });
    try {
      const answer = await call(sandbox.url, CARD, { form: cardForm('+233241234567', receiver.callbackUrl('public')) });
      const transaction = record(record(answer.body).transaction);
      assert.equal(
        record(transaction.medium_details).threeds_url,
        `https://sandbox.example/sandbox/3ds/${String(transaction.id)}`,
      );
    } finally {
      await sandbox.close();
    }
  });
});

void describe('persistence', () => {
  void test('transactions and undelivered callbacks survive a restart', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'sandbox-test-'));
    const dataFile = join(directory, 'sandbox.json');
    try {
      const first = await startSandbox({ dataFile, callbackDelayMs: 400 });
      const mmCallback = receiver.callbackUrl('persist-mm');
      const cardCallback = receiver.callbackUrl('persist-card');
      const mmId = mobileMoneyId(
        await call(first.url, MOBILE_MONEY, { form: mobileMoneyForm('233241234567', mmCallback) }),
      );
      const cardAnswer = await call(first.url, CARD, { form: cardForm('+233241234567', cardCallback) });
      const cardId = record(record(cardAnswer.body).transaction).id as number;
      await first.close();
      await sleep(450);
      assert.equal(receiver.callsTo(mmCallback).length, 0, 'a closed sandbox sends nothing');

      const second = await startSandbox({ dataFile });
      try {
        const [callback] = await waitFor(
          () => receiver.callsTo(mmCallback).length > 0 && receiver.callsTo(mmCallback),
          'cb',
        );
        assert.equal(record(callback).transaction_id, mmId);
        const ids = (await sandboxTransactions(second.url)).map((transaction) => transaction.transaction_id);
        assert.deepEqual(ids, [mmId, cardId]);
        assert.equal(record((await call(second.url, `/api/transactions/${mmId}`)).body).status, '1');
        await call(second.url, `/sandbox/3ds/${cardId}/approve`, { method: 'POST' });
        await waitFor(() => receiver.callsTo(cardCallback).length > 0, 'card callback');
        const nextId = mobileMoneyId(await call(second.url, MOBILE_MONEY, { form: mobileMoneyForm('233241234533') }));
        assert.ok(nextId > cardId);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

void describe('environment', () => {
  void test('defaults', () => {
    assert.deepEqual(sandboxOptionsFromEnv({}), {
      host: '127.0.0.1',
      port: 4010,
      token: 'sandbox-token',
      callbackDelayMs: 1000,
      auto3ds: undefined,
      slowResponseMs: 30_000,
      publicUrl: undefined,
      dataFile: undefined,
      logger: false,
      notificationSecrets: [],
    });
    const rotating = sandboxOptionsFromEnv({
      SANDBOX_NOTIFICATION_SECRETS: 'whsec_old_0123456789, whsec_new_0123456789',
    });
    assert.deepEqual(rotating.notificationSecrets, ['whsec_old_0123456789', 'whsec_new_0123456789']);
  });

  void test('a bad value names its variable', () => {
    for (const [name, value] of [
      ['SANDBOX_PORT', 'x'],
      ['SANDBOX_PORT', '70000'],
      ['SANDBOX_CALLBACK_DELAY', '1 sec'],
      ['SANDBOX_SLOW_RESPONSE', '-3s'],
      ['SANDBOX_AUTO_3DS', 'maybe'],
      ['SANDBOX_PUBLIC_URL', 'ftp://x'],
      ['SANDBOX_TOKEN', ''],
    ] as const) {
      assert.throws(() => sandboxOptionsFromEnv({ [name]: value }), new RegExp(name));
    }
  });
});
