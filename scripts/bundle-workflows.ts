// `npm run build`'s second step (scripts/build.ts): bundles the workflow code once, so workers start without webpack (and its memory).
// Next to the bundle it records what webpack read (each file's hash) and looked for in vain; when none of that, this
// script and package-lock.json changed, it keeps the bundle, so a start with nothing changed does not bundle again.
// `--out <file>` writes the bundle elsewhere than dist/ (the tests do).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { WORKFLOW_BUNDLE } from '../src/local/build-outputs';

/** What a bundle was made from: file → sha256, and the paths webpack looked for and did not find. */
const inputsSchema = z.object({
  bundle: z.string(),
  files: z.record(z.string(), z.string()),
  absent: z.array(z.string()),
});
type BundleInputs = z.infer<typeof inputsSchema>;

/** Inputs webpack does not see: how this script calls the bundler, and the bundler's own packages. */
const BUILD_INPUTS = [__filename, resolve(__dirname, '..', 'package-lock.json')];

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

function isFile(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
}

function show(path: string): string {
  return relative(process.cwd(), path) || path;
}

/** The recorded inputs, when the bundle is the one they describe and every input is as it was; else undefined. */
function unchanged(out: string, inputsFile: string): BundleInputs | undefined {
  if (!existsSync(out) || !existsSync(inputsFile)) return undefined;
  let recorded: BundleInputs;
  try {
    recorded = inputsSchema.parse(JSON.parse(readFileSync(inputsFile, 'utf8')));
  } catch {
    return undefined;
  }
  if (sha256(out) !== recorded.bundle) return undefined;
  for (const [file, hash] of Object.entries(recorded.files)) {
    if (!isFile(file) || sha256(file) !== hash) return undefined;
  }
  return recorded.absent.some((path) => existsSync(path)) ? undefined : recorded;
}

async function bundle(out: string, inputsFile: string): Promise<void> {
  // Loaded only when bundling: webpack alone takes about a second to load.
  const { DefaultLogger, bundleWorkflowCode } = await import('@temporalio/worker');
  const { FAILURE_CONVERTER_PATH } = await import('../src/temporal/data-converter.js');
  const { WORKFLOW_INTERCEPTORS } = await import('../src/telemetry/tracing.js');
  const started = Date.now();
  const read = { files: new Set<string>(), missing: new Set<string>() };
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../src/workflows'),
    failureConverterPath: FAILURE_CONVERTER_PATH,
    workflowInterceptorModules: [WORKFLOW_INTERCEPTORS],
    logger: new DefaultLogger('WARN'),
    webpackConfigHook: (config) => {
      (config.plugins ??= []).push({
        apply: (compiler) =>
          compiler.hooks.done.tap('record-bundle-inputs', ({ compilation }) => {
            for (const file of compilation.fileDependencies) read.files.add(file);
            for (const path of compilation.missingDependencies) read.missing.add(path);
          }),
      });
      return config;
    },
  });
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, code);
  // webpack lists directories it resolved through among its files, and the entry point it generated in memory.
  const files = [...read.files, ...BUILD_INPUTS].filter(isFile);
  refuseSchemaLibrary(files);
  const inputs: BundleInputs = {
    bundle: sha256(out),
    files: Object.fromEntries(files.sort().map((file) => [file, sha256(file)])),
    absent: [...read.missing, ...[...read.files].filter((path) => !existsSync(path))].sort(),
  };
  const size = `${(code.length / 1e6).toFixed(1)} MB, from ${files.length} files`;
  if (files.some((file) => statSync(file).mtimeMs > started)) {
    process.stdout.write(
      `build: workflow bundle ${show(out)} (${size}); a file changed meanwhile: the next build bundles again\n`,
    );
    return;
  }
  writeFileSync(inputsFile, `${JSON.stringify(inputs, null, 1)}\n`);
  process.stdout.write(`build: workflow bundle ${show(out)} (${size})\n`);
}

/**
 * Refuses a bundle that carries zod: every workflow evaluates the bundle in its sandbox, and zod there (one value
 * import of a schema module) cost each payment a third more worker CPU and the worker 100 MB more memory. Workflows
 * import domain modules that define no schemas (types come through `import type`, which the bundle never sees).
 */
function refuseSchemaLibrary(files: string[]): void {
  if (!files.some((file) => file.includes(`${sep}node_modules${sep}zod${sep}`))) return;
  const importers = files.filter(
    (file) => file.includes(`${sep}src${sep}`) && /^import (?!type )[^;]*from 'zod'/m.test(readFileSync(file, 'utf8')),
  );
  throw new Error(
    `the workflow bundle includes zod, through ${importers.map(show).join(', ') || 'a dependency'}: ` +
      'workflows must import only modules that define no schemas (move what they need to a zod-free domain module)',
  );
}

/** Bundles the workflow code into `out`, unless the bundle there was made from the files as they are now. */
export async function bundleWorkflows(out: string): Promise<void> {
  const inputsFile = `${out}.inputs.json`;
  const recorded = unchanged(out, inputsFile);
  if (recorded) {
    const count = Object.keys(recorded.files).length;
    process.stdout.write(
      `build: workflow bundle ${show(out)} is up to date (none of its ${count} input files changed)\n`,
    );
    return;
  }
  await bundle(out, inputsFile);
}

if (require.main === module) {
  const { values } = parseArgs({ options: { out: { type: 'string' } } });
  bundleWorkflows(resolve(values.out ?? WORKFLOW_BUNDLE)).catch((err: unknown) => {
    process.stderr.write(`build: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
