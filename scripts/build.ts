// `npm run build`: builds the client package (packages/client/dist: the server's sandbox and notifications import it
// as @payments/client), compiles src/ into dist/ (tsc -b, incremental: dist/.tsbuildinfo), copies the records' SQL
// migrations beside their runner (`node dist/worker.js` applies them from dist/), then bundles the workflow code
// (bundle-workflows.ts). Each step skips what has not changed, so a start with nothing changed does not wait for them.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildClient } from '../packages/client/build-client';
import { WORKFLOW_BUNDLE } from '../src/local/build-outputs';
import { bundleWorkflows } from './bundle-workflows';

const root = resolve(__dirname, '..');

/** Source files whose compiled file is missing from dist/: tsc -b trusts its build info and would not notice. */
function missingOutputs(): string[] {
  return readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .filter((file) => !existsSync(join(root, 'dist', file.replace(/\.ts$/, '.js'))));
}

async function main(): Promise<number> {
  await buildClient({ onlyIfChanged: true });
  const missing = missingOutputs();
  const force = existsSync(join(root, 'dist', '.tsbuildinfo')) && missing.length > 0;
  if (force) {
    const named =
      missing.length > 3 ? `${missing.slice(0, 3).join(', ')} and ${missing.length - 3} more` : missing.join(', ');
    process.stdout.write(`build: dist/ lacks the compiled ${named}: compiling all of src/ again\n`);
  }
  const tsc = spawnSync(
    process.execPath,
    [require.resolve('typescript/lib/tsc'), '-b', 'tsconfig.build.json', ...(force ? ['--force'] : [])],
    { cwd: root, stdio: 'inherit' },
  );
  if (tsc.status !== 0) return tsc.status ?? 1;
  // Copied whole each time (a few kB): dist/ holds exactly the migrations src/ has.
  const migrations = join('records', 'migrations');
  rmSync(join(root, 'dist', migrations), { recursive: true, force: true });
  cpSync(join(root, 'src', migrations), join(root, 'dist', migrations), { recursive: true });
  await bundleWorkflows(WORKFLOW_BUNDLE);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`build: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
