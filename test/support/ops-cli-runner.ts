import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { OPS_SCRIPT } from '../../src/local/build-outputs';
import { eventually } from '../../src/local/eventually';
import { TEST_ENCRYPTION_KEYS, TEST_SIGNING_KEYS, testEnvironment } from './test-stack';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npm run ops -- …` as a process against the test dev server and its record database. */
export function ops(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(
    process.execPath,
    // Compiled (`npm run build`): through tsx each run would cost ~0.9 s more CPU (1.5 s against 0.6 to start).
    [OPS_SCRIPT, ...args],
    {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: testEnvironment().address,
        ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
        SIGNING_KEYS: TEST_SIGNING_KEYS,
        // Resolutions and batch controls are recorded there as operator actions.
        DATABASE_URL: testEnvironment().databaseUrl,
        // Outside production the CLI fills unset keys from DATA_DIR's secrets.json, which `npm start` writes into
        // the clone's `.data`; the tests' keys are only the ones they set.
        DATA_DIR: join(__dirname, 'no-local-secrets'),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Runs a `--json` command until its parsed output satisfies the check (visibility lags a workflow by a moment). */
export async function opsJsonUntil<T>(args: string[], check: (value: T) => boolean): Promise<T> {
  return eventually(
    async () => {
      const run = await ops([...args, '--json']);
      assert.equal(run.code, 0, run.stderr);
      const value = JSON.parse(run.stdout) as T;
      assert.ok(check(value), `it printed ${run.stdout.slice(0, 2000)}`);
      return value;
    },
    {
      timeoutMs: 15_000,
      intervalMs: 300,
      what: `ops ${args.join(' ')} --json printing what ${check.toString()} wants`,
    },
  );
}
