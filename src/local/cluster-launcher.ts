import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common';
import { registerSearchAttributes } from '../temporal/search-attributes';
import { SearchAttributes } from '../workflows/definitions';
import { temporalBinary } from './binaries';
import { writeClusterAuth } from './cluster-auth';
import type { ClusterAuth } from './cluster-auth';
import { clusterVersions } from './cluster-versions';
import { freePort } from './free-port';
import { startManaged } from './managed-process';
import type { ManagedProcess } from './managed-process';
import { migratedDatabase, startPostgres } from './postgres';
import type { Postgres } from './postgres';
import { DYNAMIC_CONFIG, TEMPORAL_SERVICES, temporalServerConfig, uiServerConfig } from './temporal-server-config';
import type { TemporalPorts } from './temporal-server-config';
import { setUpTemporalSchema } from './temporal-schema';
import { waitUntil } from './wait-until';

export interface ClusterOptions {
  /** Everything lives under `<dataDir>/cluster` and survives restarts. */
  dataDir: string;
  namespace: string;
  /** Frontend gRPC port; a free one when absent. */
  frontendPort?: number;
  /** Web UI port; a free one when absent. */
  uiPort?: number;
  /** numHistoryShards of a new data directory (HISTORY_SHARDS when absent); temporal-server refuses another later. */
  historyShards?: number;
  /** Progress, one line a step. */
  log: (line: string) => void;
  /** The processes' own output, line by line, prefixed with their names. */
  output: (line: string) => void;
}

export interface Cluster {
  /** The frontend, `127.0.0.1:port` (plaintext, loopback only). */
  address: string;
  /** The keys temporal-server checks tokens against, and each process's token (docs/security.md). */
  auth: ClusterAuth;
  uiUrl: string;
  postgresPort: number;
  /** The migrated `payments` database in the cluster's PostgreSQL (its URL holds the password). */
  databaseUrl: string;
  /** Where the PostgreSQL password is kept. */
  passwordFile: string;
  /** How long each step took, in ms. */
  timings: Record<'postgres' | 'schema' | 'records' | 'server' | 'namespace' | 'ui', number>;
  /** The temporal-server process, for the callers that watch it. */
  server: ManagedProcess;
  stop(): Promise<void>;
}

/**
 * How long the namespace keeps a closed workflow's history, for debugging and replay (the payment records live in
 * PostgreSQL for as long as the business keeps them: docs/records.md). Compose sets the same (168h).
 */
export const NAMESPACE_RETENTION = '7 days';

/** The database of the payment records in the cluster's PostgreSQL (compose creates the same). */
const RECORDS_DATABASE = 'payments';

/** A query over every payment search attribute: it answers only once the frontend knows them all in the namespace. */
const SEARCH_ATTRIBUTES_QUERY = Object.values(SearchAttributes)
  .map((key) => `${key.name} = ${key.type === 'DOUBLE' ? '0' : "'-'"}`)
  .join(' AND ');

async function temporalPorts(frontendPort?: number): Promise<TemporalPorts> {
  const pair = async (grpc?: number) => ({ grpc: grpc ?? (await freePort()), membership: await freePort() });
  return {
    frontend: await pair(frontendPort),
    'internal-frontend': await pair(),
    history: await pair(),
    matching: await pair(),
    worker: await pair(),
    frontendHttp: await freePort(),
    internalFrontendHttp: await freePort(),
  };
}

