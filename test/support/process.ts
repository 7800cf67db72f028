import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export interface EntryProcess {
  child: ChildProcess;
  /** Everything it wrote to stdout so far, split into lines. */
  lines(): string[];
  stop(): Promise<void>;
}

/** Runs one of the process entries (`src/worker.ts`, `src/server.ts`) as a user would, collecting its stdout. */
export function spawnEntry(entry: string, env: Record<string, string>): EntryProcess {
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', '..', 'src', entry)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return {
    child,
    lines: () => output.split('\n').filter((line) => line.trim() !== ''),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
