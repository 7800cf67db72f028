// Runs the whole test suite against one real Temporal dev server and the workflow bundle `npm run build` made.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { WORKFLOW_BUNDLE } from '../src/local/build-outputs';
import { startDevServer } from '../src/local/dev-server';
import { startRedisServer } from '../src/local/redis-server';
import { temporalBinary } from '../src/local/binaries';
import { freePort } from '../src/local/free-port';

const root = resolve(__dirname, '..');

async function main(): Promise<number> {
  const started = Date.now();
  if (!existsSync(WORKFLOW_BUNDLE)) throw new Error('the workflow bundle is not built: run `npm run build` first');
  const filter = process.argv.slice(2);
  const files = readdirSync(join(root, 'test'))
    .filter((f) => f.endsWith('.test.ts'))
    .filter((f) => filter.length === 0 || filter.some((word) => f.includes(word)))
    .map((f) => join('test', f));

  process.stdout.write('[test] starting a Temporal dev server and redis-server…\n');
  const devServerStart = freePort().then((port) => startDevServer({ port, namespace: 'default' }));
  const redisStart = process.env.VAULT_URL ? undefined : freePort().then((port) => startRedisServer(port));
  const [devServer, redis] = await Promise.all([devServerStart, redisStart]).catch(async (err: unknown) => {
    // Leave no server behind when another one failed to start.
    await Promise.allSettled([devServerStart.then((s) => s.stop()), redisStart?.then((r) => r.stop())]);
    throw err;
  });
  process.stdout.write(
    `[test] ready in ${((Date.now() - started) / 1000).toFixed(1)}s; running ${files.length} files\n`,
  );

  const code = await new Promise<number>((resolveCode) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-force-exit', '--test-timeout=300000', ...files],
      {
        cwd: root,
        stdio: 'inherit',
        env: {
          ...process.env,
          TEST_TEMPORAL_ADDRESS: devServer.address,
          TEST_VAULT_URL: process.env.VAULT_URL ?? redis?.url,
          TEMPORAL_TEST_SERVER_PATH: temporalBinary('temporal-test-server'),
        },
      },
    );
    child.once('exit', (c) => resolveCode(c ?? 1));
  });
  await Promise.all([devServer.stop(), redis?.stop()]);
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
