import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** A process's cumulative CPU time in ms, read when asked. */
export type CpuSource = () => number;

interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime: the process's own CPU, ms. */
  ownMs: number;
  /** cutime + cstime: the CPU of its children it has waited for (and theirs, recursively), ms. */
  reapedMs: number;
}

function procStat(pid: number): ProcStat | undefined {
  try {
    // The command name may hold spaces: the fields after it start after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const tick = (i: number) => Number(fields[i]) * TICK_MS;
    return { pid, ppid: Number(fields[1]), ownMs: tick(11) + tick(12), reapedMs: tick(13) + tick(14) };
  } catch {
    return undefined;
  }
}

/** One process's own CPU (user + system) from /proc/<pid>/stat; 0 once it is gone. This process: its own usage. */
export function processCpu(pid: number): CpuSource {
  return () => {
    if (pid === process.pid) {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1000;
    }
    return procStat(pid)?.ownMs ?? 0;
  };
}

/**
 * A process and all its descendants, dead or alive (PostgreSQL: the postmaster, its backends, walwriter, checkpointer…):
 * its own CPU, plus what the kernel added to its cutime/cstime for each child it reaped, plus each live descendant's
 * own and reaped CPU. A backend alive at both readings counts as live both times; one that exits between them moves
 * from the live sum into the postmaster's cutime; one born and gone between them appears only in the cutime. So the
 * difference of two readings is the tree's CPU in between, whoever came and went.
 */
export function processTreeCpu(rootPid: number): CpuSource {
  return () => {
    const children = new Map<number, ProcStat[]>();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = procStat(Number(entry));
      if (stat) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat]);
    }
    const root = procStat(rootPid);
    if (!root) return 0;
    let total = 0;
    const pending = [root];
    for (let next = pending.pop(); next; next = pending.pop()) {
      total += next.ownMs + next.reapedMs;
      pending.push(...(children.get(next.pid) ?? []));
    }
    return total;
  };
}

/** CPU ms per operation by process, the total, and how many cores they kept busy together. */
export interface CpuPer {
  byProcess: Record<string, number>;
  total: number;
  cores: number;
}

/** CPU use of named processes between `start()` and `per(n)`. */
export class CpuMeter {
  private readonly base = new Map<string, number>();
  private startedAt = 0;

  constructor(private readonly sources: Record<string, CpuSource>) {}

  start(): void {
    this.startedAt = Date.now();
    for (const [name, source] of Object.entries(this.sources)) this.base.set(name, source());
  }

  /** ms of CPU per operation since `start()`, by process. */
  per(operations: number): CpuPer {
    const wallMs = Math.max(Date.now() - this.startedAt, 1);
    const n = Math.max(operations, 1);
    let total = 0;
    const byProcess: Record<string, number> = {};
    for (const [name, source] of Object.entries(this.sources)) {
      const used = source() - (this.base.get(name) ?? 0);
      total += used;
      byProcess[name] = used / n;
    }
    return { byProcess, total: total / n, cores: total / wallMs };
  }
}

/** "CPU ms per run: worker 4.1 · temporal 6.3 · … · total 12.0 (1.20 cores busy)". */
export function cpuLine(cpu: CpuPer, unit = 'run'): string {
  const parts = Object.entries(cpu.byProcess).map(([name, ms]) => `${name} ${ms.toFixed(1)}`);
  return `CPU ms per ${unit}: ${parts.join(' · ')} · total ${cpu.total.toFixed(1)} (${cpu.cores.toFixed(2)} cores busy)`;
}
