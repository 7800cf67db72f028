import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../src/config/config-loading';
import { SANDBOX_TOKEN, serverSchema, startSchema, workerSchema } from '../src/config/process-settings';

const KEY_1 = Buffer.alloc(32, 1).toString('base64');
const KEY_2 = Buffer.alloc(32, 2).toString('base64');
const valid = {
  MERCHANT_API_KEYS: 'acme:0123456789abcdef0123,globex:fallback0123456789ab',
  OPERATOR_API_KEYS: 'ops:op-0123456789abcdef',
  CALLBACK_SECRET: 's'.repeat(32),
  FINGERPRINT_SECRET: 'f'.repeat(32),
  PROVIDER_BASE_URL: 'https://provider.example',
  PROVIDER_TOKEN: 'provider-token',
  ENCRYPTION_KEYS: `k1:${KEY_1}`,
  SIGNING_KEYS: `s1:${KEY_2}`,
  VAULT_URL: 'redis://127.0.0.1:6379',
  DATABASE_URL: 'postgres://payments:db-password@127.0.0.1:5432/payments',
};
const worker = {
  PROVIDER_BASE_URL: 'https://provider.example',
  PROVIDER_TOKEN: 'real-provider-token',
  ENCRYPTION_KEYS: `k1:${KEY_1}`,
  SIGNING_KEYS: `s1:${KEY_2}`,
  CALLBACK_SECRET: 's'.repeat(32),
  VAULT_URL: 'redis://127.0.0.1:6379',
  DATABASE_URL: 'postgres://payments:db-password@127.0.0.1:5432/payments',
};

