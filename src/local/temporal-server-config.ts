import { pathToFileURL } from 'node:url';
import type { Postgres } from './postgres';

export type TemporalService = 'frontend' | 'internal-frontend' | 'history' | 'matching' | 'worker';
export type TemporalPorts = Record<TemporalService, { grpc: number; membership: number }> & {
  frontendHttp: number;
  internalFrontendHttp: number;
};

/** The services the cluster's temporal-server runs (`--service` each): the internal frontend serves the system workers. */
export const TEMPORAL_SERVICES: readonly TemporalService[] = [
  'frontend',
  'internal-frontend',
  'history',
  'matching',
  'worker',
];

/**
 * History shards of `npm run cluster` and compose: fixed when the database is first used, so never changed for a data
 * directory (the bench's cluster, new each run, takes another with `--shards N`).
 */
export const HISTORY_SHARDS = 4;

/**
 * The authorizer of the project's temporal-server (tools/temporal-server): Temporal's default, except that only a
 * token with the namespace's `worker` role takes and answers tasks (docs/security.md, "Temporal authorization").
 */
export const TEMPORAL_AUTHORIZER = 'worker';

/**
 * Temporal's server configuration (after its config/development-postgres12.yaml): both stores on PostgreSQL
 * (postgres12 plugin), every service in one process on loopback, no TLS (loopback only). The frontend authorizes
 * every call with the default JWT claim mapper and the worker authorizer (TEMPORAL_AUTHORIZER), against the keys in
 * `jwksFile`; the system workers go through the internal frontend, which trusts its callers (loopback, like history
 * and matching). `historyShards` only for a new database: one already used keeps the count it was made with.
 */
export function temporalServerConfig(
  postgres: Postgres,
  ports: TemporalPorts,
  dynamicConfigFile: string,
  jwksFile: string,
  historyShards = HISTORY_SHARDS,
): string {
  const store = (database: string, conns: number) => `
      sql:
        pluginName: postgres12
        databaseName: ${database}
        connectAddr: 127.0.0.1:${postgres.port}
        connectProtocol: tcp
        user: ${postgres.user}
        password: ${JSON.stringify(postgres.password)}
        maxConns: ${conns}
        maxIdleConns: ${conns}
        maxConnLifetime: 1h`;
  const httpPort: Partial<Record<TemporalService, number>> = {
    frontend: ports.frontendHttp,
    'internal-frontend': ports.internalFrontendHttp,
  };
  const services = TEMPORAL_SERVICES.map(
    (name) => `
  ${name}:
    rpc:
      grpcPort: ${ports[name].grpc}
      membershipPort: ${ports[name].membership}
      bindOnLocalHost: true${httpPort[name] ? `\n      httpPort: ${httpPort[name]}` : ''}`,
  );
  return `# Written by src/local/temporal-server-config.ts on every start of the cluster.
log:
  stdout: true
  level: warn
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: ${historyShards}
  datastores:
    postgres-default:${store('temporal', 20)}
    postgres-visibility:${store('temporal_visibility', 4)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
  authorization:
    jwtKeyProvider:
      keySourceURIs:
        - ${pathToFileURL(jwksFile).href}
      refreshInterval: 1m
    permissionsClaimName: permissions
    authorizer: ${TEMPORAL_AUTHORIZER}
    claimMapper: default
services:${services.join('')}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:${ports.frontend.grpc}
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: ${dynamicConfigFile}
  pollInterval: 10s
`;
}

/** Dynamic configuration: search attributes answer queries as soon as they are registered (as the dev server's do). */
export const DYNAMIC_CONFIG = `# Written by src/local/temporal-server-config.ts.
system.forceSearchAttributesCacheRefreshOnRead:
  - value: true
limit.maxIDLength:
  - value: 255
`;

/** The Web UI server's configuration: the frontend's address, read-only, on loopback. */
export function uiServerConfig(frontend: string, port: number, namespace: string): string {
  return `# Written by src/local/temporal-server-config.ts on every start of the cluster.
temporalGrpcAddress: ${frontend}
host: 127.0.0.1
port: ${port}
enableUi: true
defaultNamespace: ${namespace}
disableWriteActions: true
workflowTerminateDisabled: true
workflowResetDisabled: true
notifyOnNewVersion: false
disableNewsFetch: true
cors:
  cookieInsecure: true
  unsafeAllowAllOrigins: false
  allowOrigins:
    - http://127.0.0.1:${port}
    - http://localhost:${port}
`;
}
