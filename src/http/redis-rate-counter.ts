import { bounded, closeRedis, connectRedis } from '../vault/redis-connection';
import type { RateCounter } from './merchant-rate-limit';

/** A request waits on the counter at most this long before it is let through uncounted. */
const COUNTER_TIMEOUT_MS = 500;

// One round trip, atomic: the first request of a window starts its expiry; a key left without one (an expiry lost
// to a failover) gets it back.
const HIT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

/**
 * The rate limit's counter in the project's Redis (VAULT_URL), shared by every server of a deployment: its keys
 * are `ratelimit:{deployment}:…`, the deployment being the Temporal namespace and task queue its servers share.
 */
export async function connectRedisRateCounter(
  url: string,
  deployment: string,
): Promise<RateCounter & { close(): Promise<void> }> {
  const client = await connectRedis(url, 'Redis for the rate limit at VAULT_URL');
  return {
    async hit(key, windowMs) {
      const command = client.eval(HIT, { keys: [`ratelimit:${deployment}:${key}`], arguments: [String(windowMs)] });
      const [count, ttlMs] = (await bounded(command, COUNTER_TIMEOUT_MS, 'the rate limit counter')) as [number, number];
      return { count, ttlMs };
    },
    close: () => closeRedis(client),
  };
}
