import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';

// `npm run chaos` as a smaller run: every fault of the full run (three worker kills, a Temporal restart, an API server
// kill, Redis stopped for 10 s, PostgreSQL frozen and stopped for 10 s and killed, a faulty provider and faulty
// callbacks) over fewer payments. It starts its own Temporal (persisted, so that it can restart), Redis, PostgreSQL,
// sandbox, worker and servers.

it('npm run chaos loses, doubles and strands nothing through every fault, explains every outcome, and every record equals its workflow', async (t) => {
  const report = join(tmpdir(), `chaos-test-report-${process.pid}.json`);
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'scripts', 'chaos.ts')], {
    env: {
      ...process.env,
      CHAOS_PAYMENTS: '60',
      CHAOS_BATCH_ITEMS: '30',
      CHAOS_LOAD_MS: '30000',
      CHAOS_SETTLE_MS: '150000',
      CHAOS_RECORDS_MS: '90000',
      CHAOS_LIMIT_MS: '360000',
      CHAOS_REPORT: report,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  rmSync(report, { force: true });
  const results = output.slice(output.indexOf('[chaos] results'));
  for (const line of results.trim().split('\n')) t.diagnostic(line);
  assert.equal(code, 0, output);
  assert.equal((results.match(/fault: worker SIGKILL/g) ?? []).length, 3, results);
  for (const fault of [
    /fault: Temporal server restart/,
    /fault: API server B SIGKILL/,
    /fault: Redis stopped 10 s/,
    /fault: PostgreSQL frozen 10 s \(SIGSTOP\)/,
    /fault: PostgreSQL stopped 10 s/,
    /fault: PostgreSQL SIGKILL/,
  ]) {
    assert.match(results, fault);
  }
  assert.match(results, /provider requests \d+: faults [1-9]\d* /);
  assert.match(results, /callbacks: [1-9]\d* faults/);
  assert.match(results, /settled 90\/90 /);
  assert.match(results, /batch completed: .* \(exact against its 30 items\)/);
  assert.match(results, /lost 0 · stuck 0 · double initiations 0 · unexplained 0 · wrong answers 0/);
  assert.match(results, /wrong 0, unresolved 0/);
  assert.match(results, /records: 91\/91 equal their workflow's final state/);
  assert.match(results, /records lost 0 · regressed 0 · differing 0 · workflows unreadable 0/);
  assert.match(output, /\[chaos\] PASS/);
});
