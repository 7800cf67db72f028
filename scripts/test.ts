// Runs the whole test suite against one real Temporal dev server, one Redis, one PostgreSQL (a migrated database the
// test files share: ids are unique per test) and the workflow bundle `npm run build` made.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
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
 * 1,000-item batch on its own task queue; the small runs of the benchmark and the chaos harness, on servers of their
 * own): a second test runner runs them, one after the other, beside the first (whose files run one at a time), and
 * prints their output at the end.
 */
const ALONGSIDE = ['cluster.test.ts', 'payout-batch-scale.test.ts', 'bench-smoke.test.ts', 'chaos.test.ts'];

interface RunResult {
  code: number;
  passed: number;
  failed: number;
  /** The output of a runner whose output was held back. */
  output: string;
  /** Each file's wall-clock seconds (scripts/test-file-times.mjs). */
  fileSeconds: Map<string, number>;
}

/**
 * Runs node's test runner over `files`, its output shown as it comes or held back; its summary gives the counts.
 * `timeoutMs` bounds each file as well as each test (the runner gives a file the same limit).
 */
function runTests(files: string[], env: NodeJS.ProcessEnv, holdOutput: boolean, timeoutMs: number): Promise<RunResult> {
  if (files.length === 0) return Promise.resolve({ code: 0, passed: 0, failed: 0, output: '', fileSeconds: new Map() });
  const reporter = !holdOutput && process.stdout.isTTY ? 'spec' : 'tap';
  const timesFile = join(mkdtempSync(join(tmpdir(), 'test-times-')), 'file-times.tsv');
  const child = spawn(
    process.execPath,
    [
      '--import', 'tsx', '--test', '--test-concurrency=1', '--test-force-exit', `--test-timeout=${timeoutMs}`,
      `--test-reporter=${reporter}`, '--test-reporter-destination=stdout',
      '--test-reporter=./scripts/test-file-times.mjs', `--test-reporter-destination=${timesFile}`, ...files,
    ], // prettier-ignore
    {
      cwd: root,
      stdio: ['ignore', 'pipe', holdOutput ? 'pipe' : 'inherit'],
      // Piped, the spec reporter would drop its colours on a terminal.
      env: reporter === 'spec' ? { FORCE_COLOR: '1', ...env } : env,
    },
  );
  let output = '';
  let tail = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    if (holdOutput) output += chunk.toString();
    else process.stdout.write(chunk);
    tail = (tail + chunk.toString()).slice(-4000);
  });
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolveRun) => {
    child.once('close', (c) => {
      // The summary: `# pass 3` (TAP) or `ℹ pass 3` (spec, maybe in colour).
      const plain = stripVTControlCharacters(tail);
      const count = (word: string) => Number(new RegExp(`^(?:# |ℹ )${word} (\\d+)\r?$`, 'm').exec(plain)?.[1] ?? 0);
      // A test cut off by its time-out is `cancelled`, not `fail`: it failed all the same.
      resolveRun({
        code: c ?? 1,
        passed: count('pass'),
        failed: count('fail') + count('cancelled'),
        output,
        fileSeconds: readFileSeconds(timesFile),
      });
    });
  });
}

/** The reporter's lines, read once; its temporary folder goes with them. */
function readFileSeconds(path: string): Map<string, number> {
  const lines = existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
  rmSync(dirname(path), { recursive: true, force: true });
  return new Map(
    lines.map((line) => {
      const [seconds, file] = line.split('\t');
      return [relative(root, file ?? ''), Number(seconds)];
    }),
  );
}

/** The slowest files, so a suite that outgrows its time says where the time went. */
function slowestFiles(results: RunResult[], count = 10): string {
  const all = results.flatMap((r) => [...r.fileSeconds]).sort((a, b) => b[1] - a[1]);
  return all
    .slice(0, count)
    .map(([file, seconds]) => `  ${seconds.toFixed(1).padStart(6)} s  ${file}`)
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
  };
  const alongside = files.filter((f) => ALONGSIDE.some((name) => f.endsWith(name)));
  const main = files.filter((f) => !alongside.includes(f));
  // With nothing else to run, the files alongside show their output as they go.
  const [first, second] = await Promise.all([
    runTests(main, env, false, 300_000),
    // Their waits add up to more than five minutes on a busy machine (the 1,000-item batch allows ten).
    runTests(alongside, env, main.length > 0, 900_000),
  ]);
  if (second.output) {
    process.stdout.write(`[test] ${alongside.join(', ')}, run alongside the others:\n${second.output}`);
  }
  const code = first.code !== 0 ? first.code : second.code;
  const slowest = slowestFiles([first, second]);
  if (slowest)
    process.stdout.write(`[test] the slowest files (wall clock, each from its process start):\n${slowest}\n`);
  if (main.length > 0 && alongside.length > 0) {
    process.stdout.write(`tests: ${first.passed + second.passed} passed, ${first.failed + second.failed} failed\n`);
  }
  await Promise.all([devServer.stop(), redis?.stop(), database.stop()]);
  process.stdout.write(`[test] finished in ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
  return code;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[test] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
