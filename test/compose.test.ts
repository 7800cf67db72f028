import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { before, describe, it } from 'node:test';
import { z } from 'zod';
import { parseConfig } from '../src/config/config-loading';
import { serverSchema, workerSchema } from '../src/config/process-settings';
import { generateKeyEntry } from '../src/crypto/keyring';
import { WORKER_ENV, WORKER_NODE_FLAGS } from '../src/local/build-outputs';
import { writeClusterAuth } from '../src/local/cluster-auth';
import { NAMESPACE_RETENTION } from '../src/local/cluster-launcher';
import { clusterVersions } from '../src/local/cluster-versions';
import { DYNAMIC_CONFIG, HISTORY_SHARDS, TEMPORAL_AUTHORIZER } from '../src/local/temporal-server-config';
import { TEMPORAL_DATABASES } from '../src/local/temporal-schema';

// docker-compose.yml and the Dockerfile, parsed by Docker Compose itself (built by `npm run setup`; no Docker engine
// needed), against what `npm run cluster` runs: the same versions, schema set-up, configuration and settings.

const root = resolve(__dirname, '..');
const versions = clusterVersions();

const serviceSchema = z.object({
  image: z.string().optional(),
  build: z.object({ context: z.string(), args: z.record(z.string(), z.string()).optional() }).optional(),
  command: z.array(z.string()).nullish(),
  entrypoint: z.array(z.string()).nullish(),
  environment: z.record(z.string(), z.string().nullable()).optional(),
  container_name: z.string().optional(),
  restart: z.string().optional(),
  ports: z.array(z.object({ host_ip: z.string().optional(), target: z.number(), published: z.string() })).optional(),
  volumes: z.array(z.object({ type: z.string(), source: z.string().optional(), target: z.string() })).optional(),
  healthcheck: z.object({ test: z.array(z.string()).optional(), disable: z.boolean().optional() }).optional(),
  depends_on: z.record(z.string(), z.object({ condition: z.string() })).optional(),
  configs: z.array(z.object({ source: z.string(), target: z.string() })).optional(),
});
const composeSchema = z.object({
  services: z.record(z.string(), serviceSchema),
  configs: z.record(z.string(), z.object({ content: z.string() })).optional(),
});
type Service = z.infer<typeof serviceSchema>;

/** Valid values for every secret compose requires, made up here (nothing real is committed or read). */
const SECRETS = {
  MERCHANT_API_KEYS: `demo:mk_${randomBytes(12).toString('hex')}`,
  OPERATOR_API_KEYS: `ada.ops:ok_${randomBytes(12).toString('hex')}`,
  CALLBACK_KEYS: generateKeyEntry('c1'),
  FINGERPRINT_SECRET: randomBytes(32).toString('hex'),
  ENCRYPTION_KEYS: generateKeyEntry('k1'),
  SIGNING_KEYS: generateKeyEntry('s1'),
  VAULT_KEYS: generateKeyEntry('v1'),
  REDIS_PASSWORD: randomBytes(16).toString('hex'),
  POSTGRES_PASSWORD: randomBytes(16).toString('hex'),
};

function composeBinary(): string {
  const path = process.env.DOCKER_COMPOSE_PATH ?? join(root, '.tools', 'bin', 'docker-compose');
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run setup\` (it builds Docker Compose)`);
  return path;
}

/** `docker compose config --format json` with only PATH, HOME and `env`: the file as Compose resolves it. */
function composeConfig(
  env: Record<string, string>,
): { status: 'ok'; config: unknown } | { status: 'error'; message: string } {
  try {
    const out = execFileSync(
      composeBinary(),
      ['-f', 'docker-compose.yml', '-p', 'payments', 'config', '--format', 'json'],
      {
        cwd: root,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    return { status: 'ok', config: JSON.parse(out) };
  } catch (err) {
    return { status: 'error', message: String((err as { stderr?: string }).stderr ?? err) };
  }
}

let services: Record<string, Service>;
let configs: Record<string, { content: string }>;
const service = (name: string): Service => {
  const found = services[name];
  assert.ok(found, `docker-compose.yml has a ${name} service`);
  return found;
};
const env = (s: Service): Record<string, string> =>
  Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, v ?? '']));