function configError(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.message;
  }
  assert.fail('expected a ConfigError');
}

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
      { merchantId: 'globex', key: 'fallback0123456789ab' },
    ]);
    assert.equal(config.MERCHANT_MAX_AMOUNTS('acme'), 1_000_000);
    assert.deepEqual(config.VOUCHER_CHANNELS, []);
    assert.equal(config.BATCH_CONCURRENCY, 20);
    assert.equal(config.BATCH_PAGE_SIZE, 500);
    assert.equal(config.BANK_LIST_REFRESH, 3_600_000);
  });

  it('BATCH_PAGE_SIZE may only make pages smaller than 500, never larger, and is named when bad', () => {
    assert.equal(parseConfig(serverSchema, { ...valid, BATCH_PAGE_SIZE: '50' }).BATCH_PAGE_SIZE, 50);
    for (const bad of ['501', '9', 'many']) {
      assert.throws(
        () => parseConfig(serverSchema, { ...valid, BATCH_PAGE_SIZE: bad }),
        (err: unknown) => err instanceof ConfigError && /BATCH_PAGE_SIZE/.test(err.message),
        bad,
      );
    }
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

  it('callback tokens: CALLBACK_KEYS or CALLBACK_SECRET, a lifetime no shorter than a payment takes callbacks', () => {
    const { CALLBACK_SECRET: _secret, ...withoutCallbackKeys } = valid;
    assert.throws(() => parseConfig(serverSchema, withoutCallbackKeys), /CALLBACK_KEYS: is required/);
    assert.throws(() => parseConfig(workerSchema, { ...worker, CALLBACK_SECRET: undefined }), /CALLBACK_KEYS/);
    const keys = parseConfig(serverSchema, { ...withoutCallbackKeys, CALLBACK_KEYS: `cb-2:${KEY_1},cb-1:${KEY_2}` });
    assert.equal(keys.CALLBACK_TOKEN_TTL, 7 * 86_400_000);
    assert.equal(keys.CALLBACK_ALLOW_GET, false);
    assert.throws(
      () => parseConfig(serverSchema, { ...valid, CALLBACK_KEYS: `secret:${KEY_1}` }),
      /key id "secret" is CALLBACK_SECRET's/,
    );
    // 30m (bank credit) + 1h + 1h by default: a 2h token would expire under a late callback.
    assert.throws(
      () => parseConfig(serverSchema, { ...valid, CALLBACK_TOKEN_TTL: '2h' }),
      /CALLBACK_TOKEN_TTL: must be at least 150m/,
    );
    assert.equal(parseConfig(serverSchema, { ...valid, CALLBACK_TOKEN_TTL: '3h' }).CALLBACK_TOKEN_TTL, 3 * 3_600_000);
    assert.equal(parseConfig(serverSchema, { ...valid, CALLBACK_ALLOW_GET: 'true' }).CALLBACK_ALLOW_GET, true);
  });

  it('reports missing required settings', () => {
    assert.throws(
      () => parseConfig(workerSchema, {}),
      /PROVIDER_BASE_URL: is required[\s\S]*PROVIDER_TOKEN: is required/,
    );
    for (const schema of [serverSchema, workerSchema]) {
      const base = schema === serverSchema ? valid : worker;
      assert.match(
        configError(() => parseConfig(schema, { ...base, DATABASE_URL: undefined })),
        /DATABASE_URL: is required/,
      );
    }
  });

  it('DATABASE_URL: a postgres:// URL, named and never echoed when it is not', () => {
    assert.equal(parseConfig(serverSchema, valid).DATABASE_URL, valid.DATABASE_URL);
    const password = 'hunter2-database';
    for (const bad of [`mysql://payments:${password}@db:3306/payments`, `payments:${password}@db/payments`]) {
      const message = configError(() => parseConfig(workerSchema, { ...worker, DATABASE_URL: bad }));
      assert.match(message, /DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/);
      assert.ok(!message.includes(password), 'no password echoed');
    }
  });

  it('a malformed MERCHANT_API_KEYS entry stops the start, named by position and never echoed', () => {
    for (const [entries, position] of [
      ['Acme:UPPER-CASE-MERCHANT-0123', 1],
      ['acme:0123456789abcdef0123,ac me:SPACE-IN-MERCHANT-0123', 2],
      ['acme:0123456789abcdef0123,globex:0123456789abcdef0123,:NO-MERCHANT-AT-ALL-0123', 3],
      ['BARE-KEY-WITHOUT-MERCHANT-0123', 1],
      ['acme:SHORT-KEY', 1],
      ['a-very-long-merchant-id-of-33-chars:0123456789abcdef', 1],
    ] as const) {
      const message = configError(() => parseConfig(serverSchema, { ...valid, MERCHANT_API_KEYS: entries }));
      assert.match(message, new RegExp(`MERCHANT_API_KEYS: entry ${position} is not \`merchant_id:key\``));
      for (const part of entries.split(/[,:]/)) {
        if (part.length >= 4) assert.ok(!message.includes(part), `${part} is not echoed`);
      }
    }
    assert.match(
      configError(() => parseConfig(serverSchema, { ...valid, MERCHANT_API_KEYS: ' , ' })),
      /MERCHANT_API_KEYS: (needs at least one key|is required)/,
    );
  });

  it('MERCHANT_MAX_AMOUNTS: per merchant, `*` for the others, 1,000,000 by default; a bad entry named', () => {
    const limits = parseConfig(serverSchema, { ...valid, MERCHANT_MAX_AMOUNTS: 'acme:5000, *:250000.5' });
    assert.equal(limits.MERCHANT_MAX_AMOUNTS('acme'), 5000);
    assert.equal(limits.MERCHANT_MAX_AMOUNTS('globex'), 250_000.5);
    const noStar = parseConfig(serverSchema, { ...valid, MERCHANT_MAX_AMOUNTS: 'acme:10' });
    assert.equal(noStar.MERCHANT_MAX_AMOUNTS('globex'), 1_000_000);
    assertEntriesNamed('MERCHANT_MAX_AMOUNTS', [
      ['acme:0', /entry 1 is not `merchant_id:amount`/],
      ['acme:5,globex:1.234', /entry 2 is not `merchant_id:amount`/],
      ['Acme:5', /entry 1 is not/],
      ['acme', /entry 1 is not/],
      ['acme:5,acme:6', /"acme" appears twice/],
    ]);
  });

  it('MERCHANT_RATE_LIMITS: per merchant, `*` for the others, 6000 a minute by default; a bad entry named', () => {
    const defaults = parseConfig(serverSchema, valid);
    assert.equal(defaults.MERCHANT_RATE_LIMITS('acme'), 6000);
    assert.equal(defaults.RATE_LIMIT_WINDOW, 60_000);
    const set = parseConfig(serverSchema, {
      ...valid,
      MERCHANT_RATE_LIMITS: 'acme:100, bulk:0, *:20',
      RATE_LIMIT_WINDOW: '10s',
    });
    assert.equal(set.MERCHANT_RATE_LIMITS('acme'), 100);
    assert.equal(set.MERCHANT_RATE_LIMITS('bulk'), 0, 'no limit');
    assert.equal(set.MERCHANT_RATE_LIMITS('globex'), 20);
    assert.equal(set.RATE_LIMIT_WINDOW, 10_000);
    assertEntriesNamed('MERCHANT_RATE_LIMITS', [
      ['acme:-1', /entry 1 is not `merchant_id:count`/],
      ['acme:5,globex:1.5', /entry 2 is not `merchant_id:count`/],
      ['acme:5,acme:6', /"acme" appears twice/],
    ]);
    assert.throws(() => parseConfig(serverSchema, { ...valid, RATE_LIMIT_WINDOW: '500ms' }), /RATE_LIMIT_WINDOW/);
  });

  it('APPROVAL_THRESHOLDS: per merchant, in minor units, none by default; APPROVAL_WINDOW 24h by default', () => {
    const defaults = parseConfig(serverSchema, valid);
    assert.equal(defaults.APPROVAL_THRESHOLDS('acme'), undefined);
    assert.equal(defaults.APPROVAL_WINDOW, 24 * 3600_000);
    const set = parseConfig(serverSchema, { ...valid, APPROVAL_THRESHOLDS: 'acme:5000/100000.5, globex:0/10' });
    assert.deepEqual(set.APPROVAL_THRESHOLDS('acme'), { creditMinor: 500_000, secondMinor: 10_000_050 });
    assert.deepEqual(set.APPROVAL_THRESHOLDS('globex'), { creditMinor: 0, secondMinor: 1000 });
    assert.equal(set.APPROVAL_THRESHOLDS('other'), undefined);
    assertEntriesNamed('APPROVAL_THRESHOLDS', [
      ['acme:5000', /entry 1 is not `merchant_id:credit\/second`/],
      ['acme:1/2,globex:1/2/3', /entry 2 is not/],
      ['*:1/2', /entry 1 is not/],
      ['acme:1/2,acme:3/4', /"acme" appears twice/],
    ]);
    assert.match(
      configError(() => parseConfig(serverSchema, { ...valid, APPROVAL_WINDOW: '31d' })),
      /APPROVAL_WINDOW/,
    );
  });

  it('FINGERPRINT_SECRET is required by the server, apart from CALLBACK_SECRET', () => {
    assert.match(
      configError(() => parseConfig(serverSchema, { ...valid, FINGERPRINT_SECRET: undefined })),
      /FINGERPRINT_SECRET: is required/,
    );
    assert.match(
      configError(() => parseConfig(serverSchema, { ...valid, FINGERPRINT_SECRET: 'short' })),
      /FINGERPRINT_SECRET: must be at least 32 characters/,
    );
  });

  it('defaults the metrics endpoints to loopback and rejects a metrics address that is not host:port', () => {
    assert.equal(parseConfig(serverSchema, valid).METRICS_PORT, 9465);
    assert.equal(parseConfig(serverSchema, valid).METRICS_HOST, '127.0.0.1');
    assert.equal(parseConfig(serverSchema, { ...valid, METRICS_HOST: '0.0.0.0' }).METRICS_HOST, '0.0.0.0');
    assert.equal(parseConfig(startSchema, {}).WORKER_METRICS_ADDRESS, '127.0.0.1:9464');
    assert.equal(parseConfig(startSchema, {}).METRICS_HOST, '127.0.0.1');
    const provider = worker;
    assert.equal(parseConfig(workerSchema, provider).WORKER_METRICS_ADDRESS, '127.0.0.1:9464');
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
  it('WORKER_WORKFLOW_STACK_TRACE_LIMIT: no frames by default, 0 to 100, named when bad', () => {
    assert.equal(parseConfig(workerSchema, worker).WORKER_WORKFLOW_STACK_TRACE_LIMIT, 0);
    assert.equal(
      parseConfig(workerSchema, { ...worker, WORKER_WORKFLOW_STACK_TRACE_LIMIT: '10' })
        .WORKER_WORKFLOW_STACK_TRACE_LIMIT,
      10,
    );
    for (const bad of ['-1', '101', 'ten'])
      assert.match(
        configError(() => parseConfig(workerSchema, { ...worker, WORKER_WORKFLOW_STACK_TRACE_LIMIT: bad })),
        /WORKER_WORKFLOW_STACK_TRACE_LIMIT/,
      );
  });
  it('refuses provider time-outs and retries that could outlast the time Temporal gives an initiation', () => {
    assert.equal(
      parseConfig(workerSchema, worker).PROVIDER_TIMEOUT,
      20_000,
      'the defaults fit: 15 s for the vault + 3 × 25 s + 10 s',
    );
    assert.throws(
      () => parseConfig(workerSchema, { ...worker, PROVIDER_TIMEOUT: '40s' }),
      /PROVIDER_TIMEOUT: with PROVIDER_CONNECT_TIMEOUT, PROVIDER_TIMEOUT and PROVIDER_SAFE_RETRIES an initiation may take 160 s, not under the 120 s/,
    );
    assert.equal(
      parseConfig(workerSchema, { ...worker, PROVIDER_TIMEOUT: '40s', PROVIDER_SAFE_RETRIES: '1' })
        .PROVIDER_SAFE_RETRIES,
      1,
    );
  });

  it('reads ENCRYPTION_KEYS as a keyring (the first encrypts) and names a bad entry without echoing it', () => {
    const second = Buffer.alloc(32, 2).toString('base64');
    const config = parseConfig(workerSchema, { ...worker, ENCRYPTION_KEYS: `k2:${second},k1:${KEY_1}` });
    assert.equal(config.ENCRYPTION_KEYS.primary.id, 'k2');
    assert.deepEqual([...config.ENCRYPTION_KEYS.byId.keys()], ['k2', 'k1']);
    const short = configError(() => parseConfig(workerSchema, { ...worker, ENCRYPTION_KEYS: 'k1:c2hvcnRrZXk=' }));
    assert.match(short, /ENCRYPTION_KEYS: key "k1" must be 32 bytes/);
    assert.ok(!short.includes('c2hvcnRrZXk='));
    const twice = configError(() =>
      parseConfig(workerSchema, { ...worker, ENCRYPTION_KEYS: `a:${KEY_1},a:${second}` }),
    );
    assert.match(twice, /ENCRYPTION_KEYS: key id "a" appears twice/);
    assert.match(
      configError(() => parseConfig(workerSchema, { ...worker, ENCRYPTION_KEYS: undefined })),
      /ENCRYPTION_KEYS: is required/,
    );
    assert.match(
      configError(() => parseConfig(workerSchema, { ...worker, VAULT_URL: 'http://localhost' })),
      /VAULT_URL: must be a redis:\/\/ or rediss:\/\/ URL/,
    );
  });

  it('refuses a key id that would break signature parsing (a "."), in every keyring', () => {
    for (const name of ['ENCRYPTION_KEYS', 'SIGNING_KEYS', 'VAULT_KEYS']) {
      for (const schema of [workerSchema, serverSchema]) {
        const message = configError(() =>
          parseConfig(schema, { ...valid, ...worker, [name]: `good:${KEY_1},v1.2:${KEY_2}` }),
        );
        assert.match(message, new RegExp(`${name}: entry 2 must be \`key_id:base64_key\` \\(id of 1–32 letters`));
        assert.ok(!message.includes(KEY_2), 'no key echoed');
      }
    }
    // The card vault's keys are its own: VAULT_KEYS when set, ENCRYPTION_KEYS outside production when not.
    assert.equal(parseConfig(workerSchema, { ...worker, VAULT_KEYS: `v1:${KEY_2}` }).VAULT_KEYS?.primary.id, 'v1');
  });

  it('MERCHANT_WEBHOOKS: JSON by merchant, secrets as a list (rotation); a bad entry named by merchant, never echoed', () => {
    const secret = 'whsec_0123456789abcdef_secret';
    const hooks = { acme: { url: 'https://acme.example/hooks/', secrets: [secret, `${secret}-new`] } };
    const config = parseConfig(workerSchema, { ...worker, MERCHANT_WEBHOOKS: JSON.stringify(hooks) });
    assert.deepEqual(config.MERCHANT_WEBHOOKS.get('acme'), {
      url: 'https://acme.example/hooks/', // used exactly as given
      secrets: [secret, `${secret}-new`],
    });
    assert.equal(parseConfig(workerSchema, worker).MERCHANT_WEBHOOKS.size, 0);
    assert.equal(parseConfig(workerSchema, worker).NOTIFICATION_RETRY_FOR, 24 * 3_600_000);
    for (const [value, problem] of [
      ['{"acme": ', /MERCHANT_WEBHOOKS: is not JSON/],
      ['["acme"]', /a JSON object keyed by merchant id/],
      [JSON.stringify({ acme: { url: 'ftp://acme.example', secrets: [secret] } }), /merchant "acme" has a url/],
      [
        JSON.stringify({ acme: { url: 'https://a.example', secrets: ['short-secret'] } }),
        /merchant "acme" has a secret shorter/,
      ],
      [
        JSON.stringify({ acme: { url: 'https://a.example', secrets: [] } }),
        /merchant "acme" needs at least one secret/,
      ],
      [
        JSON.stringify({ Acme: { url: 'https://a.example', secrets: [secret] } }),
        /merchant "Acme" is not a merchant id/,
      ],
    ] as const) {
      const message = configError(() => parseConfig(workerSchema, { ...worker, MERCHANT_WEBHOOKS: value }));
      assert.match(message, problem);
      assert.ok(!message.includes('short-secret') && !message.includes(secret));
    }
    const production = { ...worker, NODE_ENV: 'production', TEMPORAL_TLS: 'true' };
    const plain = JSON.stringify({ acme: { url: 'http://acme.example', secrets: [randomBytes(24).toString('hex')] } });
    assert.match(
      configError(() => parseConfig(workerSchema, { ...production, MERCHANT_WEBHOOKS: plain })),
      /MERCHANT_WEBHOOKS: merchant "acme" needs an https:\/\/ URL in production/,
    );
    const weak = JSON.stringify({ acme: { url: 'https://acme.example', secrets: [secret] } });
    const weakMessage = configError(() => parseConfig(workerSchema, { ...production, MERCHANT_WEBHOOKS: weak }));
    assert.match(weakMessage, /MERCHANT_WEBHOOKS: merchant "acme": secret 1 is shorter than 32 characters/);
    assert.ok(!weakMessage.includes(secret));
  });

  it('NODE_ENV=production refuses a database without a password, or one off loopback without TLS', () => {
    const production = { ...worker, NODE_ENV: 'production', TEMPORAL_TLS: 'true' };
    // What production says of DATABASE_URL (the fixture's other settings are weak on purpose).
    const problem = (url: string) => {
      try {
        parseConfig(workerSchema, { ...production, DATABASE_URL: url });
        return '';
      } catch (err) {
        assert.ok(err instanceof ConfigError);
        return err.message
          .split('\n')
          .filter((line) => line.includes('DATABASE_URL'))
          .join('\n');
      }
    };
    assert.match(
      problem('postgres://payments@127.0.0.1:5432/payments'),
      /DATABASE_URL: needs a password in production \(postgres:\/\/user:password@host:port\/database\)/,
    );
    const password = 'db-secret-0123456789';
    for (const url of [
      `postgres://payments:${password}@db.internal:5432/payments`,
      `postgres://payments:${password}@10.0.0.5/payments?sslmode=prefer`,
      `postgresql://payments:${password}@db.internal/payments?sslmode=disable`,
    ]) {
      const message = problem(url);
      assert.match(message, /DATABASE_URL: reaches \S+ without TLS: production needs \?sslmode=verify-full/, url);
      assert.ok(!message.includes(password), 'no password echoed');
    }
    for (const url of [
      `postgres://payments:${password}@db.internal:5432/payments?sslmode=verify-full`,
      `postgres://payments:${password}@db.internal:5432/payments?sslmode=require`,
      `postgres://payments:${password}@127.0.0.1:5432/payments`,
      `postgres://payments:${password}@localhost/payments`,
      `postgres://payments:${password}@[::1]:5432/payments`,
    ]) {
      assert.equal(problem(url), '', url);
    }
  });

  it('NODE_ENV=production refuses the sandbox token, a missing encryption key and a plain-http PUBLIC_BASE_URL', () => {
    const production = { NODE_ENV: 'production', TEMPORAL_TLS: 'true' }; // plaintext Temporal: production.test.ts
    const workerMessage = configError(() =>
      parseConfig(workerSchema, {
        ...worker,
        ...production,
        PROVIDER_TOKEN: SANDBOX_TOKEN,
        ENCRYPTION_KEYS: undefined,
      }),
    );
    assert.match(workerMessage, /PROVIDER_TOKEN: is the sandbox's token/);
    assert.match(workerMessage, /ENCRYPTION_KEYS: is required/);
    assert.ok(!workerMessage.includes(SANDBOX_TOKEN));
    const serverMessage = configError(() =>
      parseConfig(serverSchema, { ...valid, ...production, PUBLIC_BASE_URL: 'http://pay.example' }),
    );
    assert.match(serverMessage, /PUBLIC_BASE_URL: must be an https:\/\/ URL in production/);
    assert.match(
      configError(() => parseConfig(serverSchema, { ...valid, ...production })),
      /PUBLIC_BASE_URL/,
    );
    const strong = {
      ...valid,
      ...production,
      PUBLIC_BASE_URL: 'https://pay.example',
      MERCHANT_API_KEYS: `acme:${randomBytes(24).toString('base64url')}`,
      OPERATOR_API_KEYS: `ops:${randomBytes(24).toString('hex')}`,
      CALLBACK_SECRET: randomBytes(32).toString('base64url'),
      FINGERPRINT_SECRET: randomBytes(24).toString('hex'),
      ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')},k0:${randomBytes(32).toString('base64')}`,
      SIGNING_KEYS: `s1:${randomBytes(32).toString('base64')}`,
      VAULT_KEYS: `v1:${randomBytes(32).toString('base64')}`,
      // Off loopback the vault is reached over TLS (production refuses redis:// there: production.test.ts).
      VAULT_URL: `rediss://:${randomBytes(16).toString('hex')}@vault.internal:6379`,
    };
    assert.equal(parseConfig(serverSchema, strong).PUBLIC_BASE_URL, 'https://pay.example');
    // Outside production the same settings are fine (local development with the sandbox).
    assert.equal(parseConfig(workerSchema, { ...worker, PROVIDER_TOKEN: SANDBOX_TOKEN }).PROVIDER_TOKEN, SANDBOX_TOKEN);
  });
});

/** Each bad value of a per-merchant setting is refused, the problem named after the setting. */
function assertEntriesNamed(name: string, cases: readonly (readonly [string, RegExp])[]): void {
  for (const [text, problem] of cases) {
    assert.match(
      configError(() => parseConfig(serverSchema, { ...valid, [name]: text })),
      new RegExp(`${name}: ${problem.source}`),
    );
  }
}
