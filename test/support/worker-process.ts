import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** Starts `src/worker.ts` as its own process (so a test can SIGKILL it); resolves once it polls. */
export function startWorkerProcess(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', '..', 'src', 'worker.ts')], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('polling task queue')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker exited early with code ${code}`)));
  });
}
