const UNITS_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Parses durations written `500ms`, `30s`, `5m`, `2h`, `1d` into milliseconds; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) return undefined;
  const value = Number(match[1]) * UNITS_MS[match[2] as keyof typeof UNITS_MS];
  return Number.isFinite(value) && value > 0 ? Math.round(value) : undefined;
}

/** Formats milliseconds in the largest unit that keeps it whole, e.g. 300000 → `5m`. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms % UNITS_MS[unit] === 0) return `${ms / UNITS_MS[unit]}${unit}`;
  }
  return `${ms}ms`;
}
