import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { SearchAttributes } from '../workflows/definitions';
import { temporalBinary } from './binaries';
import { waitUntil } from './wait-until';

export interface DevServerOptions {
  port: number;
  uiPort?: number;
  namespace: string;
  /** SQLite file to persist to; in memory when absent. */
  dbFile?: string;
  host?: string;
  log?: (line: string) => void;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
}

export interface DevServer {
  address: string;
  uiUrl: string | null;
  process: ChildProcess;
  stop(): Promise<void>;
}

const SEARCH_ATTRIBUTE_FLAGS = Object.values(SearchAttributes).flatMap((key) => [
  '--search-attribute',
  `${key.name}=${key.type === 'DOUBLE' ? 'Double' : 'Keyword'}`,
]);

/** Starts `temporal server start-dev` with the project's search attributes and waits until it answers. */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const host = options.host ?? '127.0.0.1';
  const args = [
    'server',
    'start-dev',
    '--ip',
    host,
    '--port',
    String(options.port),
    '--namespace',
    options.namespace,
    '--log-level',
    options.logLevel ?? 'error',
    ...SEARCH_ATTRIBUTE_FLAGS,
    ...(options.dbFile ? ['--db-filename', options.dbFile] : []),
    ...(options.uiPort ? ['--ui-port', String(options.uiPort)] : ['--headless']),
  ];
  const child = spawn(temporalBinary('temporal'), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const log = options.log ?? (() => undefined);
  child.stdout.on('data', (chunk: Buffer) => log(chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => log(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const address = `${host}:${options.port}`;

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };

  await waitUntil(
    async () => {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.workflowService.getSystemInfo({});
      await connection.close();
      return true;
    },
    {
      timeoutMs: 60_000,
      stopIf: () =>
        child.exitCode !== null ? new Error(`temporal dev server exited with code ${child.exitCode}`) : undefined,
      timedOut: async (err) => {
        await stop();
        return new Error(`temporal dev server did not answer on ${address} within 60s: ${String(err)}`);
      },
    },
  );
  return { address, uiUrl: options.uiPort ? `http://${host}:${options.uiPort}` : null, process: child, stop };
}
