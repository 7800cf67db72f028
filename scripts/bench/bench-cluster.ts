import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster } from '../../src/local/cluster-launcher';
import { clusterVersions } from '../../src/local/cluster-versions';
import type { Env } from '../../src/local/stack-builder';
import { log } from './stats';

/** The real cluster a `--cluster` run starts for itself, as `npm run cluster` does, in a temporary DATA_DIR. */
export interface BenchCluster {
  /** The frontend, `127.0.0.1:port`. */
  address: string;
  /** The migrated `payments` database in the cluster's PostgreSQL, beside Temporal's own. */
  databaseUrl: string;
  /** temporal-server: every service in one process. */
  serverPid: number;
  /** numHistoryShards, as the configuration the launcher wrote says. */
  historyShards: number;
  /** "temporal-server 1.x.y on PostgreSQL N". */
  versions: string;
  /** A holder's connection variables: its Temporal profile (address, namespace, its own token; plaintext, loopback). */
  profile(holder: 'worker' | 'server'): Env;
  /** Stops the cluster and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Starts PostgreSQL, temporal-server (with `historyShards`) and the Web UI server in a fresh temporary directory;
 * `broken` if it dies.
 */
export async function startBenchCluster(historyShards: number, broken: (what: string) => void): Promise<BenchCluster> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-cluster-'));
  // PostgreSQL runs as its own OS user when the bench runs as root: it must reach its directory.
  chmodSync(dataDir, 0o755);
  const output: string[] = [];
  const versions = clusterVersions();
  log(`starting a real cluster in ${dataDir}`);
  const cluster = await startCluster({
    dataDir,
    namespace: 'default',
    historyShards,
    log: (line) => log(`  cluster: ${line}`),
    output: (line) => {
      output.push(line);
      if (output.length > 30) output.shift();
    },
  }).catch((err: unknown) => {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  });
  let stopping = false;
  cluster.server.process.once('exit', (code, signal) => {
    if (!stopping) broken(`temporal-server exited mid-run (${code ?? signal})\n${output.join('\n')}`);
  });
  const config = readFileSync(join(dataDir, 'cluster', 'temporal-server.yaml'), 'utf8');
  const shards = /^\s*numHistoryShards:\s*(\d+)\s*$/m.exec(config)?.[1];
  if (Number(shards) !== historyShards) {
    throw new Error(`the launcher wrote numHistoryShards ${shards ?? 'none'}, not the ${historyShards} asked for`);
  }
  return {
    address: cluster.address,
    databaseUrl: cluster.databaseUrl,
    serverPid: cluster.server.process.pid ?? 0,
    historyShards: Number(shards),
    versions: `temporal-server ${versions.temporalServer} on PostgreSQL ${versions.postgres}`,
    profile: (holder) => ({ TEMPORAL_CONFIG_FILE: cluster.auth.profileFile(holder) }),
    async stop() {
      if (stopping) return;
      stopping = true;
      await cluster.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
