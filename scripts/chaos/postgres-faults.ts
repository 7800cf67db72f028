import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../src/local/free-port';
import { letPostgresThrough, migratedDatabase, startPostgres } from '../../src/local/postgres';
import type { Postgres } from '../../src/local/postgres';

// The PostgreSQL that holds the records, broken three ways: stopped (a restart or a failover: connections refused),
// frozen (a network partition: connections hang, nothing answers), and killed with SIGKILL (a crash: the next start
// replays the WAL). Linux only: the postmaster's children are found in /proc.

/** The records' PostgreSQL of a chaos run, on one port and data directory however often it is broken. */
export interface ChaosPostgres {
  url: string;
  /** Fast shutdown (SIGINT), `forMs` down with connections refused, then started again. */
  stopFor(forMs: number): Promise<void>;
  /** SIGSTOP to the postmaster and every child, `forMs` frozen, then SIGCONT: connections open but nothing answers. */
  freezeFor(forMs: number): Promise<void>;
  /** SIGKILL to the postmaster and every child, as a crash does, then started again (crash recovery). */
  crash(): Promise<void>;
  close(): Promise<void>;
}

/** The processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name sits in parentheses and may hold spaces: the fields after it are state, then the parent.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) === pid) children.push(Number(entry));
    } catch {
      // It exited while being read.
    }
  }
  return children;
}

/** Whether `pid` still runs (a zombie holds nothing: it counts as gone). */
function alive(pid: number): boolean {
  const file = `/proc/${pid}/stat`;
  if (!existsSync(file)) return false;
  try {
    const stat = readFileSync(file, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function signal(pids: number[], name: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, name);
    } catch {
      // Already gone.
    }
  }
}

/** Starts PostgreSQL under `dir` on a free port (kept for every restart) with a migrated `payments` database. */
export async function startChaosPostgres(dir: string): Promise<ChaosPostgres> {
  letPostgresThrough(dir);
  const home = `${dir}/postgres`;
  const port = await freePort();
  const start = () => startPostgres(home, port, () => undefined);
  let postgres: Postgres = await start();
  const url = await migratedDatabase(postgres, 'payments', 'chaos harness').catch(async (err: unknown) => {
    await postgres.stop();
    throw err;
  });
  /** Started again on the same port and data; a crashed one's children may still hold its shared memory a moment. */
  const restart = async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        postgres = await start();
        return;
      } catch (err) {
        if (attempt === 5) throw err;
        await sleep(1000);
      }
    }
  };
  return {
    url,
    async stopFor(forMs) {
      await postgres.stop();
      await sleep(forMs);
      await restart();
    },
    async freezeFor(forMs) {
      // The postmaster first, so that it forks nothing while its children are being stopped.
      signal([postgres.pid], 'SIGSTOP');
      const children = childrenOf(postgres.pid);
      signal(children, 'SIGSTOP');
      await sleep(forMs);
      signal(children, 'SIGCONT');
      signal([postgres.pid], 'SIGCONT');
    },
    async crash() {
      const all = [postgres.pid, ...childrenOf(postgres.pid)];
      signal(all, 'SIGKILL');
      while (all.some(alive)) await sleep(50);
      await restart();
    },
    async close() {
      // A run that failed mid-freeze leaves it stopped: woken first, it shuts down cleanly.
      signal([postgres.pid, ...childrenOf(postgres.pid)], 'SIGCONT');
      await postgres.stop();
    },
  };
}
