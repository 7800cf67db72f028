import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { waitUntil } from './wait-until';

/**
 * The child processes of `npm start`: launched with one environment, stopped together on Ctrl-C, SIGTERM or the
 * first one that exits on its own, followed by the servers it started in-process (dev server, Redis).
 */
export class Supervisor {
  private readonly children: { name: string; child: ChildProcess }[] = [];
  private readonly cleanups: (() => Promise<void>)[] = [];
  private stopping = false;

  constructor(
    /** The environment every child gets; later changes (an address once known) reach the children launched after. */
    private readonly env: NodeJS.ProcessEnv,
    private readonly log: (message: string) => void,
  ) {
    process.once('SIGINT', () => void this.stopAll(0));
    process.once('SIGTERM', () => void this.stopAll(0));
  }

  /** Runs after the children have exited, in reverse order of registration. */
  onStop(cleanup: () => Promise<void>): void {
    this.cleanups.unshift(cleanup);
  }

  /** Starts `node <args>`; should it exit while nothing is stopping, everything stops. */
  launch(name: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): ChildProcess {
    const child = spawn(process.execPath, args, { env: { ...this.env, ...extraEnv }, stdio: 'inherit' });
    child.once('exit', (code) => {
      if (!this.stopping) {
        this.log(`${name} exited unexpectedly (code ${code}); stopping everything`);
        void this.stopAll(1);
      }
    });
    this.children.push({ name, child });
    return child;
  }

  /** Stops the children (last launched first), then the cleanups, and exits with `code`. */
  async stopAll(code: number): Promise<never> {
    if (this.stopping) return new Promise<never>(() => undefined);
    this.stopping = true;
    this.log('stopping…');
    for (const { child } of [...this.children].reverse()) {
      if (child.exitCode === null) child.kill('SIGTERM');
    }
    await Promise.all(
      this.children.map(({ child }) =>
        child.exitCode === null ? new Promise((r) => child.once('exit', r)) : Promise.resolve(),
      ),
    );
    for (const cleanup of this.cleanups) await cleanup();
    process.exit(code);
  }
}

/** Waits until a child answers HTTP below 500 at `url`; fails when it exits first or within 60 s. */
export async function waitForHttp(
  url: string,
  child: ChildProcess,
  name: string,
  headers: Record<string, string> = {},
): Promise<void> {
  await waitUntil(async () => ((await fetch(url, { headers })).status < 500 ? true : undefined), {
    timeoutMs: 60_000,
    stopIf: () => (child.exitCode !== null ? new Error(`${name} exited with code ${child.exitCode}`) : undefined),
    timedOut: () => new Error(`${name} did not answer on ${url} within 60s`),
  });
}
