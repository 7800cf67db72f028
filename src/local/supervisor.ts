import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { waitUntil } from './wait-until';

/** A child that ran at least this long before exiting counts as having started well: its backoff starts over. */
const STABLE_AFTER_MS = 30_000;
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;
/** Exits in a row, each soon after its start, before the supervisor gives up (a broken build or setting). */
const MAX_QUICK_EXITS = 6;

interface Supervised {
  name: string;
  args: string[];
  extraEnv: NodeJS.ProcessEnv;
  child: ChildProcess;
  startedAt: number;
  quickExits: number;
  restart?: NodeJS.Timeout;
}

/** How long to wait before the n-th restart in a row (1 s, 2 s, 4 s … 30 s). */
export function restartBackoffMs(quickExits: number): number {
  return Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, quickExits - 1));
}

/**
 * The child processes of `npm start`: launched with one environment, restarted with backoff when one exits on its
 * own, and stopped together on Ctrl-C or SIGTERM, followed by the servers it started in-process (dev server, Redis).
 */
export class Supervisor {
  private readonly children: Supervised[] = [];
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

  /** Starts `node <args>`, and again with backoff whenever it exits while nothing is stopping. */
  launch(name: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): ChildProcess {
    const entry: Supervised = {
      name,
      args,
      extraEnv,
      child: this.spawn(args, extraEnv),
      startedAt: Date.now(),
      quickExits: 0,
    };
    this.children.push(entry);
    this.watch(entry);
    return entry.child;
  }

  private spawn(args: string[], extraEnv: NodeJS.ProcessEnv): ChildProcess {
    return spawn(process.execPath, args, { env: { ...this.env, ...extraEnv }, stdio: 'inherit' });
  }

  private watch(entry: Supervised): void {
    this.log(`${entry.name} started (pid ${entry.child.pid})`);
    entry.child.once('exit', (code, signal) => {
      if (this.stopping) return;
      entry.quickExits = Date.now() - entry.startedAt < STABLE_AFTER_MS ? entry.quickExits + 1 : 1;
      const how = signal ? `signal ${signal}` : `code ${code}`;
      if (entry.quickExits > MAX_QUICK_EXITS) {
        this.log(
          `${entry.name} exited (${how}) ${MAX_QUICK_EXITS} times in a row soon after starting; stopping everything`,
        );
        void this.stopAll(1);
        return;
      }
      const delay = restartBackoffMs(entry.quickExits);
      this.log(`${entry.name} exited unexpectedly (${how}); restarting in ${delay / 1000} s`);
      entry.restart = setTimeout(() => {
        if (this.stopping) return;
        entry.child = this.spawn(entry.args, entry.extraEnv);
        entry.startedAt = Date.now();
        this.watch(entry);
      }, delay);
    });
  }

  /** Stops the children (last launched first), then the cleanups, and exits with `code`. */
  async stopAll(code: number): Promise<never> {
    if (this.stopping) return new Promise<never>(() => undefined);
    this.stopping = true;
    this.log('stopping…');
    for (const entry of this.children) clearTimeout(entry.restart);
    for (const { child } of [...this.children].reverse()) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    }
    await Promise.all(
      this.children.map(({ child }) =>
        child.exitCode === null && child.signalCode === null
          ? new Promise((r) => child.once('exit', r))
          : Promise.resolve(),
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
