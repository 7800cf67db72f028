import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { request } from 'undici';
import { ConfigError, parseConfig } from '../src/config/config-loading';
import { serverSchema } from '../src/config/process-settings';
import type { PaymentResource } from '../src/domain/payment-model';
import { signCodecToken } from '../src/crypto/codec-tokens';
import { ops } from './support/ops-cli-runner';
import { paymentRequest, postCodec } from './support/request-builders';
import {
  MERCHANT_KEY,
  OPERATOR_KEY,
  OPERATOR_NAME,
  TEST_CODEC_TOKEN_SECRET,
  startStack,
  testEnvironment,
} from './support/test-stack';
import type { Stack } from './support/test-stack';

// Operators are people (`name:key`), and the codec tells who decoded what: operator keys decode and encode, the
// Web UI's token only decodes and expires, and every call is logged with the operator and the workflows concerned.

const UI_ORIGIN = 'http://localhost:8233';
const CUSTOMER = 'Nokuthula Adeyemi';

interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}
interface LogLine {
  msg: string;
  operator?: string;
  via?: string;
  namespace?: string;
  payloads?: number;
  workflowIds?: string[];
  outcome?: string;
}

const logText: string[] = [];
const logStream = new Writable({
  write(chunk: Buffer, _encoding, done) {
    logText.push(...chunk.toString().split('\n').filter(Boolean));
    done();
  },
});
const logLines = () => logText.map((line) => JSON.parse(line) as LogLine);

describe('OPERATOR_API_KEYS', () => {
  const base = {
    MERCHANT_API_KEYS: 'acme:0123456789abcdef0123',
    CALLBACK_SECRET: 's'.repeat(32),
    PROVIDER_BASE_URL: 'https://provider.example',
    PROVIDER_TOKEN: 'provider-token',
    ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
    SIGNING_KEYS: `s1:${Buffer.alloc(32, 2).toString('base64')}`,
    FINGERPRINT_SECRET: 'f'.repeat(32),
    VAULT_URL: 'redis://127.0.0.1:6379',
    DATABASE_URL: 'postgres://payments:db-password@127.0.0.1:5432/payments',
  };
  const problem = (keys: string) => {
    try {
      parseConfig(serverSchema, { ...base, OPERATOR_API_KEYS: keys });
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      return err.message;
    }
    assert.fail(`"${keys}" was accepted`);
  };

  it('are `name:key` entries, one per person', () => {
    const config = parseConfig(serverSchema, {
      ...base,
      OPERATOR_API_KEYS: 'ada.ops:first-key-0123456789, kwame_2:second:key-0123456789',
    });
    assert.deepEqual(config.OPERATOR_API_KEYS, [
      { name: 'ada.ops', key: 'first-key-0123456789' },
      { name: 'kwame_2', key: 'second:key-0123456789' },
    ]);
  });

  it('refuse a bare key, a bad name, a short key or a repeated name, naming the entry and never the key', () => {
    const cases: [string, RegExp, string][] = [
      [
        'ada:first-key-0123456789,bare-secret-key-0123456789',
        /OPERATOR_API_KEYS: entry 2 is a bare key/,
        'bare-secret',
      ],
      ['Ada:first-key-0123456789', /OPERATOR_API_KEYS: entry 1 has a bad name/, 'first-key'],
      [`${'a'.repeat(33)}:first-key-0123456789`, /entry 1 has a bad name/, 'first-key'],
      ['ada:first-key-0123456789,kwame:short-key', /entry 2 has a key shorter than 16 characters/, 'short-key'],
      ['ada:first-key-0123456789,ada:other-key-0123456789', /entry 2 repeats the name/, 'other-key'],
    ];
    for (const [keys, expected, secret] of cases) {
      const message = problem(keys);
      assert.match(message, expected);
      assert.ok(!message.includes(secret), `"${secret}" echoed: ${message}`);
    }
    assert.match(problem(' , '), /OPERATOR_API_KEYS: needs at least one `name:key` entry/);
  });
});

