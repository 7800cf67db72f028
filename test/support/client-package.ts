import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '..', '..');

/** A merchant service's folder with @payments/client installed from the tarball `npm pack` makes of it. */
export interface PackedConsumer {
  dir: string;
  /** What the tarball holds, as `npm pack --json` lists it. */
  files: string[];
  remove(): void;
}

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 120_000 });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}: ${result.stderr}${result.stdout}`);
  }
  return result.stdout;
}

/**
 * Builds and packs the client package (its prepack builds it) and unpacks it into a fresh folder's node_modules, as
 * `npm install <tarball>` would; zod, its one dependency, is linked from this project's node_modules (no registry).
 */
export function packedConsumer(): PackedConsumer {
  mkdirSync(join(root, '.tmp'), { recursive: true });
  const dir = mkdtempSync(join(root, '.tmp', 'client-consumer-'));
  const packed = JSON.parse(
    run('npm', ['pack', '--workspace', 'packages/client', '--pack-destination', dir, '--json'], root),
  ) as { filename: string; files: { path: string }[] }[];
  const [tarball] = packed;
  if (!tarball) throw new Error('npm pack listed no tarball');
  const installed = join(dir, 'node_modules', '@payments', 'client');
  mkdirSync(installed, { recursive: true });
  run('tar', ['-xzf', join(dir, tarball.filename), '-C', installed, '--strip-components=1'], root);
  symlinkSync(join(root, 'node_modules', 'zod'), join(dir, 'node_modules', 'zod'), 'dir');
  return {
    dir,
    files: tarball.files.map((file) => file.path),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Type-checks these files of a consumer as a merchant's TypeScript project would (`module: nodenext`, strict): `.mts`
 * files resolve the package's ES module types, `.cts` files its CommonJS types. Returns tsc's output, empty when clean.
 */
export function typeCheck(consumer: PackedConsumer, files: Record<string, string>): string {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(consumer.dir, name), text);
  writeFileSync(
    join(consumer.dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        noEmit: true,
        types: ['node'],
        typeRoots: [join(root, 'node_modules', '@types')],
      },
      files: Object.keys(files),
    }),
  );
  const tsc = spawnSync(process.execPath, [require.resolve('typescript/lib/tsc'), '-p', consumer.dir], {
    cwd: consumer.dir,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return tsc.status === 0 ? '' : `${tsc.stdout}${tsc.stderr}` || `tsc exited ${tsc.status}`;
}

/** The README's TypeScript example, as written there. */
export function readmeExample(): string {
  return /```ts\n([\s\S]*?)```/.exec(readFileSync(join(root, 'README.md'), 'utf8'))?.[1] ?? '';
}
