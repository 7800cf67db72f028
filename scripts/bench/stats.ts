/** The q-quantile (0..1) of the values, nearest rank; NaN when there are none. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** p50/p99 (and the count) of latencies in ms, as one line. */
export function latencyLine(values: readonly number[]): string {
  return `p50 ${percentile(values, 0.5).toFixed(0)} ms · p99 ${percentile(values, 0.99).toFixed(0)} ms (n=${values.length})`;
}

/** Prints one progress or result line. */
export function log(line: string): void {
  process.stdout.write(`[bench] ${line}\n`);
}
