import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SANDBOX_TOKEN } from '../src/config';

// NODE_ENV=production: each process refuses to start on development settings and names what is wrong.

const KEY = `prod-1:${Buffer.alloc(32, 3).toString('base64')}`;
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
    assert.ok(!existsSync(join(dataDir, 'secrets.json')), 'no secrets generated');
  });
});
