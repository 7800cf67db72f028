import { readFileSync } from 'node:fs';

/** A process's resident memory in MB, from /proc/<pid>/status; 0 once it is gone. */
export function rssMb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples a process's RSS every 250 ms until stopped; `peak` is the largest sample since the last `reset`. */
export class RssSampler {
  peak = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number) {
    this.peak = rssMb(pid);
    this.timer = setInterval(() => {
      this.peak = Math.max(this.peak, rssMb(this.pid));
    }, 250);
  }

  /** The RSS now. */
  now(): number {
    return rssMb(this.pid);
  }

  reset(): void {
    this.peak = rssMb(this.pid);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
