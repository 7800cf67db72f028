// Runs the whole test suite against one real Temporal dev server, one Redis, one PostgreSQL (a migrated database the
// test files share: ids are unique per test) and the workflow bundle `npm run build` made.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { WORKFLOW_BUNDLE } from '../src/local/build-outputs';
import { startDevServer } from '../src/local/dev-server';
import { startScratchDatabase } from '../src/local/postgres';
import { startRedisServer } from '../src/local/redis-server';
import { temporalBinary } from '../src/local/binaries';
import { freePort } from '../src/local/free-port';

const root = resolve(__dirname, '..');
/**
 * The longest files, which share nothing with the others but the dev server and Redis (the real cluster; the
 * 400-item batch on its own task queue; the small runs of the benchmark and the chaos harness, on servers of their
 * own), and whose faults are timed: the first lane runs them one after the other before it takes any other file, so
 * no two of them ever load the machine at once.
 */
const FAULT_TIMED = ['cluster.test.ts', 'payout-batch-scale.test.ts', 'bench-smoke.test.ts', 'chaos.test.ts'];
/** Files at once: one per core of the 2 this suite is sized for (three at once starved time-bound tests). */
const LANES = 2;

interface FileResult {
  file: string;
  passed: number;
  failed: number;
  output: string;
  seconds: number;
}

/** Test processes running now, each the leader of its own process group: a file's servers die with it. */
const running = new Set<number>();

/** Kills a file's process and everything it started (servers, CLI runs), if any of it is left. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** How long a file may run past its limit (its hooks closing servers) before it is killed. */
const FILE_GRACE_MS = 60_000;

/**
 * Runs one file under node's test runner, its output held until it ends; its summary gives the counts. `timeoutMs`
 * bounds each test; a file still running FILE_GRACE_MS past it (a hook that never returns) is killed, with whatever
 * it started, and counted failed.
 */
function runFile(file: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<FileResult> {
  const reporter = process.stdout.isTTY ? 'spec' : 'tap';
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [
      '--import', 'tsx', '--test', '--test-force-exit', `--test-timeout=${timeoutMs}`,
      `--test-reporter=${reporter}`, '--test-reporter-destination=stdout', file,
    ], // prettier-ignore
    // Held back, the spec reporter would drop its colours on a terminal.
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: reporter === 'spec' ? { FORCE_COLOR: '1', ...env } : env,
      detached: true,
    },
  );
  const pid = child.pid;
  if (pid !== undefined) running.add(pid);
  let output = '';
  let killed = false;
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const hardStop = setTimeout(() => {
    killed = true;
    output += `\n[test] ${file} still running ${(timeoutMs + FILE_GRACE_MS) / 1000} s after it started: killed\n`;
    if (pid !== undefined) killGroup(pid);
  }, timeoutMs + FILE_GRACE_MS);
  // Whatever the file left running would hold its output open (and outlive the suite).
  child.once('exit', () => {
    clearTimeout(hardStop);
    if (pid !== undefined) {
      killGroup(pid);
      running.delete(pid);
    }
  });
  return new Promise((resolveRun) => {
    child.once('close', (c) => {
      // The summary: `# pass 3` (TAP) or `ℹ pass 3` (spec, maybe in colour).
      const plain = stripVTControlCharacters(output.slice(-4000));
      const count = (word: string) => Number(new RegExp(`^(?:# |ℹ )${word} (\\d+)\r?$`, 'm').exec(plain)?.[1] ?? 0);
      // A test cut off by its time-out is `cancelled`, not `fail`: it failed all the same.
      const failed = count('fail') + count('cancelled');
      resolveRun({
        file,
        passed: count('pass'),
        // A file that died before its summary, or was killed, failed, whatever it counted.
        failed: (c !== 0 || killed) && failed === 0 ? 1 : failed,
        output,
        seconds: (Date.now() - started) / 1000,
      });
    });
  });
}

/**
 * Runs every file on LANES lanes, each taking the next file as soon as its last one ends; the first lane runs the
 * fault-timed files first. Each file's output is shown whole when it ends, under its name.
 */
async function runLanes(faultTimed: string[], others: string[], env: NodeJS.ProcessEnv): Promise<FileResult[]> {
  const results: FileResult[] = [];
  const queue = [...others];
  const total = faultTimed.length + others.length;
  const lane = async (own: string[]) => {
    for (let file = own.shift() ?? queue.shift(); file; file = own.shift() ?? queue.shift()) {
      // Their waits add up to more than five minutes on a busy machine (the 400-item batch allows ten).
      const result = await runFile(file, env, faultTimed.includes(file) ? 900_000 : 300_000);
      results.push(result);
      const verdict = result.failed > 0 ? `${result.failed} failed` : `${result.passed} passed`;
      process.stdout.write(
        `[test] ${file} (${results.length}/${total}, ${result.seconds.toFixed(1)} s, ${verdict}):\n${result.output}`,
      );
    }
  };
  await Promise.all(Array.from({ length: LANES }, (_, k) => lane(k === 0 ? [...faultTimed] : [])));
  return results;
}

