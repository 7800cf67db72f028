import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { z } from 'zod';

// renovate.json against what it updates: every pinned version is found by a manager or named as upgraded by hand,
// and the version bounds it keeps say what package.json and the Temporal interceptors need.

const root = join(__dirname, '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

const renovateSchema = z.object({
  packageRules: z.array(
    z.object({
      matchManagers: z.array(z.string()).optional(),
      matchPackageNames: z.array(z.string()).optional(),
      groupName: z.string().optional(),
      allowedVersions: z.string().optional(),
    }),
  ),
  customManagers: z.array(
    z.object({
      customType: z.literal('regex'),
      managerFilePatterns: z.array(z.string()),
      matchStrings: z.array(z.string()),
      depNameTemplate: z.string(),
      datasourceTemplate: z.string(),
    }),
  ),
});
const renovate = renovateSchema.parse(JSON.parse(read('renovate.json')));
const manifestSchema = z.object({
  engines: z.object({ node: z.string() }),
  dependencies: z.record(z.string(), z.string()),
  devDependencies: z.record(z.string(), z.string()),
});
const manifest = manifestSchema.parse(JSON.parse(read('package.json')));

/** The versions Renovate's custom managers find in a file, as `depName currentValue`. */
function found(path: string): string[] {
  const text = read(path);
  return renovate.customManagers
    .filter((m) => m.managerFilePatterns.some((p) => new RegExp(p.slice(1, -1)).test(path)))
    .flatMap((m) =>
      m.matchStrings.flatMap((s) =>
        [...text.matchAll(new RegExp(s, 'g'))].map((match) => `${m.depNameTemplate} ${match.groups?.currentValue}`),
      ),
    );
}

/** The `allowedVersions` of the rule naming this package, as the major version it stays under. */
function majorBound(name: string): number {
  const rule = renovate.packageRules.find((r) => r.allowedVersions && r.matchPackageNames?.includes(name));
  const bound = /^<(\d+)\.0\.0$/.exec(rule?.allowedVersions ?? '');
  assert.ok(bound?.[1], `${name} has an allowedVersions "<N.0.0"`);
  return Number(bound[1]);
}

const majorOf = (range: string) => Number(/(\d+)/.exec(range)?.[1]);

describe('renovate.json', () => {
  it("updates tools/cluster-versions.json's pins, and names those left to a person in the docs", () => {
    const versions = z.record(z.string(), z.string()).parse(JSON.parse(read('tools/cluster-versions.json')));
    const seen = found('tools/cluster-versions.json');
    const byHand = ['postgres', 'redis', 'node'];
    const handWork = /Upgraded by hand:([^]*?)`dependency-updates\.test\.ts`/.exec(read('docs/development.md'))?.[1];
    assert.ok(handWork, 'docs/development.md says what is upgraded by hand');
    for (const [key, value] of Object.entries(versions)) {
      if (byHand.includes(key)) {
        assert.ok(handWork.includes(`\`${key}\``), `docs/development.md: ${key} by hand`);
        continue;
      }
      const current = value.replace(/^go(?=\d)/, '');
      assert.ok(
        seen.some((s) => s.endsWith(` ${current}`)),
        `${key} (${value}) is found by a manager: ${seen.join(', ')}`,
      );
    }
    assert.equal(seen.length, Object.keys(versions).length - byHand.length, 'each pin once');
  });

  it("updates docker-compose.yml's Temporal images with the pins they follow, in one group", () => {
    const compose = read('docker-compose.yml');
    const temporalImages = [...compose.matchAll(/image: (temporalio\/\S+|payments-temporal-server:\S+)/g)];
    const seen = found('docker-compose.yml');
    assert.equal(seen.length, temporalImages.length, `every Temporal image is found: ${seen.join(', ')}`);
    const pinned = new Set(found('tools/cluster-versions.json'));
    for (const s of seen) assert.ok(pinned.has(s), `${s} is the version tools/cluster-versions.json pins`);
    const group = renovate.packageRules.find((r) => r.groupName === 'Temporal server and Web UI');
    for (const s of seen) assert.ok(group?.matchPackageNames?.includes(s.split(' ')[0] ?? ''), `${s} is grouped`);
    // Renovate's gomod manager updates tools/temporal-server/go.mod's direct requirements: Temporal's go with the rest.
    const goMod = read('tools/temporal-server/go.mod');
    const temporalModules = [...goMod.matchAll(/^\t(go\.temporal\.io\/\S+) v\S+$/gm)].map((m) => m[1] ?? '');
    assert.ok(temporalModules.includes('go.temporal.io/server'));
    for (const module of temporalModules) assert.ok(group?.matchPackageNames?.includes(module), `${module} is grouped`);
    const go = renovate.packageRules.find((r) => r.groupName === 'Go toolchain');
    assert.deepEqual(go?.matchPackageNames, ['go', 'golang'], "goToolchain, go.mod's go line and the golang image");
  });

  it('groups the Temporal SDK', () => {
    const group = renovate.packageRules.find((r) => r.groupName === 'Temporal TypeScript SDK');
    assert.deepEqual(group?.matchPackageNames?.includes('@temporalio/**'), true);
    const sdk = Object.entries({ ...manifest.dependencies, ...manifest.devDependencies }).filter(([name]) =>
      name.startsWith('@temporalio/'),
    );
    assert.ok(sdk.length > 5);
    assert.equal(new Set(sdk.map(([, version]) => version)).size, 1, 'every @temporalio/* package at one version');
  });

  it('keeps OpenTelemetry on the SDK line @temporalio/interceptors-opentelemetry builds on, shared with it', () => {
    const interceptors = join(root, 'node_modules', '@temporalio', 'interceptors-opentelemetry');
    const theirs = manifestSchema
      .pick({ dependencies: true })
      .parse(JSON.parse(readFileSync(join(interceptors, 'package.json'), 'utf8'))).dependencies;
    for (const name of ['@opentelemetry/resources', '@opentelemetry/sdk-trace-base']) {
      const range = theirs[name];
      assert.ok(range, `the interceptors depend on ${name}`);
      assert.equal(majorBound(name), majorOf(range) + 1, `${name} stays on the interceptors' line (${range})`);
      assert.equal(majorOf(manifest.dependencies[name] ?? ''), majorOf(range), `package.json's ${name}`);
      // One copy: the spans the interceptors make and the ones this code exports are of the same SDK.
      assert.equal(require.resolve(name, { paths: [interceptors] }), require.resolve(name), `one ${name}`);
    }
    // The API stays where the 1.x SDK's peer dependency allows it.
    const sdkPeer = z
      .object({ peerDependencies: z.object({ '@opentelemetry/api': z.string() }) })
      .parse(JSON.parse(read('node_modules/@opentelemetry/sdk-trace-base/package.json'))).peerDependencies[
      '@opentelemetry/api'
    ];
    const apiRule = renovate.packageRules.find((r) => r.matchPackageNames?.includes('@opentelemetry/api'));
    assert.equal(`<${/<(\S+)$/.exec(sdkPeer)?.[1]}`, apiRule?.allowedVersions, `the SDK accepts ${sdkPeer}`);
    assert.match(sdkPeer, /^>=1\.0\.0 </);
    assert.equal(
      majorOf(manifest.dependencies['@opentelemetry/sdk-trace-node'] ?? ''),
      majorBound('@opentelemetry/sdk-trace-node') - 1,
    );
  });

  it("keeps @types/node and package.json's engines on the same Node.js major", () => {
    const floor = majorOf(manifest.engines.node);
    assert.ok(floor >= 22, `engines: ${manifest.engines.node}`);
    assert.equal(majorOf(manifest.devDependencies['@types/node'] ?? ''), floor);
    assert.equal(majorBound('@types/node'), floor + 1);
  });
});
