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

/** The largest RSS of several processes in MB (the workers': their figures are per worker). */
export function maxRssMb(pids: readonly number[]): number {
  return Math.max(0, ...pids.map(rssMb));
}

/**
 * Samples the RSS of one or more processes every 250 ms until stopped, the largest of them each time; `peak` is the
 * largest sample since the last `reset`.
 */
export class RssSampler {
  peak = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pids: readonly number[]) {
    this.peak = maxRssMb(pids);
    this.timer = setInterval(() => {
      this.peak = Math.max(this.peak, maxRssMb(this.pids));
    }, 250);
  }

  /** The RSS now (the largest process's). */
  now(): number {
    return maxRssMb(this.pids);
  }

  reset(): void {
    this.peak = maxRssMb(this.pids);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
