import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import Fastify from 'fastify';
import { temporal } from '@temporalio/proto';
import { pino } from 'pino';
import { createClient } from 'redis';
import { request } from 'undici';
import { parseKeyring } from '../src/crypto/keyring';
import type { PaymentInput, PaymentResource } from '../src/domain/payment-model';
import type { Signed } from '../src/domain/signed';
import type { PaymentRequest } from '../src/domain/requests';
import { loggerOptions } from '../src/http/api-app';
import { connectClient } from '../src/temporal/temporal-client';
import { temporalBinary } from '../src/local/binaries';
import { vaultKey } from '../src/vault/card-vault';
import { paymentRequest } from './support/request-builders';
import { MERCHANT_KEY, OPERATOR_KEY, startStack, TEST_ENCRYPTION_KEYS, testEnvironment } from './support/test-stack';
import { installTestRuntime } from './support/test-runtime';
import type { Stack } from './support/test-stack';

// Card, mobile-money and bank payments run to completion; then their histories are read straight from the
// Temporal server (no codec) and every log line is searched for personal data.

const logLines: string[] = [];
const serverLog = new Writable({
  write(chunk: Buffer, _encoding, done) {
    logLines.push(...chunk.toString().split('\n').filter(Boolean));
    done();
  },
});
// The worker's Runtime logs (SDK, Rust core, workflows, activities) at debug, through the production logger.
const workerLogger = pino({ level: 'debug', name: 'worker' }, serverLog);

const UI_ORIGIN = 'http://localhost:8233';
const personal = {
  card_number: '4000056655665556',
  card_cvv: '8642',
  first_name: 'Zanele',
  last_name: 'Okonkwo',
  email: 'zanele.okonkwo@example.com',
  card_phone: '+233249876500',
  phone: '233249876500',
  name: 'Thandiwe Mbeki',
  customer_name: 'Kwabena Asante',
  account_number: '9876543200',
};
const forbidden = [
  personal.card_number,
  personal.card_cvv,
  personal.first_name,
  personal.last_name,
  personal.email,
  '233249876500', // both phone numbers, with and without the plus
  '233249876588',
  '9876543233',
  'Thandiwe',
  'Mbeki',
  'Kwabena',
  'Asante',
  personal.account_number,
];

/** True when the text holds the secret; digits count only standing alone (not inside a timestamp or an id). */
function leaks(text: string, secret: string): boolean {
  if (!/^\d+$/.test(secret)) return text.includes(secret);
  return new RegExp(`(?<![0-9A-Za-z-])${secret}(?![0-9A-Za-z-])`).test(text);
}

function requests(): PaymentRequest[] {
  const card = paymentRequest('card_payment', '00');
  const mobile = paymentRequest('mobile_money_debit', '00');
  const rejected = paymentRequest('mobile_money_debit', '88');
  const bank = paymentRequest('bank_credit', '00');
  if (card.type !== 'card_payment' || mobile.type !== 'mobile_money_debit' || rejected.type !== 'mobile_money_debit') {
    throw new Error('unexpected request types');
  }
  if (bank.type !== 'bank_credit') throw new Error('unexpected request type');
  return [
    {
      ...card,
      card_number: personal.card_number,
      card_cvv: personal.card_cvv,
      first_name: personal.first_name,
      last_name: personal.last_name,
      email: personal.email,
      phone_number: personal.card_phone,
    },
    { ...mobile, phone_number: personal.phone, name: personal.name },
    { ...rejected, phone_number: '233249876588', name: personal.name },
    { ...bank, customer_name: personal.customer_name, account_number: personal.account_number },
    // Scenario 33 stays pending: it goes to review and an operator resolves it (a Temporal Update).
    {
      ...bank,
      reference: `${bank.reference}-review`,
      customer_name: personal.customer_name,
      account_number: '9876543233',
    },
  ];
}

interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}

function toJson(payload: temporal.api.common.v1.IPayload): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    ),
    data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
  };
}

