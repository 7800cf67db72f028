/** Converts an amount in major units to whole minor units (cents), the form used for comparisons. */
export function toMinorUnits(amount: number): number {
  return Math.round(amount * 100);
}

/** True when the amount is positive, finite and has at most two decimals. */
export function isValidAmount(amount: number): boolean {
  if (!Number.isFinite(amount) || amount <= 0) return false;
  return Math.abs(amount * 100 - Math.round(amount * 100)) < 1e-6;
}
