import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createClient } from 'redis';
import { waitUntil } from './wait-until';

export interface RedisServer {
  /** `redis://:password@127.0.0.1:port`, the VAULT_URL of the processes that share it. */
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

const LOCAL_INSTALL = resolve(__dirname, '..', '..', '.tools', 'redis', 'usr', 'bin', 'redis-server');

/** The redis-server binary: REDIS_SERVER_PATH, the copy scripts/setup.mjs unpacked, or the system's. */
export function redisServerBinary(): string {
  return process.env.REDIS_SERVER_PATH ?? (existsSync(LOCAL_INSTALL) ? LOCAL_INSTALL : 'redis-server');
}

export interface RedisServerOptions {
  /** Keep this password (a restart that its clients reconnect to); a new random one when absent. */
  password?: string;
  /** Append-only file directory, so the data outlives a restart; nothing written to disk when absent. */
  dataDir?: string;
}

/**
 * Starts a private redis-server on loopback for the card vault: password-protected, by default nothing written to disk
 * (entries live 15 minutes at most; after a restart an unused card entry is gone and its payment fails cleanly).
 */
export async function startRedisServer(port: number, options: RedisServerOptions = {}): Promise<RedisServer> {
  const password = options.password ?? randomBytes(24).toString('hex');
  const binary = redisServerBinary();
  const persistence = options.dataDir ? ['--dir', options.dataDir, '--appendonly', 'yes'] : ['--appendonly', 'no'];
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--requirepass', password],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: binary === LOCAL_INSTALL ? { ...process.env, LD_LIBRARY_PATH: localLibraryPath() } : process.env,
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-2000)));
  child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-2000)));
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = `redis://:${password}@127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  await waitUntil(async () => ((await answers(url)) ? true : undefined), {
    timeoutMs: 15_000,
    intervalMs: 100,
    stopIf: () => {
      if (spawnError) return new Error(`cannot run ${binary} (run \`npm run setup\`): ${spawnError.message}`);
      if (child.exitCode !== null) return new Error(`redis-server exited with code ${child.exitCode}: ${output}`);
      return undefined;
    },
    timedOut: async () => {
      await stop();
      return new Error(`redis-server did not answer on port ${port}: ${output}`);
    },
  });
  return { url, process: child, stop };
}

async function answers(url: string): Promise<boolean> {
  const client = createClient({ url, socket: { reconnectStrategy: false } });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    await client.quit();
    return true;
  } catch {
    if (client.isOpen) client.destroy();
    return false;
  }
}

function localLibraryPath(): string {
  const lib = resolve(LOCAL_INSTALL, '..', '..', 'lib');
  return [join(lib, 'x86_64-linux-gnu'), join(lib, 'aarch64-linux-gnu'), process.env.LD_LIBRARY_PATH]
    .filter(Boolean)
    .join(':');
}
