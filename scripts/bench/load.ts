import { log } from './stats';

/** One finished operation: when it started and ended (ms since epoch). */
export interface Sample {
  startMs: number;
  endMs: number;
}

export interface ClosedLoopResult {
  /** Operations per second that ended inside the measured window. */
  rate: number;
  /** Latencies (ms) of the operations that ended inside the measured window. */
  latencies: number[];
  completed: number;
}

/**
 * `clients` loops each running `op` back to back for warm-up + measured seconds; the rate counts only what ends in
 * the measured window. The first failure stops the phase (a broken run, not a slow one).
 */
export async function closedLoop(
  name: string,
  clients: number,
  warmupS: number,
  measuredS: number,
  op: (index: number) => Promise<void>,
): Promise<ClosedLoopResult> {
  const start = Date.now();
  const from = start + warmupS * 1000;
  const until = from + measuredS * 1000;
  const samples: Sample[] = [];
  let next = 0;
  const progress = setInterval(() => {
    const done = samples.filter((s) => s.endMs >= from).length;
    const seconds = Math.max((Date.now() - from) / 1000, 0.001);
    if (Date.now() > from) log(`  ${name}: ${done} in ${seconds.toFixed(0)} s (${(done / seconds).toFixed(1)}/s)`);
  }, 10_000);
  try {
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (Date.now() < until) {
          const startMs = Date.now();
          await op(next++);
          samples.push({ startMs, endMs: Date.now() });
        }
      }),
    );
  } finally {
    clearInterval(progress);
  }
  const measured = samples.filter((s) => s.endMs >= from && s.endMs < until);
  return {
    rate: measured.length / measuredS,
    latencies: measured.map((s) => s.endMs - s.startMs),
    completed: samples.length,
  };
}

/** Runs `op` `count` times one after the other; the latencies in ms. */
export async function oneAtATime(count: number, op: (index: number) => Promise<void>): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const startMs = Date.now();
    await op(i);
    latencies.push(Date.now() - startMs);
  }
  return latencies;
}

/** Starts `op` at a steady `rate` per second for `seconds`, whatever the earlier ones are doing; resolves once all end. */
export async function openLoop<T>(
  name: string,
  rate: number,
  seconds: number,
  op: (index: number) => Promise<T>,
): Promise<{ results: T[]; latencies: number[] }> {
  const total = Math.max(1, Math.round(rate * seconds));
  const start = Date.now();
  const running: Promise<void>[] = [];
  const results: T[] = [];
  const latencies: number[] = [];
  let lastPrint = start;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const startMs = Date.now();
    running.push(
      op(i).then((result) => {
        results.push(result);
        latencies.push(Date.now() - startMs);
      }),
    );
    if (Date.now() - lastPrint >= 10_000) {
      lastPrint = Date.now();
      log(`  ${name}: ${i + 1}/${total} started, ${results.length} ended`);
    }
  }
  await Promise.all(running);
  return { results, latencies };
}
