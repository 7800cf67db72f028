import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runNode } from './support/process';

// What a production install (`npm ci --omit=dev`, the Docker image's runtime stage) holds, and that the compiled
// processes run from it: development tools stay out.

const root = join(__dirname, '..');
// (@types/node is not among them: protobufjs, a production package, depends on it.)
const DEV_TOOLS = ['tsx', 'pino-pretty', '@temporalio/testing', 'typescript'];

/** The packages `npm ls --omit=dev` lists, as paths relative to the root (node_modules/…). */
function productionPackages(): string[] {
  const output = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: root, encoding: 'utf8' });
  return output
    .split('\n')
    .map((line) => relative(root, line.trim()))
    .filter((path) => path.startsWith('node_modules'));
}

/** The Dockerfile's stage of this name, from its FROM line to the next one. */
function dockerStage(name: string): string {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const stages = dockerfile.split(/^(?=FROM )/m);
  const stage = stages.find((s) => new RegExp(`^FROM \\S+ AS ${name}\\b`).test(s));
  assert.ok(stage, `the Dockerfile has a ${name} stage`);
  return stage;
}

describe('the production dependencies', () => {
  it('hold no development tool', () => {
    const packages = productionPackages();
    assert.ok(packages.includes('node_modules/@temporalio/worker'), 'npm ls --omit=dev lists the production tree');
    for (const tool of DEV_TOOLS) {
      assert.ok(!packages.some((p) => p.endsWith(`node_modules/${tool}`)), `${tool} is not a production dependency`);
    }
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    for (const tool of DEV_TOOLS) assert.ok(manifest.devDependencies[tool], `${tool} is a development dependency`);
  });

  it("go into the image's runtime stage alone, and no node_modules from the build stage", () => {
    const runtime = dockerStage('runtime');
    assert.match(runtime, /^RUN npm ci --omit=dev\b/m);
    assert.doesNotMatch(runtime, /COPY --from=build \S*node_modules/);
    assert.match(runtime, /^COPY --from=build \/app\/dist \.\/dist$/m);
    assert.match(dockerStage('build'), /^RUN npm ci\b/m, 'the build stage has the development tools');
  });
});

describe('the compiled processes in a production install', () => {
  let dir: string;

  before(() => {
    assert.ok(existsSync(join(root, 'dist', 'server.js')), 'npm run build first');
    // node_modules with the production packages only (links to this checkout's), and a copy of dist/: a module
    // resolves from where it is, so dist/ finds only these.
    dir = mkdtempSync(join(tmpdir(), 'production-install-'));
    for (const path of productionPackages().filter((p) => /^node_modules\/(@[^/]+\/)?[^/@]+$/.test(p))) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      symlinkSync(join(root, path), join(dir, path), 'dir');
    }
    cpSync(join(root, 'dist'), join(dir, 'dist'), { recursive: true });
    cpSync(join(root, 'package.json'), join(dir, 'package.json'));
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  // Each entry loads all it imports, then stops at a setting it refuses: anything missing would fail first.
  const entries: { entry: string; env: Record<string, string>; says: RegExp }[] = [
    { entry: 'server.js', env: {}, says: /server: invalid configuration/ },
    { entry: 'worker.js', env: {}, says: /worker: invalid configuration/ },
    { entry: 'db-migrate.js', env: {}, says: /db:migrate: invalid configuration/ },
    { entry: 'sandbox/main.js', env: { SANDBOX_PORT: 'x' }, says: /SANDBOX_PORT: "x" is not a port/ },
  ];
  for (const { entry, env, says } of entries) {
    it(`load: dist/${entry}`, async () => {
      const { code, output } = await runNode([join(dir, 'dist', entry)], env);
      assert.doesNotMatch(output, /Cannot find (module|package)/);
      assert.match(output, says);
      assert.equal(code, 1);
    });
  }

  it('load: the CLI, and the tracing SDK that only OTEL_* settings load', async () => {
    const cli = await runNode([join(dir, 'dist', 'cli', 'ops.js'), '--help'], {});
    assert.equal(cli.code, 0, cli.output);
    assert.match(cli.output, /^Usage: ops/m);
    const sdk = await runNode(['-e', `require(${JSON.stringify(join(dir, 'dist', 'telemetry', 'sdk.js'))})`], {});
    assert.equal(sdk.code, 0, sdk.output);
  });

  it('say that LOG_PRETTY needs the development dependency pino-pretty', async () => {
    const logging = (from: string) =>
      runNode(
        ['-e', `require(${JSON.stringify(join(from, 'dist', 'logging.js'))}).createLogger('x', 'info', true)`],
        {},
      );
    const production = await logging(dir);
    assert.notEqual(production.code, 0);
    assert.match(production.output, /LOG_PRETTY=true needs pino-pretty, a development dependency/);
    const development = await logging(root);
    assert.equal(development.code, 0, development.output);
  });
});
