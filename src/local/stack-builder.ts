import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { parseConfig } from '../config/config-loading';
import { serverSchema } from '../config/process-settings';
import { createSandbox } from '../sandbox/sandbox-app';
import type { Sandbox, SandboxOptions } from '../sandbox/sandbox-app';
import { startServer } from '../server';
import { startDevServer } from './dev-server';
import type { DevServer, DevServerOptions } from './dev-server';
import { freePort } from './free-port';
import { startScratchDatabase } from './postgres';
import type { Postgres } from './postgres';
import { startRedisServer } from './redis-server';
import type { RedisServer, RedisServerOptions } from './redis-server';
import { waitForHttp } from './supervisor';
import { startWorkerProcess } from './worker-process';

// The local stack the tests, the benchmark and the chaos harness run against: Temporal, Redis, PostgreSQL, the
// sandbox, the payment worker and the API server(s). Each caller says where each part runs and what environment it gets.

const SERVER_SCRIPT = resolve(__dirname, '..', '..', 'dist', 'server.js');

export type Env = Record<string, string>;

/** A started worker or server: in this process or a child one. */
export interface Launched {
  /** The child process, when it runs in one. */
  child?: ChildProcess;
  /** The server's Prometheus port, for a server. */
  metricsPort?: number;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts a worker or server with its environment. */
export type Launcher = (env: Env, name: string) => Promise<Launched>;

/** A proxy placed between two parts (the chaos harness's fault proxies). */
export interface Proxy {
  url: string;
  close(): Promise<void>;
}

/** What the environment of the worker and the servers is built from. */
export interface StackParts {
  temporalAddress: string;
  vaultUrl: string;
  /** DATABASE_URL of the worker and the servers: a migrated database. */
  databaseUrl: string;
  sandbox: Sandbox;
  /** Where the worker reaches the provider: the sandbox, or the proxy in front of it. */
  providerUrl: string;
  /** Where the provider's callbacks go: the first server, or the proxy in front of the last one. */
  publicBaseUrl: string;
  serverUrls: string[];
  /** WORKER_METRICS_ADDRESS of the worker. */
  workerMetricsAddress: string;
}

export interface StackBuilderOptions {
  /** An address already serving, or a dev server to start (persisted when `dbFile` is given, so it can restart). */
  temporal: { address: string } | { devServer: Omit<DevServerOptions, 'port'> };
  /** A vault URL already serving, or a Redis server to start (its password kept across `startVault`). */
  vault: { url: string } | { redis: RedisServerOptions };
  /**
   * A migrated database already serving (the tests' TEST_DATABASE_URL); absent, a PostgreSQL of this stack's own in a
   * temporary directory, removed when the stack stops (the benchmark, the chaos harness).
   */
  database?: { url: string };
  sandbox: SandboxOptions;
  /** A proxy between the worker and the sandbox. */
  providerProxy?: (sandboxUrl: string) => Promise<Proxy>;
  /** A proxy between the sandbox's callbacks and the last server. */
  callbackProxy?: (serverUrl: string) => Promise<Proxy>;
  /**
   * The environment: `shared` goes to the worker and the servers, then each one's own. Both get TEMPORAL_ADDRESS,
   * VAULT_URL, DATABASE_URL, PUBLIC_BASE_URL and PROVIDER_BASE_URL from the parts unless given; the worker WORKER_METRICS_ADDRESS;
   * each server PORT and a fresh METRICS_PORT.
   */
  env: (parts: StackParts) => { shared?: Env; worker?: Env; server?: Env };
  /** How the worker runs; none when absent (the caller runs its own). */
  worker?: Launcher;
  /** How the servers run, one entry each. */
  servers: Launcher[];
  /** Called when a child worker or server exits without being stopped. */
  onUnexpectedExit?: (name: string, code: number | null, signal: NodeJS.Signals | null) => void;
}

export interface BuiltStack extends StackParts {
  workerEnv: Env;
  serverEnv: Env;
  /** The dev server's, Redis's and PostgreSQL's processes, when this stack started them. */
  devServer?: DevServer;
  redis?: RedisServer;
  postgres?: Postgres;
  worker?: Launched;
  servers: (Launched | undefined)[];
  startWorker(): Promise<void>;
  stopWorker(signal?: NodeJS.Signals): Promise<void>;
  startServer(index: number): Promise<void>;
  stopServer(index: number, signal?: NodeJS.Signals): Promise<void>;
  /** Stops and starts the dev server this stack started; resolves to how long it was away, in ms. */
  restartTemporal(): Promise<number>;
  stopVault(): Promise<void>;
  startVault(): Promise<void>;
  /** Keeps a child the caller started: killed with the stack, and whenever this process exits. */
  adopt(child: ChildProcess, name: string): ChildProcess;
  /** Stops what it started, the last started first; a stop that fails does not keep the others running. */
  stop(): Promise<void>;
}

// Children are killed when this process exits however it exits, so an error path leaves none behind.
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) if (running(child)) child.kill('SIGKILL');
});
const stoppedOnPurpose = new WeakSet<ChildProcess>();

