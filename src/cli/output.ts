// How the CLI prints: aligned tables for people, JSON for scripts. Every command formats through here.

export type Row = Record<string, string | number | null | undefined>;

/** An aligned plain-text table of the given columns; an empty list prints `(none)`. */
export function table(rows: readonly Row[], columns: readonly string[]): string {
  if (rows.length === 0) return '(none)\n';
  const cells = rows.map((row) => columns.map((column) => cell(row[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i]!.length)));
  const line = (values: readonly string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n') + '\n';
}

/** `label: value` lines, aligned; empty values are left out. */
export function fields(entries: Row): string {
  const present = Object.entries(entries).filter(([, value]) => value !== null && value !== undefined && value !== '');
  const width = Math.max(...present.map(([label]) => label.length));
  return present.map(([label, value]) => `${`${label}:`.padEnd(width + 2)}${cell(value)}`).join('\n') + '\n';
}

/** Pretty JSON with a trailing newline, for `--json`. */
export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** How long ago an ISO time was, in a short unit: `42s`, `5m`, `3h`, `2d`. */
export function age(iso: string, now = Date.now()): string {
  const ms = Math.max(0, now - Date.parse(iso));
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
  ] as const) {
    if (ms >= size) return `${Math.floor(ms / size)}${unit}`;
  }
  return `${Math.floor(ms / 1000)}s`;
}

/** An ISO time shortened for a table: `2026-05-01 14:03:07`. */
export function time(iso: string | null | undefined): string {
  return iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '') : '';
}

function cell(value: Row[string]): string {
  return value === null || value === undefined ? '-' : String(value);
}

/** Operators' decisions on one line: `approve by ada.ops at …; …`, or `none`. */
export function decisions(approvals: readonly { operator: string; decision: string; at: string }[]): string {
  return approvals.map((a) => `${a.decision} by ${a.operator} at ${a.at}`).join('; ') || 'none';
}