describe('docker-compose.yml, as Docker Compose reads it', () => {
  before(() => {
    const parsed = composeConfig(SECRETS);
    assert.equal(parsed.status, 'ok', parsed.status === 'error' ? parsed.message : '');
    const config = composeSchema.parse(parsed.status === 'ok' ? parsed.config : undefined);
    services = config.services;
    configs = config.configs ?? {};
  });

  it('refuses to start without each secret, naming it', () => {
    for (const name of Object.keys(SECRETS)) {
      const { [name as keyof typeof SECRETS]: _left, ...rest } = SECRETS;
      const parsed = composeConfig(rest);
      assert.equal(parsed.status, 'error', `${name} missing`);
      if (parsed.status === 'error') assert.match(parsed.message, new RegExp(name));
    }
  });

  it("pins the cluster's versions: PostgreSQL, Temporal's server and admin tools, the Web UI, Redis", () => {
    assert.equal(service('postgresql').image, `postgres:${versions.postgres}`);
    // Temporal's image with the project's temporal-server (the worker authorizer), on the pinned version.
    assert.equal(service('temporal').build?.context, join(root, 'tools', 'temporal-server'));
    assert.equal(service('temporal').build?.args?.TEMPORAL_VERSION, versions.temporalServer);
    assert.match(
      readFileSync(join(root, 'tools', 'temporal-server', 'Dockerfile'), 'utf8'),
      /^FROM temporalio\/server:\$\{TEMPORAL_VERSION\}$/m,
    );
    assert.equal(service('temporal-schema').image, `temporalio/admin-tools:${versions.temporalServer}`);
    assert.equal(service('temporal-namespace').image, `temporalio/admin-tools:${versions.temporalServer}`);
    assert.equal(service('temporal-ui').image, `temporalio/ui:${versions.uiServer}`);
    assert.equal(service('vault').image, `redis:${versions.redis}`);
    const images = Object.values(services).map((s) => s.image ?? '');
    assert.ok(!images.some((image) => image.includes('auto-setup')), 'not the deprecated auto-setup image');
  });

  it('sets the schema up as npm run cluster does: both databases, setup-schema 0.0, then update-schema', () => {
    const schemaJob = service('temporal-schema');
    const script = (schemaJob.command ?? []).join('\n');
    assert.match(script, /temporal-sql-tool --plugin postgres12/);
    assert.match(script, /create; then .* setup-schema -v 0\.0/);
    for (const db of TEMPORAL_DATABASES) {
      assert.ok(script.includes(`${db.name}:${db.schema}`), `${db.name} with the ${db.schema} schema`);
    }
    assert.match(script, /update-schema -d "\/etc\/temporal\/schema\/postgresql\/v12\/.*\/versioned"/);
    assert.equal(schemaJob.restart, 'no');
    assert.equal(service('temporal').depends_on?.['temporal-schema']?.condition, 'service_completed_successfully');
  });

  it('configures temporal-server like the cluster script: postgres12, the same databases, shards and dynamic config', () => {
    const temporal = env(service('temporal'));
    assert.equal(temporal.DB, 'postgres12');
    assert.equal(temporal.DBNAME, TEMPORAL_DATABASES[0].name);
    assert.equal(temporal.VISIBILITY_DBNAME, TEMPORAL_DATABASES[1].name);
    assert.equal(temporal.NUM_HISTORY_SHARDS, String(HISTORY_SHARDS));
    assert.equal(temporal.POSTGRES_PWD, SECRETS.POSTGRES_PASSWORD);
    assert.equal(temporal.TEMPORAL_AUTH_AUTHORIZER, TEMPORAL_AUTHORIZER, 'the worker authorizer, as npm run cluster');
    const mounted = service('temporal').configs?.find((c) => c.target === temporal.DYNAMIC_CONFIG_FILE_PATH);
    assert.ok(mounted, 'the dynamic config file is mounted where DYNAMIC_CONFIG_FILE_PATH says');
    const withoutComments = (text: string) => text.replace(/^#.*\n/gm, '');
    assert.equal(configs[mounted.source]?.content, withoutComments(DYNAMIC_CONFIG));
  });

  it('keeps the Web UI read-only and every published port on 127.0.0.1 unless told otherwise', () => {
    assert.equal(env(service('temporal-ui')).TEMPORAL_DISABLE_WRITE_ACTIONS, 'true');
    for (const [name, s] of Object.entries(services)) {
      for (const port of s.ports ?? []) assert.equal(port.host_ip, '127.0.0.1', `${name} publishes ${port.published}`);
    }
    const open = composeConfig({ ...SECRETS, BIND_ADDRESS: '0.0.0.0', UI_DISABLE_WRITE_ACTIONS: 'false' });
    assert.equal(open.status, 'ok');
    const openServices = composeSchema.parse(open.status === 'ok' ? open.config : undefined).services;
    assert.equal(openServices['temporal-ui']?.environment?.TEMPORAL_DISABLE_WRITE_ACTIONS, 'false');
    // Terminate and Reset stay hidden even then: they leave payments without an outcome.
    assert.equal(openServices['temporal-ui']?.environment?.TEMPORAL_WORKFLOW_TERMINATE_DISABLED, 'true');
    assert.equal(openServices['temporal-ui']?.environment?.TEMPORAL_WORKFLOW_RESET_DISABLED, 'true');
    assert.equal(openServices.server?.ports?.[0]?.host_ip, '0.0.0.0');
  });

  it('protects Redis with a password that VAULT_URL carries', () => {
    const vault = service('vault');
    // Compose keeps `$$` (a literal `$`, for the container's shell) as it is in its output.
    assert.match((vault.command ?? []).join(' '), /--requirepass "\$\$REDIS_PASSWORD"/);
    assert.equal(env(vault).REDIS_PASSWORD, SECRETS.REDIS_PASSWORD);
    for (const name of ['server', 'worker']) {
      assert.equal(env(service(name)).VAULT_URL, `redis://:${SECRETS.REDIS_PASSWORD}@vault:6379`);
    }
  });

  it('runs the app from the built image: no bind mount of the checkout, no build at start, compiled dist/', () => {
    for (const [name, s] of Object.entries(services)) {
      assert.deepEqual(
        (s.volumes ?? []).filter((v) => v.type === 'bind'),
        [],
        `${name} bind-mounts nothing`,
      );
    }
    for (const name of ['server', 'worker', 'sandbox', 'search-attributes', 'records-schema']) {
      const s = service(name);
      assert.equal(s.build?.context, root, `${name} is built from the Dockerfile`);
      const command = (s.command ?? []).join(' ');
      assert.match(command, /^node .*dist\/\S+\.js$/, `${name} runs compiled JavaScript: ${command}`);
      assert.doesNotMatch(command, /npm|tsx/);
    }
    assert.deepEqual(service('worker').command, ['node', ...WORKER_NODE_FLAGS, 'dist/worker.js']);
    for (const [name, value] of Object.entries(WORKER_ENV)) assert.equal(env(service('worker'))[name], value, name);
    // npm run worker launches it the same way.
    const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const launch = Object.entries(WORKER_ENV).map(([name, value]) => `${name}=${value}`);
    assert.equal(scripts.worker, [...launch, 'node', ...WORKER_NODE_FLAGS, 'dist/worker.js'].join(' '));
  });

  it('keeps the payment records in a migrated payments database of the same PostgreSQL, behind its password', () => {
    const url = `postgres://temporal:${SECRETS.POSTGRES_PASSWORD}@postgresql:5432/payments`;
    for (const name of ['server', 'worker', 'records-schema']) assert.equal(env(service(name)).DATABASE_URL, url, name);
    assert.equal(env(service('sandbox')).DATABASE_URL, undefined, 'the sandbox has no business there');
    assert.match((service('temporal-schema').command ?? []).join('\n'), /sql --db payments create/);
    assert.deepEqual(service('records-schema').command, ['node', 'dist/db-migrate.js']);
    for (const name of ['server', 'worker']) {
      assert.equal(service(name).depends_on?.['records-schema']?.condition, 'service_completed_successfully', name);
    }
  });

  it("keeps closed workflows' histories as long as npm run cluster does (7 days)", () => {
    assert.equal(NAMESPACE_RETENTION, '7 days');
    assert.match(
      (service('temporal-namespace').command ?? []).join('\n'),
      /namespace create -n default --retention 168h/,
    );
  });

  it('lets the worker scale: no container name, no published port', () => {
    const worker = service('worker');
    assert.equal(worker.container_name, undefined);
    assert.equal(worker.ports, undefined);
  });

  it('has a healthcheck on every long-running service; one-shot jobs gate what depends on them', () => {
    for (const [name, s] of Object.entries(services)) {
      if (s.restart === 'no') {
        const dependents = Object.values(services).filter((d) => d.depends_on?.[name]);
        assert.ok(dependents.length > 0, `${name} (one-shot) gates a service`);
        for (const d of dependents) assert.equal(d.depends_on?.[name]?.condition, 'service_completed_successfully');
        continue;
      }
      assert.ok(s.healthcheck?.test && !s.healthcheck.disable, `${name} has a healthcheck`);
    }
  });

  it('gives each service only its own secrets: the payment keys to the worker and the server alone', () => {
    const paymentKeys = ['ENCRYPTION_KEYS', 'SIGNING_KEYS', 'VAULT_KEYS', 'CALLBACK_KEYS'];
    const serverOnly = ['MERCHANT_API_KEYS', 'OPERATOR_API_KEYS', 'FINGERPRINT_SECRET', 'CODEC_TOKEN_SECRET'];
    const holders = (secret: string) =>
      Object.entries(services)
        .filter(([, s]) => Object.keys(env(s)).includes(secret))
        .map(([name]) => name)
        .sort();
    for (const secret of paymentKeys) assert.deepEqual(holders(secret), ['server', 'worker'], secret);
    for (const secret of serverOnly) assert.deepEqual(holders(secret), ['server'], secret);
    // No value of a payment secret reaches any other service under another name either.
    for (const [name, s] of Object.entries(services)) {
      if (name === 'server' || name === 'worker') continue;
      const values = Object.values(env(s)).join('\n');
      for (const secret of [...paymentKeys, ...serverOnly]) {
        const value = SECRETS[secret as keyof typeof SECRETS];
        if (value) assert.ok(!values.includes(value), `${name} holds ${secret}`);
      }
    }
    assert.notEqual(env(service('worker')).VAULT_KEYS, env(service('worker')).ENCRYPTION_KEYS);
  });

  it('gives the server and the worker settings their own configuration accepts', () => {
    // The profile temporal-auth writes into each one's volume, as src/local/cluster-auth.ts writes it here.
    const auth = writeClusterAuth(mkdtempSync(join(tmpdir(), 'compose-auth-')), 'default', 'temporal:7233');
    const accepts = (name: 'server' | 'worker', schema: Parameters<typeof parseConfig>[0]) => {
      const environment = env(service(name));
      assert.equal(environment.TEMPORAL_CONFIG_FILE, '/run/temporal-auth/temporal.toml');
      const local = { ...environment, TEMPORAL_CONFIG_FILE: auth.profileFile(name) };
      assert.doesNotThrow(() => parseConfig(schema, local), `${name}'s environment`);
    };
    accepts('server', serverSchema);
    accepts('worker', workerSchema);
  });
});

describe('the Dockerfile', () => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');

  it('builds in two stages on the pinned Node.js LTS and runs as the unprivileged node user', () => {
    assert.match(dockerfile, new RegExp(`^ARG NODE_VERSION=${versions.node}$`, 'm'));
    const stages = [...dockerfile.matchAll(/^FROM (\S+) AS (\S+)$/gm)].map((m) => [m[1], m[2]]);
    assert.deepEqual(stages, [
      ['node:${NODE_VERSION}-bookworm-slim', 'build'],
      ['node:${NODE_VERSION}-bookworm-slim', 'runtime'],
    ]);
    const runtime = dockerfile.slice(dockerfile.indexOf('AS runtime'));
    assert.match(runtime, /^RUN npm ci --omit=dev/m);
    assert.match(runtime, /^COPY --from=build \/app\/dist \.\/dist$/m);
    assert.match(runtime, /^USER node$/m);
    assert.match(runtime, /^HEALTHCHECK /m);
    assert.match(runtime, /^CMD \["node", "dist\/server\.js"\]$/m);
  });

  it('keeps secrets and local state out of the build context', () => {
    const ignored = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['node_modules', 'dist', '.tools', '.data', '.env', '.git'])
      assert.ok(ignored.includes(entry), entry);
  });
});
