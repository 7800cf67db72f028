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

/**
 * Runs node with these arguments and only this environment (plus PATH and HOME), in `cwd` if given, until it exits,
 * killed after 30 s.
 */
export function runNode(
  args: string[],
  env: Record<string, string>,
  cwd?: string,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

/** Runs one of the process entries (`worker.ts`, `start.ts`) through tsx with only this environment, until it exits. */
export function runEntry(entry: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return runNode(['--import', 'tsx', join(__dirname, '..', '..', 'src', entry)], env);
}
