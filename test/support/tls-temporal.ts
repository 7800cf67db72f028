import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common';
import { eventually } from '../../src/local/eventually';
import { temporalBinary } from '../../src/local/binaries';
import { temporalConnection } from '../../src/temporal/connection-settings';
import { registerSearchAttributes } from '../../src/temporal/search-attributes';
import { SearchAttributes } from '../../src/workflows/definitions';
import { freePort } from '../../src/local/free-port';

/** The name in the server certificate: clients reach 127.0.0.1 and override the name, as behind a load balancer. */
export const SERVER_NAME = 'temporal.test';
/** The common name of the certificate Temporal's own system worker presents to its frontend. */
export const SYSTEM_WORKER_NAME = 'temporal-system';

export interface Certificates {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  systemWorkerCert: string;
  systemWorkerKey: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A throwaway CA (P-256, one day) and the server and client certificates it signed, as PEM files in a fresh directory. */
export function generateCertificates(): Certificates {
  const dir = mkdtempSync(join(tmpdir(), 'temporal-tls-'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(dir, [
    'req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=throwaway test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]); // prettier-ignore
  const leaf = (name: string, san: string, usage: string) => {
    writeFileSync(
      join(dir, `${name}.ext`),
      `subjectAltName=${san}\nextendedKeyUsage=${usage}\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n`,
    );
    openssl(dir, ['req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
    openssl(dir, [
      'x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1',
      '-out', `${name}.pem`, '-extfile', `${name}.ext`,
    ]); // prettier-ignore
  };
  leaf('server', `DNS:${SERVER_NAME}`, 'serverAuth');
  leaf('payments', 'DNS:payments.test', 'clientAuth');
  leaf(SYSTEM_WORKER_NAME, `DNS:${SYSTEM_WORKER_NAME}.test`, 'clientAuth');
  return {
    dir,
    ca: join(dir, 'ca.pem'),
    serverCert: join(dir, 'server.pem'),
    serverKey: join(dir, 'server.key'),
    clientCert: join(dir, 'payments.pem'),
    clientKey: join(dir, 'payments.key'),
    systemWorkerCert: join(dir, `${SYSTEM_WORKER_NAME}.pem`),
    systemWorkerKey: join(dir, `${SYSTEM_WORKER_NAME}.key`),
  };
}

type Service = 'frontend' | 'history' | 'matching' | 'worker';
type Ports = Record<Service, { grpc: number; membership: number }>;

/**
 * Temporal's server configuration (after its config/development-sqlite.yaml): SQLite in memory, every service on
 * loopback, and a frontend that serves only TLS and requires a client certificate signed by the test CA. The system
 * worker reaches the frontend with a certificate of its own; services talk to each other in plaintext on loopback.
 */
function serverConfig(certificates: Certificates, ports: Ports): string {
  const sqlite = `
      sql:
        pluginName: sqlite
        databaseName: default
        connectAddr: localhost
        connectProtocol: tcp
        connectAttributes:
          mode: memory
          cache: private
        maxConns: 1
        maxIdleConns: 1
        maxConnLifetime: 1h`;
  const services = Object.entries(ports).map(
    ([name, port]) => `
  ${name}:
    rpc:
      grpcPort: ${port.grpc}
      membershipPort: ${port.membership}
      bindOnLocalHost: true`,
  );
  return `# Written by test/support/tls-temporal.ts for one test run.
log:
  stdout: true
  level: debug # the frontend logs each accepted TLS connection's client certificate at debug
persistence:
  defaultStore: sqlite-default
  visibilityStore: sqlite-visibility
  numHistoryShards: 1
  datastores:
    sqlite-default:${sqlite}
    sqlite-visibility:${sqlite}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
  tls:
    frontend:
      server:
        certFile: ${certificates.serverCert}
        keyFile: ${certificates.serverKey}
        requireClientAuth: true
        clientCaFiles: [${certificates.ca}]
    systemWorker:
      certFile: ${certificates.systemWorkerCert}
      keyFile: ${certificates.systemWorkerKey}
      client:
        serverName: ${SERVER_NAME}
        rootCaFiles: [${certificates.ca}]
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
`;
}

export interface TlsTemporal {
  /** The frontend (`127.0.0.1:port`): TLS 1.2+, a client certificate from the test CA required. */
  address: string;
  certificates: Certificates;
  /** The TEMPORAL_* settings of an mTLS connection to it. */
  mtlsEnv: Record<string, string>;
  /** The client certificates' common names, one per TLS connection accepted after set-up (the server's debug log). */
  accepted: string[];
  /** Why the server refused a TLS connection after set-up, one line per refusal (Go's TLS error, gRPC's log). */
  refused: string[];
  /** How long the server took to start, register the namespace and search attributes and answer queries on them. */
  startMs: number;
  stop(): Promise<void>;
}

const NAMESPACE = 'default';
const ACCEPTED = 'successfully established incoming TLS connection';
const REFUSED = /ServerHandshake\(.*?\) failed: (.+?)"?$/;

/** A query over every payment search attribute: it answers only once the frontend knows them all in the namespace. */
const SEARCH_ATTRIBUTES_QUERY = Object.values(SearchAttributes)
  .map((key) => `${key.name} = ${key.type === 'DOUBLE' ? '0' : "'-'"}`)
  .join(' AND ');

/**
 * Temporal's own server (built by `npm run setup`, `.tools/bin/temporal-server`), in memory, serving only mTLS on its
 * frontend; the default namespace and the payment search attributes are registered over mTLS before it is returned.
 */
export async function startTlsTemporal(): Promise<TlsTemporal> {
  const started = Date.now();
  const certificates = generateCertificates();
  const ports = {} as Ports;
  for (const service of ['frontend', 'history', 'matching', 'worker'] as const) {
    ports[service] = { grpc: await freePort(), membership: await freePort() };
  }
  const configFile = join(certificates.dir, 'temporal-server.yaml');
  writeFileSync(configFile, serverConfig(certificates, ports));
  const child = spawn(temporalBinary('temporal-server'), ['--config-file', configFile, '--allow-no-auth', 'start'], {
    // gRPC's INFO log names the TLS error of each refused connection.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', GRPC_GO_LOG_SEVERITY_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const accepted: string[] = [];
  const refused: string[] = [];
  const lastLines: string[] = [];
  const keep = (line: string) => {
    lastLines.push(line);
    if (lastLines.length > 20) lastLines.shift();
  };
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (!line.includes(ACCEPTED)) return keep(line);
    accepted.push(String((JSON.parse(line) as { name?: string }).name));
  });
  createInterface({ input: child.stderr }).on('line', (line) => {
    const reason = REFUSED.exec(line)?.[1];
    if (reason) refused.push(reason);
    else if (!line.includes('INFO:')) keep(line);
  });

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    rmSync(certificates.dir, { recursive: true, force: true });
  };

  const address = `127.0.0.1:${ports.frontend.grpc}`;
  const mtlsEnv = {
    TEMPORAL_ADDRESS: address,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: certificates.ca,
    TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
    TEMPORAL_TLS_CLIENT_CERT_PATH: certificates.clientCert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: certificates.clientKey,
  };
  try {
    await prepare(temporalConnection(mtlsEnv).options, () => child.exitCode !== null);
  } catch (err) {
    await stop();
    throw new Error(`temporal-server at ${address}: ${String(err)}\n${lastLines.join('\n')}`);
  }
  // What the caller's connections do, not the set-up's.
  accepted.length = 0;
  refused.length = 0;
  return { address, certificates, mtlsEnv, accepted, refused, startMs: Date.now() - started, stop };
}

/** Waits for the frontend over mTLS, registers the namespace and search attributes, and waits until they resolve. */
async function prepare(options: Parameters<typeof Connection.connect>[0], exited: () => boolean): Promise<void> {
  // One 60 s budget for all the steps together.
  const deadline = Date.now() + 60_000;
  const retry = <T>(what: string, step: () => Promise<T>) =>
    eventually(step, {
      timeoutMs: Math.max(0, deadline - Date.now()),
      intervalMs: 200,
      what,
      stopIf: () => (exited() ? new Error('the server exited') : undefined),
    });
  const connection = await retry('connect', () => Connection.connect({ ...options, connectTimeout: 1000 }));
  const { workflowService } = connection;
  try {
    await retry('register the namespace', () =>
      workflowService
        .registerNamespace({ namespace: NAMESPACE, workflowExecutionRetentionPeriod: msToTs('1 day') })
        .catch((err: unknown) => {
          // A retry after a lost answer finds it registered.
          if (!(err instanceof Error && /already exists/i.test(err.message))) throw err;
        }),
    );
    await retry('register the search attributes', () => registerSearchAttributes(connection, NAMESPACE));
    await retry('query the search attributes', () =>
      workflowService.countWorkflowExecutions({ namespace: NAMESPACE, query: SEARCH_ATTRIBUTES_QUERY }),
    );
  } finally {
    await connection.close();
  }
}
