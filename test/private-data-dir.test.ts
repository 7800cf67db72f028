import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { freePort } from '../src/local/free-port';
import { exposedPaths } from './support/file-modes';

// `npm run cluster` with a private DATA_DIR, as root too (PostgreSQL then runs as its own OS user, which must reach
// its data and its password file through the private directory): it starts, and what it writes stays private.

const dataDir = mkdtempSync(join(tmpdir(), 'private-data-dir-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

it('npm run cluster starts in a private DATA_DIR (as root too) and keeps everything in it private', async () => {
  chmodSync(dataDir, 0o755); // an old, readable data directory: made private at start
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    CLUSTER_TEMPORAL_PORT: String(await freePort()),
    CLUSTER_UI_PORT: String(await freePort()),
    CLUSTER_LOG: 'false',
  };
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'src', 'cluster.ts')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    const ready = await Promise.race([
      new Promise<boolean>((resolve) => {
        const check = setInterval(() => {
          if (!output.includes('ready in')) return;
          clearInterval(check);
          resolve(true);
        }, 200);
        void exited.then(() => clearInterval(check));
      }),
      exited.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 120_000)),
    ]);
    assert.ok(ready, output);
    const mode = statSync(dataDir).mode & 0o777;
    assert.ok(mode === 0o700 || mode === 0o710, `DATA_DIR is ${mode.toString(8)}`);
    assert.deepEqual(exposedPaths(dataDir), []);
    if (process.getuid?.() === 0) {
      assert.equal(statSync(join(dataDir, 'cluster', 'postgres', 'password')).mode & 0o777, 0o600);
    }
  } finally {
    child.kill('SIGINT');
    await exited;
  }
});
