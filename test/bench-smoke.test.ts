import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { it } from 'node:test';

// `npm run bench` as a small run, so that the benchmark keeps working as the stack changes (its figures come from
// full runs, not from here): it starts its own Temporal, Redis, sandbox, worker and server.

it('npm run bench completes a small batch through the real stack and prints its figures', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'scripts', 'bench.ts')], {
    env: { ...process.env, BENCH_ITEMS: '40', BENCH_CONCURRENCY: '10' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  assert.equal(code, 0, output);
  assert.match(output, /items\s+40 \(succeeded 36, failed 4\)/);
  assert.match(output, /throughput\s+[\d.]+ items\/s/);
  assert.match(output, /peak worker memory\s+\d+ MB RSS/);
  assert.match(output, /\[bench\] PASS/);
});
