import assert from 'node:assert/strict';
import { it } from 'node:test';
import { benchSettings } from '../scripts/bench/settings';
import { HISTORY_SHARDS } from '../src/local/temporal-server-config';

// `npm run bench`'s command line and BENCH_* settings: the dev server and one worker unless told otherwise.

it('runs one batch on the dev server with one worker by default; --cluster, --workers N, --shards N and --batches N choose otherwise', () => {
  const defaults = benchSettings({});
  assert.deepEqual([defaults.BENCH_CLUSTER, defaults.BENCH_WORKERS, defaults.BENCH_ITEMS], ['false', 1, 2000]);
  const flags = benchSettings({}, ['--cluster', '--workers', '2', '--batch-items', '100']);
  assert.deepEqual([flags.BENCH_CLUSTER, flags.BENCH_WORKERS, flags.BENCH_ITEMS], ['true', 2, 100]);
  const env = benchSettings({ BENCH_CLUSTER: 'true', BENCH_WORKERS: '3' });
  assert.deepEqual([env.BENCH_CLUSTER, env.BENCH_WORKERS], ['true', 3]);
  assert.equal(defaults.BENCH_SHARDS, HISTORY_SHARDS);
  assert.equal(defaults.BENCH_BATCHES, 1);
  assert.equal(benchSettings({}, ['--batches', '5']).BENCH_BATCHES, 5);
  assert.equal(benchSettings({}, ['--cluster', '--shards', '16']).BENCH_SHARDS, 16);
  assert.equal(benchSettings({ BENCH_CLUSTER: 'true', BENCH_SHARDS: '1' }).BENCH_SHARDS, 1);
  // The command line wins over the environment.
  assert.equal(benchSettings({ BENCH_WORKERS: '3' }, ['--workers', '1']).BENCH_WORKERS, 1);
});

it('refuses a flag without its number, zero workers, shards or batches, shards without a cluster, batches that do not share the concurrency, an unknown argument and a bad BENCH_CLUSTER, naming each', () => {
  assert.throws(() => benchSettings({}, ['--workers']), /--workers needs a number/);
  assert.throws(() => benchSettings({}, ['--workers', '--cluster']), /--workers needs a number/);
  assert.throws(() => benchSettings({}, ['--workers', '0']), /^Error: BENCH_WORKERS: /);
  assert.throws(() => benchSettings({}, ['--batch-items', 'many']), /^Error: BENCH_ITEMS: /);
  assert.throws(() => benchSettings({}, ['--clusters']), /unknown argument --clusters/);
  assert.throws(() => benchSettings({ BENCH_CLUSTER: 'yes' }), /^Error: BENCH_CLUSTER: must be true or false/);
  assert.throws(() => benchSettings({}, ['--cluster', '--shards', '0']), /^Error: BENCH_SHARDS: /);
  assert.throws(() => benchSettings({}, ['--shards', '8']), /^Error: BENCH_SHARDS: .*--cluster/);
  assert.throws(() => benchSettings({}, ['--batches', '0']), /^Error: BENCH_BATCHES: /);
  // The batches share the concurrency: 50 items in flight do not split over 3 batches.
  assert.throws(() => benchSettings({}, ['--batches', '3']), /^Error: BENCH_BATCHES: must divide BENCH_CONCURRENCY/);
  assert.throws(() => benchSettings({ BENCH_ITEMS: '1' }, ['--batches', '2']), /^Error: BENCH_BATCHES: more batches/);
});
