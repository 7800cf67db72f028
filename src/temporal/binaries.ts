import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const TOOLS_BIN = resolve(__dirname, '..', '..', '.tools', 'bin');

/** Path of a Temporal binary: the env override, else the copy `npm run setup` put under `.tools/bin`. */
export function temporalBinary(name: 'temporal' | 'temporal-test-server'): string {
  const override = name === 'temporal' ? process.env.TEMPORAL_CLI_PATH : process.env.TEMPORAL_TEST_SERVER_PATH;
  const path = override ?? join(TOOLS_BIN, name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run setup\` (it fetches the pinned binaries)`);
  return path;
}
