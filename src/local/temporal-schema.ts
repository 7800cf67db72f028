import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { temporalBinary } from './binaries';
import { clusterVersions } from './cluster-versions';
import type { Postgres } from './postgres';

const run = promisify(execFile);

/** The two databases of Temporal's SQL persistence and the schema directory of each. */
export const TEMPORAL_DATABASES = [
  { name: 'temporal', schema: 'temporal' },
  { name: 'temporal_visibility', schema: 'visibility' },
] as const;

/** The server's PostgreSQL schema files (scripts/setup.mjs copies them from its module); TEMPORAL_SCHEMA_DIR overrides. */
export function schemaDir(): string {
  const dir =
    process.env.TEMPORAL_SCHEMA_DIR ??
    resolve(__dirname, '..', '..', '.tools', 'temporal-schema', clusterVersions().temporalServer);
  if (!existsSync(join(dir, 'postgresql', 'v12'))) {
    throw new Error(`${dir}/postgresql/v12 is missing: run \`npm run setup\` or set TEMPORAL_SCHEMA_DIR`);
  }
  return dir;
}

/**
 * Creates both databases and their schema as Temporal's own compose files do (temporal-sql-tool create,
 * setup-schema -v 0.0, update-schema), or brings an existing one up to the pinned version: each step is idempotent.
 */
export async function setUpTemporalSchema(postgres: Postgres, log: (line: string) => void): Promise<void> {
  const tool = temporalBinary('temporal-sql-tool');
  const dir = schemaDir();
  const env = { PATH: process.env.PATH ?? '', SQL_PASSWORD: postgres.password };
  for (const db of TEMPORAL_DATABASES) {
    const common = ['--plugin', 'postgres12', '--ep', '127.0.0.1', '-p', String(postgres.port), '-u', postgres.user];
    const sql = async (args: string[]) => {
      const { stdout, stderr } = await run(tool, [...common, '--db', db.name, ...args], { env });
      // Its DEBUG lines are every SQL statement of every schema version.
      const lines = `${stdout}${stderr}`.split('\n').filter((line) => line && !line.includes('DEBUG'));
      for (const line of lines) log(`temporal-sql-tool: ${line}`);
    };
    const exists = await sql(['create']).then(
      () => false,
      (err: unknown) => {
        if (err instanceof Error && /already exists/.test(err.message)) return true;
        throw err;
      },
    );
    if (!exists) await sql(['setup-schema', '-v', '0.0']);
    await sql(['update-schema', '-d', join(dir, 'postgresql', 'v12', db.schema, 'versioned')]);
  }
}
