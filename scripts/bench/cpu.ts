import { readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU time (user + system, ms) a process has used so far, from /proc/<pid>/stat; 0 once it is gone. */
function cpuMs(pid: number): number {
  if (pid === process.pid) {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1000;
  }
  try {
    // The command name may hold spaces: the fields after it start after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

/** CPU use of named processes between `start()` and `per(n)`: ms of CPU per operation, by process. */
export class CpuMeter {
  private readonly base = new Map<string, number>();
  private startedAt = 0;

  constructor(private readonly pids: Record<string, number>) {}

  start(): void {
    this.startedAt = Date.now();
    for (const [name, pid] of Object.entries(this.pids)) this.base.set(name, cpuMs(pid));
  }

  /** "worker 4.1 · temporal 6.3 · …" ms of CPU per operation, and the cores they kept busy together. */
  per(operations: number): string {
    const wallMs = Math.max(Date.now() - this.startedAt, 1);
    let total = 0;
    const parts = Object.entries(this.pids).map(([name, pid]) => {
      const used = cpuMs(pid) - (this.base.get(name) ?? 0);
      total += used;
      return `${name} ${(used / Math.max(operations, 1)).toFixed(1)}`;
    });
    return `CPU ms per run: ${parts.join(' · ')} · total ${(total / Math.max(operations, 1)).toFixed(1)} (${(total / wallMs).toFixed(2)} cores busy)`;
  }
}
