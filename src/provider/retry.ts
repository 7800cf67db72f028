/** Parses a Retry-After header (delta seconds or HTTP date) into milliseconds; undefined when absent or malformed. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The wait before retry number `retry` (1-based): exponential backoff, at least Retry-After, never above the cap. */
export function retryDelay(retry: number, backoffMs: number, capMs: number, retryAfterMs?: number): number {
  const backoff = backoffMs * 2 ** (retry - 1);
  return Math.min(capMs, Math.max(backoff, retryAfterMs ?? 0));
}
