import { log } from './stats';

/** One line of the final table: a figure, its value, and its target when it has one. */
export interface Figure {
  name: string;
  value: string;
  target?: string;
  /** Undefined when the figure has no target. */
  met?: boolean;
}

/** Prints the final table: figure, value, target, met / not met. */
export function printTable(figures: Figure[]): void {
  const rows = figures.map((f) => [
    f.name,
    f.value,
    f.target ?? '',
    f.met === undefined ? '' : f.met ? 'met' : 'NOT MET',
  ]);
  const header = ['figure', 'value', 'target', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  log('results');
  log(`  ${line(header)}`);
  for (const row of rows) log(`  ${line(row)}`);
}
