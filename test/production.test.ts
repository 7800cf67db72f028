import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cliSchema } from '../src/cli/context';
import { ConfigError, parseConfig, SANDBOX_TOKEN, serverSchema } from '../src/config';

// NODE_ENV=production: each process refuses to start on development settings and names what is wrong.

const KEY = `prod-1:${Buffer.alloc(32, 3).toString('base64')}`;
const SIGNING_KEY = `prod-sign-1:${Buffer.alloc(32, 4).toString('base64')}`;
const dataDir = mkdtempSync(join(tmpdir(), 'production-test-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

function run(entry: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'src', entry)], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

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
    const { code, output } = await run('server.ts', {
      MERCHANT_API_KEYS: 'acme:prod-merchant-key-0123456789',
      OPERATOR_API_KEYS: 'ops:prod-operator-key-0123456789',
      CALLBACK_SECRET: 'c'.repeat(40),
      ENCRYPTION_KEYS: KEY,
      VAULT_URL: 'redis://127.0.0.1:1',
      PUBLIC_BASE_URL: 'http://pay.example',
    });
    assert.equal(code, 1);
    assert.match(output, /PUBLIC_BASE_URL: must be an https:\/\/ URL in production/);
    assert.ok(!output.includes('prod-operator-key') && !output.includes(KEY));
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
    for (const name of ['MERCHANT_API_KEYS', 'OPERATOR_API_KEYS', 'CALLBACK_SECRET', 'PROVIDER_BASE_URL']) {
      assert.match(second.output, new RegExp(`  ${name}`));
    }
    assert.match(second.output, / {2}TEMPORAL_ADDRESS \(the embedded Temporal dev server is not for production\)/);
    const third = await run('start.ts', {
      DATA_DIR: dataDir,
      ENCRYPTION_KEYS: KEY,
      PUBLIC_BASE_URL: 'https://pay.example',
      TEMPORAL_ADDRESS: 'temporal.internal:7233',
    });
    assert.equal(third.code, 1);
    assert.match(
      third.output,
      / {2}TEMPORAL_TLS \(production refuses a plaintext connection to Temporal at temporal\.internal:7233/,
    );
    assert.ok(!third.output.includes('  TEMPORAL_ADDRESS'));
    assert.ok(!existsSync(join(dataDir, 'secrets.json')), 'no secrets generated');
  });

  it('the worker: a plaintext Temporal, before it connects to anything', async () => {
    const { code, output } = await run('worker.ts', {
      PROVIDER_BASE_URL: 'https://provider.example',
      PROVIDER_TOKEN: 'real-provider-token',
      ENCRYPTION_KEYS: KEY,
      SIGNING_KEYS: SIGNING_KEY,
      CALLBACK_SECRET: 'c'.repeat(40),
      PUBLIC_BASE_URL: 'https://pay.example',
      VAULT_URL: 'redis://127.0.0.1:1',
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
  const server = {
    NODE_ENV: 'production',
    MERCHANT_API_KEYS: 'acme:prod-merchant-key-0123456789',
    OPERATOR_API_KEYS: 'ada:prod-operator-key-0123456789',
    CALLBACK_SECRET: 'c'.repeat(40),
    ENCRYPTION_KEYS: KEY,
    SIGNING_KEYS: SIGNING_KEY,
    VAULT_URL: 'redis://127.0.0.1:1',
    PUBLIC_BASE_URL: 'https://pay.example',
    PROVIDER_BASE_URL: 'https://provider.example',
    PROVIDER_TOKEN: 'real-provider-token',
  };
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
