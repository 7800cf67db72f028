import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runEntry } from './support/process';
import { webUiCodecLines } from '../src/local/web-ui-codec-lines';
import { cliSchema } from '../src/cli/ops-context';
import { ConfigError, parseConfig } from '../src/config/config-loading';
import { SANDBOX_TOKEN, serverSchema, workerSchema } from '../src/config/process-settings';

// NODE_ENV=production: each process refuses to start on development settings and names what is wrong.

const KEY = `prod-1:${randomBytes(32).toString('base64')}`;
const SIGNING_KEY = `prod-sign-1:${randomBytes(32).toString('base64')}`;
const VAULT_KEY = `prod-vault-1:${randomBytes(32).toString('base64')}`;
const strong = () => randomBytes(32).toString('base64url');
const VAULT_URL = `redis://:${strong()}@127.0.0.1:1`;
/** Production-worthy server settings but for what a test makes weak. */
const serverEnv = () => ({
  PROVIDER_BASE_URL: 'https://provider.example',
  PROVIDER_TOKEN: strong(),
  MERCHANT_API_KEYS: `acme:${strong()}`,
  OPERATOR_API_KEYS: `ada:${strong()}`,
  CALLBACK_SECRET: strong(),
  FINGERPRINT_SECRET: strong(),
  ENCRYPTION_KEYS: KEY,
  SIGNING_KEYS: SIGNING_KEY,
  VAULT_KEYS: VAULT_KEY,
  VAULT_URL,
  PUBLIC_BASE_URL: 'https://pay.example',
  TEMPORAL_ADDRESS: 'temporal.internal:7233',
  TEMPORAL_TLS: 'true',
  DATABASE_URL: `postgres://payments:${strong()}@db.internal:5432/payments?sslmode=verify-full`,
});
const dataDir = mkdtempSync(join(tmpdir(), 'production-test-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

const run = (entry: string, env: Record<string, string>) => runEntry(entry, { NODE_ENV: 'production', ...env });

describe('production refuses development settings', () => {
  it("the worker: the sandbox's token, a missing encryption key", async () => {
    const { code, output } = await run('worker.ts', {
      PROVIDER_BASE_URL: 'https://provider.example',
      PROVIDER_TOKEN: SANDBOX_TOKEN,
      VAULT_URL: 'redis://127.0.0.1:1',
    });
    assert.equal(code, 1);
    assert.match(output, /PROVIDER_TOKEN: is the sandbox's token/);
    assert.match(output, /ENCRYPTION_KEYS: is required/);
    assert.ok(!output.includes(SANDBOX_TOKEN), 'no value echoed');
  });

  it('the server: a plain-http PUBLIC_BASE_URL', async () => {
    const env = { ...serverEnv(), PUBLIC_BASE_URL: 'http://pay.example' };
    const { code, output } = await run('server.ts', env);
    assert.equal(code, 1);
    assert.match(
      output,
      /invalid configuration:\n {2}PUBLIC_BASE_URL: must be an https:\/\/ URL in production \(callbacks carry tokens\)\n$/,
    );
    assert.ok(!output.includes(env.OPERATOR_API_KEYS) && !output.includes(KEY));
  });

  it('the server: plain-http provider URLs, Redis without a password, weak secrets and keys, each named', async () => {
    const weak = {
      PROVIDER_BASE_URL: 'http://provider.example',
      PROVIDER_MOBILE_MONEY_BASE_URL: 'http://momo.provider.example',
      PROVIDER_STATUS_URL: 'http://provider.example/status/{transaction_id}',
      PROVIDER_STATUS_BY_REFERENCE_URL: 'HTTP://provider.example/status?reference={reference}',
      PROVIDER_BANKS_URL: 'http://provider.example/banks',
      VAULT_URL: 'redis://vault.internal:6379',
      ENCRYPTION_KEYS: `${KEY},prod-0:${KEY.slice(KEY.indexOf(':') + 1)}`,
      CALLBACK_SECRET: 'callback-secret-'.repeat(3),
      FINGERPRINT_SECRET: 'fingerprint'.repeat(4),
      MERCHANT_API_KEYS: `acme:${strong()},globex:${'x'.repeat(40)}`,
      OPERATOR_API_KEYS: `ada:${strong()},bo:${strong()},cy:operator-key-20chars`,
    };
    const { code, output } = await run('server.ts', { ...serverEnv(), ...weak });
    assert.equal(code, 1);
    const https = /must be an https:\/\/ URL in production \(card data and the provider token would cross in clear\)/;
    for (const name of [
      'PROVIDER_BASE_URL',
      'PROVIDER_MOBILE_MONEY_BASE_URL',
      'PROVIDER_STATUS_URL',
      'PROVIDER_STATUS_BY_REFERENCE_URL',
      'PROVIDER_BANKS_URL',
    ]) {
      assert.match(output, new RegExp(`  ${name}: ${https.source}`));
    }
    assert.match(output, / {2}VAULT_URL: needs a password in production/);
    assert.match(output, / {2}ENCRYPTION_KEYS: key "prod-0" repeats key "prod-1"/);
    assert.match(output, / {2}CALLBACK_SECRET: is low in entropy/);
    assert.match(output, / {2}FINGERPRINT_SECRET: is low in entropy/);
    assert.match(output, / {2}MERCHANT_API_KEYS: the key of entry 2 is low in entropy/);
    assert.match(output, / {2}OPERATOR_API_KEYS: the key of entry 3 is shorter than 32 characters/);
    for (const secret of [weak.CALLBACK_SECRET, weak.FINGERPRINT_SECRET, 'x'.repeat(40), 'operator-key-20chars', KEY]) {
      assert.ok(!output.includes(secret), 'no secret echoed');
    }
  });

  it('the worker: plain-http provider URLs, Redis without a password, a low-entropy encryption key', async () => {
    const { code, output } = await run('worker.ts', {
      PROVIDER_BASE_URL: 'http://provider.example',
      PROVIDER_TOKEN: strong(),
      PROVIDER_STATUS_URL: '/status/{transaction_id}',
      VAULT_URL: 'redis://user:@vault.internal:6379',
      ENCRYPTION_KEYS: `prod-1:${Buffer.alloc(32, 3).toString('base64')}`,
    });
    assert.equal(code, 1);
    assert.match(output, / {2}PROVIDER_BASE_URL: must be an https:\/\/ URL in production/);
    assert.ok(!output.includes('PROVIDER_STATUS_URL'), 'a path is relative to the (refused) base');
    assert.match(output, / {2}VAULT_URL: needs a password in production/);
    assert.match(output, / {2}ENCRYPTION_KEYS: key "prod-1" is low in entropy/);
  });

  it('npm start: generated keys and the sandbox, before it creates or starts anything', async () => {
    const first = await run('start.ts', { DATA_DIR: dataDir });
    assert.equal(first.code, 1);
    assert.match(first.output, /ENCRYPTION_KEYS: is required in production/);
    assert.match(first.output, /PUBLIC_BASE_URL: must be an https:\/\/ URL/);
    const second = await run('start.ts', {
      DATA_DIR: dataDir,
      ENCRYPTION_KEYS: KEY,
      PUBLIC_BASE_URL: 'https://pay.example',
    });
    assert.equal(second.code, 1);
    for (const name of [
      'MERCHANT_API_KEYS',
      'OPERATOR_API_KEYS',
      'CALLBACK_KEYS',
      'FINGERPRINT_SECRET',
      'PROVIDER_BASE_URL',
    ]) {
      assert.match(second.output, new RegExp(`  ${name}`));
    }
    // Everything set, but weak: refused too, before anything starts.
    const third = await run('start.ts', {
      ...serverEnv(),
      DATA_DIR: dataDir,
      CALLBACK_SECRET: 'c'.repeat(40),
      PROVIDER_STATUS_URL: 'http://provider.example/status/{transaction_id}',
      VAULT_URL: '',
    });
    assert.equal(third.code, 1);
    assert.match(third.output, / {2}CALLBACK_SECRET: is low in entropy/);
    assert.match(third.output, / {2}PROVIDER_STATUS_URL: must be an https:\/\/ URL in production/);
    assert.ok(!third.output.includes('c'.repeat(40)));
    assert.match(second.output, / {2}TEMPORAL_ADDRESS \(the embedded Temporal dev server is not for production\)/);
    const fourth = await run('start.ts', {
      DATA_DIR: dataDir,
      ENCRYPTION_KEYS: KEY,
      PUBLIC_BASE_URL: 'https://pay.example',
      TEMPORAL_ADDRESS: 'temporal.internal:7233',
    });
    assert.equal(fourth.code, 1);
    assert.match(
      fourth.output,
      / {2}TEMPORAL_TLS \(production refuses a plaintext connection to Temporal at temporal\.internal:7233/,
    );
    assert.ok(!fourth.output.includes('  TEMPORAL_ADDRESS'));
    assert.ok(!existsSync(join(dataDir, 'secrets.json')), 'no secrets generated');
    assert.match(second.output, / {2}DATABASE_URL \(the private PostgreSQL of npm start is not for production\)/);
    assert.ok(!existsSync(join(dataDir, 'postgres')), 'no PostgreSQL started');
  });

  it('the server and the worker: a database without a password, or off loopback in clear, never echoed', async () => {
    const password = strong();
    const plain = `postgres://payments:${password}@db.internal:5432/payments`;
    const server = await run('server.ts', { ...serverEnv(), DATABASE_URL: plain });
    assert.equal(server.code, 1);
    assert.match(
      server.output,
      /invalid configuration:\n {2}DATABASE_URL: reaches db\.internal without TLS: production needs \?sslmode=verify-full \(or sslmode=require\)/,
    );
    assert.ok(!server.output.includes(password), 'no password echoed');
    const worker = await run('worker.ts', {
      ...serverEnv(),
      DATABASE_URL: 'postgres://payments@db.internal:5432/payments?sslmode=verify-full',
    });
    assert.equal(worker.code, 1);
    assert.match(worker.output, / {2}DATABASE_URL: needs a password in production/);
  });

  it('the server: one secret for two purposes, two merchants or an operator, named by owner and never echoed', async () => {
    const env = serverEnv();
    const encryptionKey = KEY.slice(KEY.indexOf(':') + 1);
    const shared = strong();
    const merchantKey = strong();
    const { code, output } = await run('server.ts', {
      ...env,
      SIGNING_KEYS: `prod-sign-2:${encryptionKey}`,
      VAULT_KEYS: `prod-vault-2:${Buffer.from(encryptionKey, 'base64').toString('base64url')}`,
      CALLBACK_SECRET: shared,
      FINGERPRINT_SECRET: shared,
      CODEC_TOKEN_SECRET: env.PROVIDER_TOKEN,
      MERCHANT_API_KEYS: `acme:${merchantKey},globex:${merchantKey}`,
      OPERATOR_API_KEYS: `ada:${shared}`,
    });
    assert.equal(code, 1);
    const lines = [
      / {2}SIGNING_KEYS: key "prod-sign-2" is also ENCRYPTION_KEYS's key "prod-1"/,
      / {2}VAULT_KEYS: key "prod-vault-2" is also ENCRYPTION_KEYS's key "prod-1"/,
      / {2}FINGERPRINT_SECRET: the secret is also CALLBACK_SECRET's the secret/,
      / {2}MERCHANT_API_KEYS: the key of merchant "globex" is also the key of merchant "acme"/,
      / {2}OPERATOR_API_KEYS: the key of operator "ada" is also CALLBACK_SECRET's the secret/,
    ];
    for (const line of lines) assert.match(output, line);
    for (const secret of [encryptionKey, shared, merchantKey]) assert.ok(!output.includes(secret), 'no secret echoed');
    // The same settings, each secret its own, pass.
    assert.equal(
      parseConfig(serverSchema, { ...env, NODE_ENV: 'production', CODEC_TOKEN_SECRET: strong() }).VAULT_KEYS?.primary
        .id,
      'prod-vault-1',
    );
  });

  it('the server and the worker: a vault in clear off loopback, metrics on every interface, http codec origins, no VAULT_KEYS', async () => {
    const password = strong();
    const server = await run('server.ts', {
      ...serverEnv(),
      VAULT_URL: `redis://:${password}@vault.internal:6379`,
      METRICS_HOST: '0.0.0.0',
      CODEC_CORS_ORIGINS: 'https://temporal-ui.example,http://temporal-ui.example',
      VAULT_KEYS: '',
    });
    assert.equal(server.code, 1);
    assert.match(server.output, / {2}VAULT_URL: reaches vault\.internal without TLS: production needs rediss:\/\//);
    assert.match(server.output, / {2}METRICS_HOST: listens on every interface/);
    assert.match(server.output, / {2}CODEC_CORS_ORIGINS: origin 2 is not https:\/\//);
    assert.match(server.output, / {2}VAULT_KEYS: is required in production/);
    assert.ok(!server.output.includes(password), 'no password echoed');
    const worker = await run('worker.ts', {
      ...serverEnv(),
      VAULT_URL: `redis://:${password}@10.0.0.7:6379`,
      WORKER_METRICS_ADDRESS: '0.0.0.0:9464',
    });
    assert.equal(worker.code, 1);
    assert.match(worker.output, / {2}VAULT_URL: reaches 10\.0\.0\.7 without TLS/);
    assert.match(worker.output, / {2}WORKER_METRICS_ADDRESS: listens on every interface/);
    // rediss:// off loopback, and redis:// on it, pass.
    for (const vault of [`rediss://:${password}@vault.internal:6379`, `redis://:${password}@127.0.0.1:6379`]) {
      assert.equal(
        parseConfig(workerSchema, { ...serverEnv(), NODE_ENV: 'production', VAULT_URL: vault }).VAULT_URL,
        vault,
      );
    }
  });

  it('npm start in production prints no live Web UI decode URL, only how to ask for one', () => {
    const env = { OPERATOR_API_KEYS: `ada:${strong()}`, CODEC_TOKEN_SECRET: strong() };
    const development = webUiCodecLines(env, 'https://pay.example').join('\n');
    assert.match(development, /https:\/\/pay\.example\/codec\/ui\/\S+/, 'outside production: a live URL');
    const production = webUiCodecLines({ ...env, NODE_ENV: 'production' }, 'https://pay.example').join('\n');
    assert.ok(!production.includes('/codec/ui/'), production);
    assert.match(production, /npm run ops -- codec-url/);
  });

  it('the worker: a plaintext Temporal, before it connects to anything', async () => {
    const { code, output } = await run('worker.ts', {
      ...serverEnv(),
      TEMPORAL_ADDRESS: 'temporal.internal:7233',
      TEMPORAL_API_KEY: 'temporal-api-key-0123456789',
      TEMPORAL_TLS: 'false',
    });
    assert.equal(code, 1);
    assert.match(output, /worker: invalid configuration:\n {2}TEMPORAL_TLS: production refuses a plaintext connection/);
    assert.ok(!output.includes('temporal-api-key'), 'no key echoed');
  });
});

describe('production: Temporal only over TLS, plaintext only on loopback and only when asked', () => {
  const { TEMPORAL_ADDRESS: _address, TEMPORAL_TLS: _tls, ...strongServer } = serverEnv();
  const server = { ...strongServer, NODE_ENV: 'production' };
  const problems = (env: Record<string, string>): string => {
    try {
      parseConfig(serverSchema, { ...server, ...env });
      return '';
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      return err.message;
    }
  };

  it('accepts TLS (TEMPORAL_TLS or any TLS setting) and an API key', () => {
    assert.equal(problems({ TEMPORAL_ADDRESS: 'temporal.internal:7233', TEMPORAL_TLS: 'true' }), '');
    assert.equal(problems({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_API_KEY: 'k'.repeat(20) }), '');
    assert.equal(problems({ TEMPORAL_ADDRESS: 'temporal.internal:7233', TEMPORAL_TLS_SERVER_NAME: 'temporal' }), '');
  });

  it('refuses plaintext and names TEMPORAL_TLS, offering the opt-out only for a loopback address', () => {
    const remote = problems({ TEMPORAL_ADDRESS: 'temporal.internal:7233' });
    assert.match(
      remote,
      /TEMPORAL_TLS: production refuses a plaintext connection to Temporal at temporal\.internal:7233/,
    );
    assert.ok(!remote.includes('TEMPORAL_ALLOW_PLAINTEXT_LOOPBACK'));
    const local = problems({});
    assert.match(local, /TEMPORAL_TLS: production refuses a plaintext connection to Temporal at localhost:7233: /);
    assert.match(local, /or TEMPORAL_ALLOW_PLAINTEXT_LOOPBACK=true for this loopback address/);
    const disabled = problems({
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_API_KEY: 'k'.repeat(20),
      TEMPORAL_TLS: 'false',
    });
    assert.match(disabled, /TEMPORAL_TLS: production refuses a plaintext connection/);
  });

  it('TEMPORAL_ALLOW_PLAINTEXT_LOOPBACK=true admits 127.0.0.0/8, ::1 and localhost, nothing else', () => {
    for (const address of ['127.0.0.1:7233', '127.0.0.53:7233', '[::1]:7233', 'localhost:7233']) {
      assert.equal(problems({ TEMPORAL_ADDRESS: address, TEMPORAL_ALLOW_PLAINTEXT_LOOPBACK: 'true' }), '', address);
    }
    assert.equal(problems({ TEMPORAL_ALLOW_PLAINTEXT_LOOPBACK: 'true' }), '', 'the default address is localhost');
    for (const address of ['10.1.2.3:7233', 'temporal:7233', 'localhost.example.com:7233']) {
      assert.match(
        problems({ TEMPORAL_ADDRESS: address, TEMPORAL_ALLOW_PLAINTEXT_LOOPBACK: 'true' }),
        new RegExp(`TEMPORAL_ALLOW_PLAINTEXT_LOOPBACK: covers only a loopback address .*, not ${address}`),
      );
    }
    assert.match(
      problems({ TEMPORAL_ADDRESS: '127.0.0.1:7233', TEMPORAL_ALLOW_PLAINTEXT_LOOPBACK: 'yes' }),
      /TEMPORAL_ALLOW_PLAINTEXT_LOOPBACK: must be true or false/,
    );
  });

  it('the operator CLI and register-search-attributes hold to the same rule', async () => {
    assert.throws(
      () => parseConfig(cliSchema, { NODE_ENV: 'production', ENCRYPTION_KEYS: KEY, TEMPORAL_ADDRESS: 'temporal:7233' }),
      /TEMPORAL_TLS: production refuses a plaintext connection to Temporal at temporal:7233/,
    );
    const { code, output } = await run('register-search-attributes.ts', { TEMPORAL_ADDRESS: 'temporal:7233' });
    assert.equal(code, 1);
    assert.match(output, /TEMPORAL_TLS: production refuses a plaintext connection to Temporal at temporal:7233/);
  });
});
