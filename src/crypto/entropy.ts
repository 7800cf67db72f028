/**
 * Below this many bits (see estimatedEntropyBits) a secret or key is refused in production: far below what random
 * values score (32 random hex digits about 110, rarely under 95; 32 random bytes about 155).
 */
export const MIN_ENTROPY_BITS = 64;

/**
 * A generous estimate of a secret's entropy in bits: how often each symbol (character or byte) occurs, counted over
 * one period when the value repeats a pattern. Low for one symbol repeated, a handful of them, or a phrase said
 * twice; it cannot tell a random value from a clever one, and is meant to catch placeholders.
 */
export function estimatedEntropyBits(value: string | Uint8Array): number {
  const symbols = typeof value === 'string' ? [...value] : [...value];
  const period = shortestPeriod(symbols);
  const counts = new Map<string | number, number>();
  for (const symbol of symbols.slice(0, period)) counts.set(symbol, (counts.get(symbol) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) bits -= count * Math.log2(count / period);
  return bits;
}

/** The length of the shortest pattern whose repetition makes up the symbols (their length when none repeats). */
function shortestPeriod(symbols: readonly (string | number)[]): number {
  for (let period = 1; period <= symbols.length / 2; period++) {
    if (symbols.every((symbol, i) => i < period || symbol === symbols[i - period])) return period;
  }
  return symbols.length;
}
