// `npm run build -w @payments/client`: bundles src/ with the domain/ schemas and types it uses into one ES module
// (dist/index.mjs) and one CommonJS module (dist/index.cjs), and its declarations into one file for each
// (dist/index.d.mts, dist/index.d.cts). Bundled, the package needs nothing of the server's: only zod, which stays
// a dependency so the merchant's own zod is shared.
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { Format } from 'esbuild';
import { generateDtsBundle } from 'dts-bundle-generator';

const here = __dirname;
const entry = join(here, 'src', 'index.ts');
const dist = join(here, 'dist');

async function bundle(format: Format, outfile: string): Promise<void> {
  await build({
    entryPoints: [entry],
    outfile: join(dist, outfile),
    bundle: true,
    format,
    platform: 'node',
    target: 'node20',
    // zod and node: modules are imported, not copied in.
    packages: 'external',
    sourcemap: true,
    logLevel: 'warning',
  });
}

/** The newest modification time among the files the build reads: the package's and the domain/ it bundles. */
function newestSource(): number {
  const folders = [join(here, 'src'), join(here, '..', '..', 'src', 'domain')];
  const files = [
    join(here, 'build-client.ts'),
    join(here, 'package.json'),
    join(here, 'tsconfig.json'),
    ...folders.flatMap((folder) =>
      readdirSync(folder, { recursive: true, encoding: 'utf8' }).map((file) => join(folder, file)),
    ),
  ];
  return Math.max(...files.map((file) => statSync(file).mtimeMs));
}

/** Builds dist/ from scratch; with `onlyIfChanged`, only when a source is newer than what dist/ holds. */
export async function buildClient(options: { onlyIfChanged?: boolean } = {}): Promise<void> {
  const built = join(dist, 'index.d.cts');
  if (options.onlyIfChanged && existsSync(built) && statSync(built).mtimeMs >= newestSource()) return;
  rmSync(dist, { recursive: true, force: true });
  await Promise.all([bundle('esm', 'index.mjs'), bundle('cjs', 'index.cjs')]);
  // One declaration file with no relative imports reads the same as an ES module and as CommonJS.
  const [declarations] = generateDtsBundle(
    [{ filePath: entry, output: { noBanner: true, exportReferencedTypes: false } }],
    {
      preferredConfigPath: join(here, 'tsconfig.json'),
    },
  );
  if (!declarations) throw new Error('dts-bundle-generator produced nothing');
  writeFileSync(join(dist, 'index.d.mts'), declarations);
  writeFileSync(join(dist, 'index.d.cts'), declarations);
}

if (require.main === module) {
  buildClient().catch((err: unknown) => {
    process.stderr.write(`build-client: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