describe('nothing personal in plain text in Temporal or the logs', () => {
  let stack: Stack;
  let raw: Client;
  let client: Client;
  const payments: PaymentResource[] = [];
  const histories = new Map<string, temporal.api.history.v1.IHistory>();

  before(async () => {
    await installTestRuntime(workerLogger);
    stack = await startStack({
      env: { LATE_CALLBACK_WINDOW: '1s', LOG_LEVEL: 'debug', CODEC_CORS_ORIGINS: UI_ORIGIN },
      logStream: serverLog,
    });
    const { address } = testEnvironment();
    raw = new Client({ connection: await Connection.connect({ address }) });
    client = await connectClient({
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: 'default',
      ENCRYPTION_KEYS: parseKeyring(TEST_ENCRYPTION_KEYS),
    });
    for (const body of requests()) {
      const created = await stack.api('POST', '/v1/payments', body);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      if (body.reference.endsWith('-review')) {
        await stack.waitForStatus(created.body.id, ['needs_review']);
        const resolved = await stack.api(
          'POST',
          `/v1/payments/${created.body.id}/resolve`,
          { outcome: 'succeeded', note: `confirmed with ${personal.customer_name} on ${personal.card_phone}` },
          OPERATOR_KEY,
        );
        assert.equal(resolved.status, 200);
      }
      // Completion: the workflow has closed (outcome, then the late-callback window).
      await client.workflow.getHandle(created.body.id).result();
      payments.push((await stack.api('GET', `/v1/payments/${created.body.id}`)).body);
    }
    for (const payment of payments) {
      histories.set(payment.id, await raw.workflow.getHandle(payment.id).fetchHistory());
    }
  });
  after(async () => {
    await stack?.close();
    await raw?.connection.close();
    await client?.connection.close();
  });

  it('the payments completed: card, mobile money (one rejected), bank credit (one resolved by an operator)', () => {
    assert.deepEqual(
      payments.map((p) => [p.type, p.status]),
      [
        ['card_payment', 'succeeded'],
        ['mobile_money_debit', 'succeeded'],
        ['mobile_money_debit', 'failed'],
        ['bank_credit', 'succeeded'],
        ['bank_credit', 'succeeded'],
      ],
    );
    assert.equal(payments[0]?.card?.last4, '5556');
  });

  it('no event of their histories holds personal data, a summary, a memo, an update or an error message in plain text', async () => {
    for (const [id, history] of histories) {
      const bytes = Buffer.from(temporal.api.history.v1.History.encode(history).finish()).toString('latin1');
      assert.ok((history.events?.length ?? 0) > 5, `${id} has a history`);
      for (const secret of forbidden) assert.ok(!leaks(bytes, secret), `${id}: "${secret}" in the history`);
      // User metadata (summaries) and failure messages go through the codec too.
      assert.ok(!bytes.includes('initiate '), `${id}: an activity summary in plain text`);
      const described = await raw.workflowService.describeWorkflowExecution({
        namespace: 'default',
        execution: { workflowId: id },
      });
      const description = Buffer.from(
        temporal.api.workflowservice.v1.DescribeWorkflowExecutionResponse.encode(described).finish(),
      ).toString('latin1');
      // As in the history, a number counts only on its own: the response's hex ids and binary fields hold any four
      // digits by chance (a run found the CVV's so).
      for (const secret of forbidden) assert.ok(!leaks(description, secret), `${id}: "${secret}" in memo/search`);
    }
    for (const history of histories.values()) {
      const memo = history.events?.[0]?.workflowExecutionStartedEventAttributes?.memo?.fields?.fingerprint;
      assert.equal(Buffer.from(memo?.metadata?.encoding ?? []).toString(), 'binary/encrypted', 'the memo');
    }
    const reviewed = histories.get(payments[4]!.id)!;
    const update = reviewed.events?.find(
      (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'resolve',
    );
    const updateInput = update?.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args?.payloads;
    assert.equal(updateInput?.length, 1, 'the resolve update is in the history');
    assert.equal(Buffer.from(updateInput[0]?.metadata?.encoding ?? []).toString(), 'binary/encrypted', 'the update');
    const rejected = histories.get(payments[2]!.id)!;
    // The initiation is a local activity: its failure is in its marker.
    const failures = rejected.events?.flatMap((e) => e.markerRecordedEventAttributes?.failure ?? []) ?? [];
    assert.equal(failures.length, 1);
    assert.equal(failures[0]?.message, 'Encoded failure');
    assert.ok(failures[0]?.encodedAttributes?.data?.length, 'the message travels encrypted');
  });

  it('no log line holds personal data', () => {
    assert.ok(logLines.length > 20, `captured ${logLines.length} log lines`);
    for (const secret of forbidden) {
      const leaking = logLines.find((line) => leaks(line, secret));
      assert.equal(leaking, undefined, `"${secret}" logged`);
    }
    process.stdout.write(`# searched ${logLines.length} log lines and ${histories.size} histories\n`);
  });

  it('the codec endpoint decodes the history for an operator key only; the CVV is gone from the vault', async () => {
    const [card] = payments;
    const started = histories.get(card!.id)!.events?.[0]?.workflowExecutionStartedEventAttributes;
    const payloads = (started?.input?.payloads ?? []).map(toJson);
    assert.equal(payloads.length, 1);
    const decode = (key: string | null, path = '/codec/decode', origin?: string) =>
      request(`${stack.baseUrl}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(origin ? { origin } : {}),
        },
        body: JSON.stringify({ payloads }),
      });
    const refused = await decode(null);
    assert.equal(refused.statusCode, 401);
    assert.ok(!(await refused.body.text()).includes(personal.first_name));
    const merchant = await decode(MERCHANT_KEY);
    assert.equal(merchant.statusCode, 403);
    await merchant.body.dump();
    const foreign = await decode(OPERATOR_KEY, '/codec/decode', 'https://evil.example');
    assert.equal(foreign.statusCode, 403);
    await foreign.body.dump();

    const decoded = await decode(OPERATOR_KEY);
    assert.equal(decoded.statusCode, 200);
    const body = (await decoded.body.json()) as { payloads: JsonPayload[] };
    const input = (JSON.parse(Buffer.from(body.payloads[0]!.data, 'base64').toString('utf8')) as Signed<PaymentInput>)
      .body;
    assert.equal(input.request.type, 'card_payment');
    if (input.request.type !== 'card_payment') return;
    assert.equal(input.request.first_name, personal.first_name, 'decoded for the operator');
    assert.equal(input.request.card.last4, '5556');
    const text = JSON.stringify(input);
    assert.ok(!text.includes(personal.card_number) && !text.includes(personal.card_cvv), 'only a token and last4');

    // The Web UI decodes with an expiring, decode-only token an operator asked for (codec-access.test.ts has more).
    const issued = await stack.api<{ codec_endpoint: string }>('POST', '/v1/operator/codec-tokens', {}, OPERATOR_KEY);
    assert.equal(issued.status, 201);
    const fromUi = await decode(null, `${new URL(issued.body.codec_endpoint).pathname}/decode`, UI_ORIGIN);
    assert.equal(fromUi.statusCode, 200);
    assert.equal(fromUi.headers['access-control-allow-origin'], UI_ORIGIN);
    await fromUi.body.dump();
    assert.equal((await decode(null, '/codec/ui/not-a-token/decode')).statusCode, 401);
    const preflight = await request(`${stack.baseUrl}/codec/decode`, {
      method: 'OPTIONS',
      headers: { origin: UI_ORIGIN, 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.statusCode, 204);
    assert.match(String(preflight.headers['access-control-allow-headers']), /authorization/);
    await preflight.body.dump();

    const redis = createClient({ url: testEnvironment().vaultUrl });
    await redis.connect();
    try {
      assert.equal(await redis.exists(vaultKey(input.request.card.token)), 0, 'the card data left the vault');
    } finally {
      await redis.quit();
    }
  });

  it('`temporal workflow show` decodes through the codec endpoint with an operator key', async () => {
    const run = promisify(execFile);
    const args = ['workflow', 'show', '-w', payments[1]!.id, '--address', testEnvironment().address, '-o', 'json'];
    const startInput = (stdout: string) => {
      const shown = JSON.parse(stdout) as {
        events: { workflowExecutionStartedEventAttributes?: { input: { payloads: JsonPayload[] } } }[];
      };
      const payload = shown.events[0]?.workflowExecutionStartedEventAttributes?.input.payloads[0];
      assert.ok(payload);
      return Buffer.from(payload.data, 'base64').toString('utf8');
    };
    const plain = await run(temporalBinary('temporal'), args);
    assert.ok(!startInput(plain.stdout).includes(personal.name));
    const codec = ['--codec-endpoint', `${stack.baseUrl}/codec`, '--codec-auth', `Bearer ${OPERATOR_KEY}`];
    const decoded = await run(temporalBinary('temporal'), [...args, ...codec]);
    assert.ok(startInput(decoded.stdout).includes(personal.name), 'the operator reads the payment in the CLI');
  });
});

describe('log redaction', () => {
  it('censors card and personal fields and the authorization header in any log call', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const options = loggerOptions('info', false);
    const app = Fastify({ logger: typeof options === 'object' ? { ...options, stream } : options });
    app.log.info(
      { body: { card_number: personal.card_number, card_cvv: personal.card_cvv }, name: personal.name },
      'a careless log call',
    );
    app.log.info({ headers: { authorization: `Bearer ${OPERATOR_KEY}` }, email: personal.email }, 'another');
    await app.close();
    const text = lines.join('');
    assert.match(text, /a careless log call/);
    for (const secret of [personal.card_number, personal.card_cvv, personal.name, personal.email, OPERATOR_KEY]) {
      assert.ok(!text.includes(secret), `"${secret}" logged`);
    }
  });
});