function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Sends `signal` (SIGTERM by default), then SIGKILL after 10 s; resolves once the process has exited. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  stoppedOnPurpose.add(child);
  if (!running(child)) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** The compiled worker as `npm run worker` runs it, in a child process; `nodeArgs` go before the worker's own. */
export function workerProcess(nodeArgs: readonly string[] = []): Launcher {
  return async (env) => {
    const child = await startWorkerProcess(env, nodeArgs);
    return { child, stop: (signal) => stopChild(child, signal) };
  };
}

/**
 * The compiled server as `npm run server` runs it, in a child process; resolves once `/healthz` answers. `nodeArgs`
 * go before the server's own.
 */
export function serverProcess(nodeArgs: readonly string[] = []): Launcher {
  return async (env, name) => {
    const child = spawn(process.execPath, [...nodeArgs, SERVER_SCRIPT], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitForHttp(`http://127.0.0.1:${env.PORT}/healthz`, child, name).catch(async (err: unknown) => {
      await stopChild(child, 'SIGKILL');
      throw err;
    });
    return { child, metricsPort: Number(env.METRICS_PORT), stop: (signal) => stopChild(child, signal) };
  };
}

/** The server in this process, writing its log to `logStream`. */
export function serverInProcess(logStream?: NodeJS.WritableStream): Launcher {
  return async (env) => {
    const server = await startServer(parseConfig(serverSchema, env), logStream);
    return { metricsPort: server.metricsPort, stop: () => server.close() };
  };
}

/** Starts the stack's parts in order; if one fails, stops those already started and throws. */
export async function buildStack(options: StackBuilderOptions): Promise<BuiltStack> {
  const cleanups: (() => Promise<unknown>)[] = [];
  let stopping = false;
  let devServer: DevServer | undefined;
  let redis: RedisServer | undefined;
  const temporalPort = await freePort();
  const vaultPort = await freePort();
  const startTemporal = async () => {
    if ('address' in options.temporal) return options.temporal.address;
    devServer = await startDevServer({ ...options.temporal.devServer, port: temporalPort });
    return devServer.address;
  };
  const startVault = async () => {
    if ('url' in options.vault) return options.vault.url;
    redis = await startRedisServer(vaultPort, options.vault.redis);
    return redis.url;
  };
  let postgres: Postgres | undefined;
  const startDatabase = async () => {
    if (options.database) return options.database.url;
    const scratch = await startScratchDatabase('stack builder');
    cleanups.push(() => scratch.stop());
    postgres = scratch.postgres;
    return scratch.url;
  };
  const stop = async () => {
    stopping = true;
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  };
  const adopt = (child: ChildProcess, name: string) => {
    children.add(child);
    child.once('exit', (code, signal) => {
      children.delete(child);
      if (!stopping && !stoppedOnPurpose.has(child)) options.onUnexpectedExit?.(name, code, signal);
    });
    // A profiled child (`--cpu-prof`, the bench's BENCH_*_NODE_ARGS) is asked to stop, so that it writes its profile.
    const profiled = child.spawnargs.some((arg) => arg.startsWith('--cpu-prof'));
    cleanups.push(() => stopChild(child, profiled ? 'SIGTERM' : 'SIGKILL'));
    return child;
  };
  try {
    cleanups.push(
      async () => devServer?.stop(),
      async () => redis?.stop(),
    );
    // All settle before anything is judged, so a failure of one never leaves another running.
    const [temporalStart, vaultStart, databaseStart] = await Promise.allSettled([
      startTemporal(),
      startVault(),
      startDatabase(),
    ]);
    if (temporalStart.status === 'rejected') throw temporalStart.reason;
    if (vaultStart.status === 'rejected') throw vaultStart.reason;
    if (databaseStart.status === 'rejected') throw databaseStart.reason;

    const sandbox = await createSandbox(options.sandbox);
    cleanups.push(() => sandbox.close());
    const serverPorts = await Promise.all(options.servers.map(() => freePort()));
    const serverUrls = serverPorts.map((port) => `http://127.0.0.1:${port}`);
    const providerProxy = await options.providerProxy?.(sandbox.url);
    if (providerProxy) cleanups.push(() => providerProxy.close());
    const callbackProxy = await options.callbackProxy?.(serverUrls.at(-1) ?? '');
    if (callbackProxy) cleanups.push(() => callbackProxy.close());
    const parts: StackParts = {
      temporalAddress: temporalStart.value,
      vaultUrl: vaultStart.value,
      databaseUrl: databaseStart.value,
      sandbox,
      providerUrl: providerProxy?.url ?? sandbox.url,
      publicBaseUrl: callbackProxy?.url ?? serverUrls[0] ?? '',
      serverUrls,
      workerMetricsAddress: `127.0.0.1:${await freePort()}`,
    };
    const given = options.env(parts);
    const derived = {
      TEMPORAL_ADDRESS: parts.temporalAddress,
      VAULT_URL: parts.vaultUrl,
      DATABASE_URL: parts.databaseUrl,
      PUBLIC_BASE_URL: parts.publicBaseUrl,
      PROVIDER_BASE_URL: parts.providerUrl,
    };
    const env = {
      worker: { ...derived, WORKER_METRICS_ADDRESS: parts.workerMetricsAddress, ...given.shared, ...given.worker },
      server: { ...derived, ...given.shared, ...given.server },
    };

    const launch = async (launcher: Launcher, launchEnv: Env, name: string) => {
      const launched = await launcher(launchEnv, name);
      if (launched.child) adopt(launched.child, name);
      else cleanups.push(() => launched.stop());
      return launched;
    };
    const stack: BuiltStack = {
      ...parts,
      workerEnv: env.worker,
      serverEnv: env.server,
      devServer,
      redis,
      postgres,
      servers: options.servers.map(() => undefined),
      async startWorker() {
        if (options.worker) stack.worker = await launch(options.worker, env.worker, 'payment worker');
      },
      async stopWorker(signal) {
        await stack.worker?.stop(signal);
        stack.worker = undefined;
      },
      async startServer(index) {
        const launcher = options.servers[index];
        if (!launcher) throw new Error(`no server ${index}`);
        const serverEnv = { ...env.server, PORT: String(serverPorts[index]), METRICS_PORT: String(await freePort()) };
        stack.servers[index] = await launch(launcher, serverEnv, `API server ${String.fromCharCode(65 + index)}`);
      },
      async stopServer(index, signal) {
        await stack.servers[index]?.stop(signal);
      },
      async restartTemporal() {
        if (!devServer) throw new Error('this stack did not start Temporal');
        const stopped = Date.now();
        await devServer.stop();
        devServer = undefined;
        await startTemporal();
        stack.devServer = devServer;
        return Date.now() - stopped;
      },
      async stopVault() {
        await redis?.stop();
        redis = undefined;
        stack.redis = undefined;
      },
      async startVault() {
        await startVault();
        stack.redis = redis;
      },
      adopt,
      stop,
    };
    await stack.startWorker();
    await Promise.all(options.servers.map((_, index) => stack.startServer(index)));
    return stack;
  } catch (err) {
    await stop();
    throw err;
  }
}