/**
 * Each failed test of a file's TAP output, with the start of its block (location, error, expected, actual), so the end
 * of a long run says what failed: CI shows the tail of the output.
 */
function failedTests(output: string): string[] {
  const lines = stripVTControlCharacters(output).split(/\r?\n/);
  const failures: string[] = [];
  lines.forEach((line, at) => {
    const name = /^\s*not ok \d+ - (.*)$/.exec(line)?.[1];
    if (name === undefined) return;
    const end = lines.findIndex((l, k) => k > at && /^\s*\.\.\.$/.test(l));
    const block = lines.slice(at + 1, end === -1 ? at + 16 : Math.min(end, at + 16));
    if (block.some((l) => /failureType: 'subtestsFailed'/.test(l))) return;
    const detail = block.filter((l) => !/^\s*(---|duration_ms|type):?/.test(l)).map((l) => `      ${l.trim()}`);
    failures.push([`    ${name}`, ...detail].join('\n').slice(0, 1500));
  });
  return failures;
}

/** The slowest files, so a suite that outgrows its time says where the time went. */
function slowestFiles(results: FileResult[], count = 10): string {
  return [...results]
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, count)
    .map(({ file, seconds }) => `  ${seconds.toFixed(1).padStart(6)} s  ${file}`)
    .join('\n');
}

async function main(): Promise<number> {
  const started = Date.now();
  if (!existsSync(WORKFLOW_BUNDLE)) throw new Error('the workflow bundle is not built: run `npm run build` first');
  const filter = process.argv.slice(2);
  const files = readdirSync(join(root, 'test'))
    .filter((f) => f.endsWith('.test.ts'))
    .filter((f) => filter.length === 0 || filter.some((word) => f.includes(word)))
    .map((f) => join('test', f));

  // Looked up before any server starts: a missing binary would otherwise leave them running.
  const testServerPath = temporalBinary('temporal-test-server');
  process.stdout.write('[test] starting a Temporal dev server, redis-server and PostgreSQL…\n');
  const devServerStart = freePort().then((port) => startDevServer({ port, namespace: 'default' }));
  const redisStart = process.env.VAULT_URL ? undefined : freePort().then((port) => startRedisServer(port));
  const databaseStart = startScratchDatabase('test runner');
  const [devServer, redis, database] = await Promise.all([devServerStart, redisStart, databaseStart]).catch(
    async (err: unknown) => {
      // Leave no server behind when another one failed to start.
      await Promise.allSettled([
        devServerStart.then((s) => s.stop()),
        redisStart?.then((r) => r.stop()),
        databaseStart.then((d) => d.stop()),
      ]);
      throw err;
    },
  );
  process.stdout.write(
    `[test] ready in ${((Date.now() - started) / 1000).toFixed(1)}s; running ${files.length} files\n`,
  );

  const env = {
    ...process.env,
    TEST_TEMPORAL_ADDRESS: devServer.address,
    TEST_VAULT_URL: process.env.VAULT_URL ?? redis?.url,
    TEST_DATABASE_URL: database.url,
    TEMPORAL_TEST_SERVER_PATH: testServerPath,
    // Node.js (22.1 on) keeps the modules' compiled code there: each of the ~80 test processes, and the CLI runs they
    // make, load the same few hundred modules (measured: 0.4 s less per process).
    NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? join(root, '.tmp', 'compile-cache'),
  };
  const faultTimed = files.filter((f) => FAULT_TIMED.some((name) => f.endsWith(name)));
  const results = await runLanes(
    faultTimed,
    files.filter((f) => !faultTimed.includes(f)),
    env,
  );
  const slowest = slowestFiles(results);
  if (slowest) process.stdout.write(`[test] the slowest files (wall clock, each from its start):\n${slowest}\n`);
  const failed = results.filter((r) => r.failed > 0);
  const failedFiles = failed.map((r) => r.file);
  for (const { file, output } of failed) {
    const failures = failedTests(output);
    const told = failures.length > 0 ? failures.join('\n') : '    (no failed test reported: the file ended early)';
    process.stdout.write(`[test] failed in ${file}:\n${told}\n`);
  }
  if (failedFiles.length > 0) process.stdout.write(`[test] files with failures: ${failedFiles.join(', ')}\n`);
  const sum = (pick: (r: FileResult) => number) => results.reduce((n, r) => n + pick(r), 0);
  process.stdout.write(`tests: ${sum((r) => r.passed)} passed, ${sum((r) => r.failed)} failed\n`);
  await Promise.all([devServer.stop(), redis?.stop(), database.stop()]);
  process.stdout.write(`[test] finished in ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
  return failedFiles.length > 0 ? 1 : 0;
}

// Each file runs in its own process group, out of reach of a terminal's Ctrl-C: the runner passes it on.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    running.forEach(killGroup);
    process.kill(process.pid, signal);
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[test] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
