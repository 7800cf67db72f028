import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const TOOLS_BIN = resolve(__dirname, '..', '..', '.tools', 'bin');

const OVERRIDES = {
  temporal: 'TEMPORAL_CLI_PATH',
  'temporal-test-server': 'TEMPORAL_TEST_SERVER_PATH',
  'temporal-server': 'TEMPORAL_SERVER_PATH',
  'temporal-sql-tool': 'TEMPORAL_SQL_TOOL_PATH',
  'temporal-ui-server': 'TEMPORAL_UI_SERVER_PATH',
} as const;

/** Path of a Temporal binary: the env override, else the copy `npm run setup` put under `.tools/bin`. */
export function temporalBinary(name: keyof typeof OVERRIDES): string {
  const path = process.env[OVERRIDES[name]] ?? join(TOOLS_BIN, name);
  if (!existsSync(path)) {
    throw new Error(`${path} is missing: run \`npm run setup\` (it fetches or builds the pinned binaries)`);
  }
  return path;
}
