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
  BENCH_GET_SECONDS: '2',
  BENCH_WAITING: '20',
  BENCH_ITEMS: '40',
  BENCH_CONCURRENCY: '10',
  BENCH_CREDIT_SECONDS: '3',
  // Its write counts may miss a few rows: the test asks only that each payment wrote something.
  BENCH_STATS_SETTLE_SECONDS: '2',
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
  // Judged on the record: when its final write committed (PostgreSQL's commit time), as GET answers from then on.
  assert.match(output, /callback → final status in the record \(its commit\): p50 \d+ ms · p99 \d+ ms \(n=[1-9]/);
  assert.match(output, /half load callback → final p99 \(record\)\s+\d+ ms\s+≤ 100 ms\s+(met|NOT MET)/);
  assert.match(output, /half load callback → upsert in Temporal p50 \/ p99\s+\d+ \/ \d+ ms/);
  assert.match(output, /worker RSS, 20 waiting \(peak\)\s+\d+ MB\s+≤ 300 MB\s+(met|NOT MET)/);
  assert.match(output, /batch: 40 items\s+[\d.]+ items\/s/);
  assert.match(output, /batch \/ single bank credits \([\d.]+\/s, 10 clients\)\s+[\d.]+\s+≥ 0\.8\s+(met|NOT MET)/);
  // CPU per item beside a single credit's: when both keep the cores busy, the batch's ratio is theirs.
  const batchCpu = /CPU ms per batch item \/ per single credit \(all processes\)\s+([\d.]+) \/ ([\d.]+)/.exec(output);
  assert.ok(batchCpu && Number(batchCpu[1]) > 0 && Number(batchCpu[2]) > 0, batchCpu?.[0] ?? 'no batch CPU line');
  assert.match(output, /history events per payment, open loop \(median\) \/ twin\s+\d+ \/ \d+/);
  // The cost phase (g): each type and scenario beside the twin, against the targets.
  assert.match(
    output,
    /history events, callback after ack \(to close, most of any type\) \/ twin\s+\d+ \/ \d+\s+≤ twin \+ 2\s+(met|NOT MET)/,
  );
  // A batch item's row: it returns its outcome to its batch rather than signalling it, so fewer events than a credit.
  const item = /batch item 00-success\s+(\d+)/.exec(output);
  const credit = /bank_credit 00-success\s+(\d+)/.exec(output);
  assert.ok(item && credit, item?.[0] ?? 'no batch item row in the cost table');
  assert.ok(Number(item[1]) < Number(credit[1]), `${item[0]} against ${credit[0]}`);
  assert.match(output, /CPU per payment \/ per twin \(closed loop\)\s+[\d.]+\s+≤ 1\.2\s+(met|NOT MET)/);
  // CPU per payment by process, PostgreSQL's whole process tree among them, beside the twin's.
  const perProcess = (name: string) => {
    const match = new RegExp(`\\[bench\\]\\s+${name}\\s+(-?[\\d.]+) / (-?[\\d.]+)\\n`).exec(output);
    assert.ok(match, `no CPU line for ${name}`);
    return { full: Number(match[1]), twin: Number(match[2]) };
  };
  for (const name of ['temporal', 'worker', 'server', 'redis', 'bench \\(sandbox, clients\\)']) {
    const cpu = perProcess(name);
    assert.ok(cpu.full >= 0 && cpu.twin >= 0, `${name}: ${JSON.stringify(cpu)}`);
  }
  const postgres = perProcess('postgres');
  assert.ok(postgres.full > 0 && postgres.twin >= 0, `postgres: ${JSON.stringify(postgres)}`);
  assert.match(output, /CPU ms per payment \/ per twin \(closed loop\)\s+[\d.]+ \/ [\d.]+/);
  // What each payment wrote: at least its idempotency key and its record, each in a transaction.
  const records = /records per payment: row writes · commits\s+([\d.]+) \(([\d.]+) ins, ([\d.]+) upd\) · ([\d.]+)/.exec(
    output,
  );
  assert.ok(records, 'no records line');
  const [rows, inserted, updated, commits] = records.slice(1).map(Number);
  assert.ok((rows ?? 0) >= 2 && (inserted ?? 0) >= 1 && (updated ?? -1) >= 0 && (commits ?? 0) >= 1, records[0]);
  assert.match(output, /PostgreSQL CPU per write\s+[\d.]+ ms per row write · [\d.]+ ms per commit/);
  const recordPayment = /recordPayment local activity per payment, mean\s+([\d.]+), ([\d.]+) ms/.exec(output);
  assert.ok(recordPayment && Number(recordPayment[1]) >= 1, recordPayment?.[0] ?? 'no recordPayment line');
  // GETs read PostgreSQL: they cost the server and PostgreSQL, not Temporal or the worker.
  assert.match(output, /GET p50 \/ p99 \(closed loop, \d+\/s\)\s+[\d.]+ \/ [\d.]+ ms/);
  const getCpu = /CPU ms per GET: server · postgres · total\s+([\d.]+) · ([\d.]+) · ([\d.]+)/.exec(output);
  assert.ok(getCpu && Number(getCpu[2]) >= 0 && Number(getCpu[3]) > 0, getCpu?.[0] ?? 'no CPU per GET line');
  assert.match(output, /CPU ms per GET: temporal · worker \(no query\)\s+[\d.]+ · [\d.]+/);
  // Wrong outcomes end the run with a non-zero code; a right one says so.
  assert.match(
    output,
    /callback → final status in Temporal \(its upsert, history\): p50 \d+ ms · p99 \d+ ms \(n=\d+\)/,
  );
  assert.match(output, /\[bench\] DONE/);
});
