import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { it } from 'node:test';

// `npm run bench` as a small run, so that the benchmark keeps working as the stack changes (its figures come from
// full runs, not from here): it starts its own Temporal, Redis, sandbox, worker, twin worker and server, runs every
// phase, and prints the table of figures and targets.

const SMALL = {
  BENCH_CLIENTS: '4',
  BENCH_RATE_SECONDS: '3',
  BENCH_WARMUP_SECONDS: '1',
  BENCH_SERIAL: '3',
  BENCH_OPEN_SECONDS: '2',
  BENCH_WAITING: '20',
  BENCH_ITEMS: '40',
  BENCH_CONCURRENCY: '10',
};

it('npm run bench runs every phase through the real stack and prints its figures against their targets', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'scripts', 'bench.ts')], {
    env: { ...process.env, ...SMALL },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  assert.equal(code, 0, output);
  const figure = (name: string) => new RegExp(`\\[bench\\]\\s+${name}\\s+\\S`);
  assert.match(output, figure('twin rate \\(closed loop\\)\\s+[\\d.]+ /s'));
  assert.match(output, figure('full-stack rate \\(closed loop\\)\\s+[\\d.]+ payments/s'));
  assert.match(output, /full \/ twin rate\s+[\d.]+\s+≥ 0\.95\s+(met|NOT MET)/);
  assert.match(output, /one at a time full \/ twin\s+[\d.]+\s+≤ 1\.3\s+(met|NOT MET)/);
  assert.match(output, /half load callback → final p99\s+\d+ ms\s+≤ 100 ms\s+(met|NOT MET)/);
  assert.match(output, /worker RSS, 20 waiting \(peak\)\s+\d+ MB\s+≤ 300 MB\s+(met|NOT MET)/);
  assert.match(output, /batch: 40 items\s+[\d.]+ items\/s/);
  assert.match(output, /history events per payment \(callback after ack\) \/ twin\s+\d+ \(\+5 at close\) \/ \d+/);
  // Wrong outcomes end the run with a non-zero code; a right one says so.
  assert.match(output, /callback → final status \(history\): p50 \d+ ms · p99 \d+ ms \(n=\d+\)/);
  assert.match(output, /\[bench\] DONE/);
});
