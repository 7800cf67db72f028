import assert from 'node:assert/strict';
import { it } from 'node:test';
import { benchSettings } from '../scripts/bench/settings';

// `npm run bench`'s command line and BENCH_* settings: the dev server and one worker unless told otherwise.

it('runs on the dev server with one worker by default; --cluster and --workers N choose a real cluster and N workers', () => {
  const defaults = benchSettings({});
  assert.deepEqual([defaults.BENCH_CLUSTER, defaults.BENCH_WORKERS, defaults.BENCH_ITEMS], ['false', 1, 2000]);
  const flags = benchSettings({}, ['--cluster', '--workers', '2', '--batch-items', '100']);
  assert.deepEqual([flags.BENCH_CLUSTER, flags.BENCH_WORKERS, flags.BENCH_ITEMS], ['true', 2, 100]);
  const env = benchSettings({ BENCH_CLUSTER: 'true', BENCH_WORKERS: '3' });
  assert.deepEqual([env.BENCH_CLUSTER, env.BENCH_WORKERS], ['true', 3]);
  // The command line wins over the environment.
  assert.equal(benchSettings({ BENCH_WORKERS: '3' }, ['--workers', '1']).BENCH_WORKERS, 1);
});

it('refuses a flag without its number, zero workers, an unknown argument and a bad BENCH_CLUSTER, naming each', () => {
  assert.throws(() => benchSettings({}, ['--workers']), /--workers needs a number/);
  assert.throws(() => benchSettings({}, ['--workers', '--cluster']), /--workers needs a number/);
  assert.throws(() => benchSettings({}, ['--workers', '0']), /^Error: BENCH_WORKERS: /);
  assert.throws(() => benchSettings({}, ['--batch-items', 'many']), /^Error: BENCH_ITEMS: /);
  assert.throws(() => benchSettings({}, ['--clusters']), /unknown argument --clusters/);
  assert.throws(() => benchSettings({ BENCH_CLUSTER: 'yes' }), /^Error: BENCH_CLUSTER: must be true or false/);
});