/**
 * A real Temporal cluster from its parts: PostgreSQL (Debian's), the schema set up or updated with temporal-sql-tool,
 * temporal-server (all services in one process) with the namespace and the payment search attributes, and the Web
 * UI server pointed at it. Stops what it started if a later step fails.
 */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const { log } = options;
  const dir = join(options.dataDir, 'cluster');
  mkdirSync(dir, { recursive: true });
  const versions = clusterVersions();
  const started: { stop(): Promise<void> }[] = [];
  const stop = async () => {
    for (const part of started.reverse()) await part.stop();
  };
  const timings = { postgres: 0, schema: 0, records: 0, server: 0, namespace: 0, ui: 0 };
  const timed = async <T>(step: keyof typeof timings, work: () => Promise<T>): Promise<T> => {
    const t0 = Date.now();
    const value = await work();
    timings[step] = Date.now() - t0;
    return value;
  };
  try {
    log(`PostgreSQL ${versions.postgres} (data in ${join(dir, 'postgres')})…`);
    const postgres = await timed('postgres', async () =>
      startPostgres(join(dir, 'postgres'), await freePort(), options.output, { within: options.dataDir }),
    );
    started.push(postgres);
    log(`schema of Temporal ${versions.temporalServer} (temporal-sql-tool, postgres12)…`);
    await timed('schema', () => setUpTemporalSchema(postgres, options.output));
    log(`the payment records' database (${RECORDS_DATABASE}) and its migrations…`);
    const databaseUrl = await timed('records', () => migratedDatabase(postgres, RECORDS_DATABASE, 'cluster', log));
    log(`temporal-server ${versions.temporalServer}…`);
    const { server, address, auth } = await timed('server', () => startTemporalServer(dir, postgres, options));
    started.push(server);
    await timed('namespace', () =>
      prepareNamespace(address, options.namespace, () => server.gone(), auth.tokens.setup),
    );
    log(`Temporal Web UI server ${versions.uiServer}…`);
    const ui = await timed('ui', () => startUiServer(dir, address, options));
    started.push(ui.process);
    return {
      address,
      auth,
      uiUrl: ui.url,
      postgresPort: postgres.port,
      databaseUrl,
      passwordFile: join(dir, 'postgres', 'password'),
      timings,
      server,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function startTemporalServer(
  dir: string,
  postgres: Postgres,
  options: ClusterOptions,
): Promise<{ server: ManagedProcess; address: string; auth: ClusterAuth }> {
  const ports = await temporalPorts(options.frontendPort);
  const address = `127.0.0.1:${ports.frontend.grpc}`;
  const auth = writeClusterAuth(join(dir, 'auth'), options.namespace, address);
  const configFile = join(dir, 'temporal-server.yaml');
  const dynamicConfigFile = join(dir, 'dynamic-config.yaml');
  writeFileSync(dynamicConfigFile, DYNAMIC_CONFIG);
  // It holds the database password.
  writeFileSync(
    configFile,
    temporalServerConfig(postgres, ports, dynamicConfigFile, auth.jwksFile, options.historyShards),
    { mode: 0o600 },
  );
  chmodSync(configFile, 0o600);
  const server = startManaged(
    'temporal-server',
    temporalBinary('temporal-server'),
    ['--config-file', configFile, 'start', ...TEMPORAL_SERVICES.flatMap((name) => ['--service', name])],
    { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, log: options.output },
  );
  try {
    await waitUntil(
      async () => {
        // GetSystemInfo is a health check: the authorizer lets it through without a token.
        const connection = await Connection.connect({ address, connectTimeout: 1000 });
        try {
          await connection.workflowService.getSystemInfo({});
        } finally {
          await connection.close();
        }
        return true;
      },
      {
        timeoutMs: 90_000,
        intervalMs: 300,
        stopIf: () => server.gone(),
        timedOut: (err) => new Error(`temporal-server did not answer on ${address} within 90s: ${String(err)}`),
      },
    );
  } catch (err) {
    await server.stop();
    throw err;
  }
  return { server, address, auth };
}

/**
 * Registers the namespace and the search attributes (both idempotent) and waits until queries on them answer, with
 * the setup token (`temporal-system:admin`).
 */
export async function prepareNamespace(
  address: string,
  namespace: string,
  gone: () => Error | undefined,
  apiKey: string,
): Promise<void> {
  const retry = <T>(what: string, step: () => Promise<T | undefined>) =>
    waitUntil(step, {
      timeoutMs: 60_000,
      intervalMs: 250,
      stopIf: gone,
      timedOut: (err) => new Error(`${what} not done within 60s: ${String(err)}`),
    });
  const connection = await retry('connect', () =>
    Connection.connect({ address, connectTimeout: 1000, apiKey, tls: false }),
  );
  const alreadyExists = (err: unknown) => {
    if (!(err instanceof Error && /already (exists|registered)/i.test(err.message))) throw err;
  };
  try {
    await retry('register the namespace', () =>
      connection.workflowService
        .registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(NAMESPACE_RETENTION) })
        .catch(alreadyExists)
        .then(() => true),
    );
    await retry('register the search attributes', () =>
      registerSearchAttributes(connection, namespace)
        .catch(alreadyExists)
        .then(() => true),
    );
    await retry('query the search attributes', () =>
      connection.workflowService.countWorkflowExecutions({ namespace, query: SEARCH_ATTRIBUTES_QUERY }),
    );
  } finally {
    await connection.close();
  }
}

async function startUiServer(
  dir: string,
  frontend: string,
  options: ClusterOptions,
): Promise<{ process: ManagedProcess; url: string }> {
  const port = options.uiPort ?? (await freePort());
  const configDir = join(dir, 'ui', 'config');
  mkdirSync(configDir, { recursive: true });
  writeFileSync(join(configDir, 'development.yaml'), uiServerConfig(frontend, port, options.namespace));
  const ui = startManaged(
    'ui-server',
    temporalBinary('temporal-ui-server'),
    ['--root', join(dir, 'ui'), '--config', 'config', '--env', 'development', 'start'],
    { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, log: options.output },
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntil(async () => ((await fetch(`${url}/api/v1/settings`)).ok ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 200,
      stopIf: () => ui.gone(),
      timedOut: (err) => new Error(`the Web UI server did not answer on ${url} within 30s: ${String(err)}`),
    });
  } catch (err) {
    await ui.stop();
    throw err;
  }
  return { process: ui, url };
}
