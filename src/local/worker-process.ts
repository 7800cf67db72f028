import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { WORKER_COMMAND, WORKER_ENV } from './build-outputs';

/**
 * Starts the compiled worker as its own process, as `npm run worker` does (so it can be killed); resolves once it
 * polls. `nodeArgs` go before the worker's own (the benchmark's profiling flags).
 */
export function startWorkerProcess(env: NodeJS.ProcessEnv, nodeArgs: readonly string[] = []): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...nodeArgs, ...WORKER_COMMAND], {
    env: { ...process.env, ...WORKER_ENV, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('polling task queue')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker exited early with code ${code}`)));
  });
}
