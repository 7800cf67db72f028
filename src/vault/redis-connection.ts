import { createClient } from 'redis';

/** A connected Redis client. */
export type RedisClient = ReturnType<typeof createClient>;

/**
 * Connects to Redis, failing fast and closed: while Redis is unreachable commands are refused at once (no offline
 * queue). `what` names what it is for in the error, never the URL (it may carry a password).
 */
export async function connectRedis(url: string, what: string): Promise<RedisClient> {
  const client = createClient({
    url,
    socket: { connectTimeout: 5000, reconnectStrategy: 1000 },
    disableOfflineQueue: true,
  });
  // Without a listener a lost connection would crash the process; commands fail on their own meanwhile.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`cannot reach ${what}: ${(err as Error).message.replace(/redis\S*/g, '…')}`);
  }
  return client;
}

/**
 * A command, or a rejection once it took `ms`: node-redis's own command timeout stops at the socket, and a written
 * command would wait for a hung Redis forever. Should Redis answer later, the answer is dropped.
 */
export function bounded<T>(command: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([command, deadline]).finally(() => clearTimeout(timer));
}

/** Closes a client at shutdown without a QUIT, which would wait forever for a Redis that is gone. */
export function closeRedis(client: RedisClient): Promise<void> {
  if (client.isOpen) client.destroy();
  return Promise.resolve();
}