describe('who decodes what', () => {
  let stack: Stack;
  let raw: Client;
  let payment: PaymentResource;
  let encryptedInput: JsonPayload[];

  before(async () => {
    stack = await startStack({ env: { LOG_LEVEL: 'info', CODEC_CORS_ORIGINS: UI_ORIGIN }, logStream });
    raw = new Client({ connection: await Connection.connect({ address: testEnvironment().address }) });
    const body = { ...paymentRequest('bank_credit', '33'), customer_name: CUSTOMER }; // stays pending → review
    const created = await stack.api('POST', '/v1/payments', body);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    payment = await stack.waitForStatus(created.body.id, ['needs_review']);
    const history = await raw.workflow.getHandle(payment.id).fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
    encryptedInput = started.map((p) => ({
      metadata: Object.fromEntries(
        Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
      ),
      data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
    }));
    assert.equal(encryptedInput.length, 1);
  });
  after(async () => {
    await stack?.close();
    await raw?.connection.close();
  });

  const codec = (path: string, payloads: unknown, headers: Record<string, string> = {}) =>
    postCodec<JsonPayload>(`${stack.baseUrl}${path}`, payloads, headers);
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const issue = (body: unknown, key: string | null = OPERATOR_KEY) =>
    stack.api<{ operator: string; codec_endpoint: string; expires_at: string; error?: { fields: { path: string }[] } }>(
      'POST',
      '/v1/operator/codec-tokens',
      body,
      key,
    );
  const plainText = (payloads: JsonPayload[]) => Buffer.from(payloads[0]?.data ?? '', 'base64').toString('utf8');

  it("an operator's resolution through the API records their name in the payment's events and the log", async () => {
    const resolved = await stack.api(
      'POST',
      `/v1/payments/${payment.id}/resolve`,
      { outcome: 'failed', note: 'account closed per bank' },
      OPERATOR_KEY,
    );
    assert.equal(resolved.status, 200, JSON.stringify(resolved.body));
    const shown = await stack.api('GET', `/v1/payments/${payment.id}`, undefined, OPERATOR_KEY);
    assert.deepEqual(
      shown.body.events.filter((e) => e.type === 'resolved').map((e) => [e.outcome, e.message]),
      [['failed', `account closed per bank (by ${OPERATOR_NAME})`]],
    );
    const line = logLines().find((l) => l.msg === 'payment resolved by an operator');
    assert.equal(line?.operator, OPERATOR_NAME);
    assert.equal(line?.outcome, 'failed');
    assert.ok(!logText.some((l) => l.includes('account closed per bank')), 'the note stays out of the log');
  });

  it('operator keys decode and encode; merchant keys and no key are refused', async () => {
    const decoded = await codec('/codec/decode', encryptedInput, { ...bearer(OPERATOR_KEY), 'x-namespace': 'default' });
    assert.equal(decoded.status, 200);
    assert.ok(plainText(decoded.payloads).includes(CUSTOMER), 'the operator reads the input');
    const plain = [{ metadata: { encoding: btoa('json/plain') }, data: btoa('{"paymentId":"payment-acme-x"}') }];
    const sealed = await codec('/codec/encode', plain, bearer(OPERATOR_KEY));
    assert.equal(sealed.status, 200);
    assert.equal(atob(sealed.payloads[0]!.metadata.encoding!), 'binary/encrypted');
    assert.deepEqual((await codec('/codec/decode', sealed.payloads, bearer(OPERATOR_KEY))).payloads, plain);

    for (const action of ['decode', 'encode']) {
      assert.equal((await codec(`/codec/${action}`, encryptedInput, bearer(MERCHANT_KEY))).status, 403);
      assert.equal((await codec(`/codec/${action}`, encryptedInput)).status, 401);
    }
  });

  it('every decode is logged with the operator and the workflows, never the content', () => {
    const decodes = logLines().filter((l) => l.msg === 'codec decode');
    const first = decodes.find((l) => l.workflowIds?.includes(payment.id));
    assert.deepEqual(first && [first.operator, first.via, first.namespace, first.payloads, first.workflowIds], [
      OPERATOR_NAME,
      'api',
      'default',
      1,
      [payment.id],
    ]);
    assert.ok(
      decodes.some((l) => l.workflowIds?.includes('payment-acme-x')),
      'the ids of payloads the operator encoded',
    );
    const encodes = logLines().filter((l) => l.msg === 'codec encode');
    assert.equal(encodes.length, 1);
    assert.equal(encodes[0]?.operator, OPERATOR_NAME);
    assert.ok(!logText.some((l) => l.includes(CUSTOMER) || l.includes('Nokuthula')), 'no decoded content logged');
  });

  it("the Web UI's token decodes only, from the UI's origin, for the operator who asked, until it expires", async () => {
    const asked = Date.now();
    const issued = await issue({ ttl: '3s' });
    assert.equal(issued.status, 201, JSON.stringify(issued.body));
    assert.equal(issued.body.operator, OPERATOR_NAME);
    const expiresAt = Date.parse(issued.body.expires_at);
    assert.ok(Math.abs(expiresAt - asked - 3000) < 1000, issued.body.expires_at);
    const uiPath = new URL(issued.body.codec_endpoint).pathname;
    assert.match(uiPath, /^\/codec\/ui\/[^/]+$/);
    assert.ok(!issued.body.codec_endpoint.includes(OPERATOR_KEY) && !uiPath.includes(TEST_CODEC_TOKEN_SECRET));

    const fromUi = await codec(`${uiPath}/decode`, encryptedInput, { origin: UI_ORIGIN, 'x-namespace': 'default' });
    assert.equal(fromUi.status, 200);
    assert.equal(fromUi.headers['access-control-allow-origin'], UI_ORIGIN);
    assert.ok(plainText(fromUi.payloads).includes(CUSTOMER));
    const logged = logLines().find((l) => l.msg === 'codec decode' && l.via === 'web-ui');
    assert.equal(logged?.operator, OPERATOR_NAME);
    assert.deepEqual(logged?.workflowIds, [payment.id]);
    assert.ok(!logText.some((l) => l.includes(uiPath.slice('/codec/ui/'.length))), 'the token is not logged');

    const plain = [{ metadata: { encoding: btoa('json/plain') }, data: btoa('"hello"') }];
    assert.equal((await codec(`${uiPath}/encode`, plain, { origin: UI_ORIGIN })).status, 403, 'decode only');
    assert.equal((await codec(`${uiPath}/decode`, encryptedInput, { origin: 'https://evil.example' })).status, 403);
    const token = uiPath.slice('/codec/ui/'.length);
    const forged = token.replace(`${OPERATOR_NAME}.`, 'mallory.');
    assert.equal((await codec(`/codec/ui/${forged}/decode`, encryptedInput)).status, 401, 'another name');
    const later = token.replace(/\.(\d+)\./, (_m, ms: string) => `.${Number(ms) + 3_600_000}.`);
    assert.equal((await codec(`/codec/ui/${later}/decode`, encryptedInput)).status, 401, 'a later expiry');
    // Signed right, but for someone not (or no longer) in OPERATOR_API_KEYS: removing a person revokes their tokens.
    const former = signCodecToken(TEST_CODEC_TOKEN_SECRET, 'former.ops', new Date(Date.now() + 60_000));
    assert.equal((await codec(`/codec/ui/${former}/decode`, encryptedInput)).status, 401);
    // The token is no API key.
    assert.equal((await codec('/codec/decode', encryptedInput, bearer(token))).status, 401);

    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now() + 200)));
    const expired = await codec(`${uiPath}/decode`, encryptedInput, { origin: UI_ORIGIN });
    assert.equal(expired.status, 401, 'expired');
  });

  it('only an operator key gets a Web UI token, for at most 24h', async () => {
    assert.equal((await issue({}, MERCHANT_KEY)).status, 403);
    assert.equal((await issue({}, null)).status, 401);
    const tooLong = await issue({ ttl: '25h' });
    assert.equal(tooLong.status, 400);
    assert.deepEqual(
      tooLong.body.error?.fields.map((f) => f.path),
      ['ttl'],
    );
    const standard = await issue({});
    assert.equal(standard.status, 201);
    assert.ok(Math.abs(Date.parse(standard.body.expires_at) - Date.now() - 8 * 3_600_000) < 5000, 'an 8h default');
  });

  it('`npm run ops -- codec-url` signs one with CODEC_TOKEN_SECRET for a named operator', async () => {
    const env = { CODEC_TOKEN_SECRET: TEST_CODEC_TOKEN_SECRET, PUBLIC_BASE_URL: stack.baseUrl };
    const run = await ops(['codec-url', '--ttl', '1m', '--operator', OPERATOR_NAME, '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as { operator: string; codec_endpoint: string; expires_at: string };
    assert.equal(result.operator, OPERATOR_NAME);
    assert.ok(result.codec_endpoint.startsWith(`${stack.baseUrl}/codec/ui/`));
    const decoded = await request(`${result.codec_endpoint}/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ payloads: encryptedInput }),
    });
    assert.equal(decoded.statusCode, 200);
    await decoded.body.dump();

    const tooLong = await ops(['codec-url', '--ttl', '2d'], env);
    assert.equal(tooLong.code, 2);
    assert.match(tooLong.stderr, /--ttl: must be at most 24h/);
    const noSecret = await ops(['codec-url'], { ...env, CODEC_TOKEN_SECRET: '' });
    assert.equal(noSecret.code, 2);
    assert.match(noSecret.stderr, /CODEC_TOKEN_SECRET: is required/);
  });
});
