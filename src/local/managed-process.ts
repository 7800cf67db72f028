import { spawn } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface ManagedProcess {
  process: ChildProcess;
  /** Its last output lines, for an error message. */
  tail(): string;
  /** Why it is gone (exited, or could not be spawned), or undefined while it runs. */
  gone(): Error | undefined;
  /** Sends `signal` (SIGTERM by default), then SIGKILL after 10 s, and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Spawns a cluster process whose output goes line by line to `log` (prefixed with its name) and to a short tail. */
export function startManaged(
  name: string,
  command: string,
  args: string[],
  options: SpawnOptions & { log: (line: string) => void },
): ManagedProcess {
  const { log, ...spawnOptions } = options;
  const child = spawn(command, args, { ...spawnOptions, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const keep = (line: string) => {
    lines.push(line);
    if (lines.length > 30) lines.shift();
    log(`${name}: ${line}`);
  };
  if (child.stdout) createInterface({ input: child.stdout }).on('line', keep);
  if (child.stderr) createInterface({ input: child.stderr }).on('line', keep);
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    process: child,
    tail: () => lines.join('\n'),
    gone() {
      if (spawnError) return new Error(`cannot run ${command}: ${spawnError.message}`);
      if (child.exitCode !== null || child.signalCode !== null) {
        return new Error(`${name} exited (${child.exitCode ?? child.signalCode}):\n${lines.slice(-10).join('\n')}`);
      }
      return undefined;
    },
    async stop(signal = 'SIGTERM') {
      if (spawnError) return;
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
