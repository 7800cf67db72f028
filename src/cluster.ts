import { resolve } from 'node:path';
import { z } from 'zod';
import { loadConfigOrExit } from './config/config-loading';
import { withoutPassword } from './config/setting-parsers';
import { TOKEN_LIFETIME_SECONDS } from './local/cluster-auth';
import { startCluster } from './local/cluster-launcher';
import { clusterVersions } from './local/cluster-versions';
import { privateDataDir } from './local/secrets';

// Entry: `npm run cluster`, a real Temporal cluster in the foreground (PostgreSQL, temporal-server, Web UI server)
// with its data under DATA_DIR, and the payment records' database in the same PostgreSQL; Ctrl-C stops it. Workers
// and servers reach it with their own Temporal profile (TEMPORAL_CONFIG_FILE: address, namespace, token) and
// DATABASE_URL; the frontend refuses a call without a token that allows it (docs/security.md).

const schema = z.object({
  DATA_DIR: z.string().min(1).default('.data'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  CLUSTER_TEMPORAL_PORT: z.coerce.number().int().min(1).max(65535).default(7233),
  CLUSTER_UI_PORT: z.coerce.number().int().min(1).max(65535).default(8080),
  CLUSTER_LOG: z.enum(['true', 'false']).default('true'),
});

function log(message: string): void {
  process.stdout.write(`[cluster] ${message}\n`);
}

async function main(): Promise<void> {
  const config = loadConfigOrExit(schema, 'cluster');
  const started = Date.now();
  const versions = clusterVersions();
  privateDataDir(resolve(config.DATA_DIR));
  const cluster = await startCluster({
    dataDir: resolve(config.DATA_DIR),
    namespace: config.TEMPORAL_NAMESPACE,
    frontendPort: config.CLUSTER_TEMPORAL_PORT,
    uiPort: config.CLUSTER_UI_PORT,
    log,
    output: config.CLUSTER_LOG === 'true' ? (line) => process.stdout.write(`${line}\n`) : () => undefined,
  });
  const steps = Object.entries(cluster.timings).map(([step, ms]) => `${step} ${(ms / 1000).toFixed(1)}s`);
  log(`ready in ${((Date.now() - started) / 1000).toFixed(1)}s (${steps.join(', ')})`);
  log(`  Temporal ${versions.temporalServer}  ${cluster.address} (namespace ${config.TEMPORAL_NAMESPACE})`);
  log(`  Web UI ${versions.uiServer}      ${cluster.uiUrl} (read-only; needs a proxy that adds the reader's token)`);
  log(
    `  PostgreSQL ${versions.postgres}     127.0.0.1:${cluster.postgresPort}, records in ${withoutPassword(cluster.databaseUrl)}`,
  );
  // The password stays in its file: the command line reads it from there.
  const databaseUrl = new URL(cluster.databaseUrl);
  databaseUrl.password = 'PASSWORD';
  const shownUrl = databaseUrl.toString().replace('PASSWORD', `$(cat ${cluster.passwordFile})`);
  // Each process its own token: the tokens stay in their files too.
  const profile = (holder: 'server' | 'worker' | 'operator') =>
    `TEMPORAL_CONFIG_FILE=${cluster.auth.profileFile(holder)}`;
  log(`  then: ${profile('worker')} DATABASE_URL="${shownUrl}" npm run worker`);
  log(`        ${profile('server')} DATABASE_URL="${shownUrl}" npm run server`);
  log(`        ${profile('operator')} DATABASE_URL="${shownUrl}" npm run ops -- …`);
  log(`        TEMPORAL_CONFIG_FILE=${cluster.auth.profileFile('reader')} temporal workflow list   (reads only)`);
  log(
    `  tokens valid ${TOKEN_LIFETIME_SECONDS / 86400} days, new ones at every start (the key: ${cluster.auth.jwksFile})`,
  );
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    log('stopping…');
    void cluster.stop().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  cluster.server.process.once('exit', (code) => {
    if (stopping) return;
    log(`temporal-server exited unexpectedly (code ${code}); stopping`);
    stopping = true;
    void cluster.stop().then(() => process.exit(1));
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`cluster: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
