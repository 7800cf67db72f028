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

/** The cap on any retry delay, Retry-After included, unless the client is told otherwise. */
export const MAX_RETRY_DELAY_MS = 5000;

/** The longest one provider call may take: every safe retry, each waited out to its time-outs and longest delay. */
export function worstCaseCallMs(config: {
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  safeRetries: number;
}): number {
  const attempts = config.safeRetries + 1;
  return attempts * (config.connectTimeoutMs + config.requestTimeoutMs) + config.safeRetries * MAX_RETRY_DELAY_MS;
}
