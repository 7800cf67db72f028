import { createClient } from 'redis';
import { open, seal } from '../crypto/keyring';
import type { Keyring } from '../crypto/keyring';
import { CARD_VAULT_TTL_MS, newVaultToken, vaultKey } from './card-vault';
import type { CardData } from '../domain/personal-data';
import type { CardVault } from './card-vault';

/** How long one vault command may take: the merchant API answers 503 and an initiation fails well within 2 s. */
export const VAULT_COMMAND_TIMEOUT_MS = 1000;

export interface RedisVaultOptions {
  url: string;
  /** Encrypts entries at rest in Redis (PCI DSS 3.5.1), bound to their key. */
  keyring: Keyring;
  ttlMs?: number;
}

/** The card vault on Redis, shared by a server and workers in separate processes; entries encrypted, read once. */
export async function createRedisVault(options: RedisVaultOptions): Promise<CardVault> {
  // Fail fast and closed: while Redis is unreachable commands are refused at once (no offline queue), and a command
  // sent to a Redis that stopped answering is given up after VAULT_COMMAND_TIMEOUT_MS (see bounded).
  const client = createClient({
    url: options.url,
    socket: { connectTimeout: 5000, reconnectStrategy: 1000 },
    disableOfflineQueue: true,
  });
  // Without a listener a lost connection would crash the process; commands fail on their own meanwhile.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    // The URL may carry a password: name the setting, never the value.
    throw new Error(`cannot reach the card vault at VAULT_URL: ${(err as Error).message.replace(/redis\S*/g, '…')}`);
  }
  const ttlMs = Math.min(options.ttlMs ?? CARD_VAULT_TTL_MS, CARD_VAULT_TTL_MS);
  return {
    async put(secret: CardData) {
      const token = newVaultToken();
      const key = vaultKey(token);
      const sealed = seal(options.keyring, Buffer.from(JSON.stringify(secret)), Buffer.from(key));
      await bounded(
        client.set(key, `${sealed.keyId}.${sealed.data.toString('base64')}`, {
          expiration: { type: 'PX', value: ttlMs },
        }),
      );
      return token;
    },
    async take(token: string) {
      const key = vaultKey(token);
      const stored = await bounded(client.getDel(key));
      if (stored === null) return null;
      const dot = stored.indexOf('.');
      const plain = open(
        options.keyring,
        { keyId: stored.slice(0, dot), data: Buffer.from(stored.slice(dot + 1), 'base64') },
        Buffer.from(key),
      );
      return JSON.parse(plain.toString('utf8')) as CardData;
    },
    async discard(token: string) {
      await bounded(client.del(vaultKey(token)));
    },
    close() {
      // Nothing is pending at shutdown; a QUIT would wait forever for a Redis that is gone.
      if (client.isOpen) client.destroy();
      return Promise.resolve();
    },
  };
}

/**
 * A vault command, or a rejection once it took VAULT_COMMAND_TIMEOUT_MS: node-redis's own command timeout stops at the
 * socket, and a written command would wait for a hung Redis forever. Should Redis answer later, the answer is dropped
 * (a late GETDEL still removes the entry; a late SET expires with its TTL).
 */
function bounded<T>(command: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the card vault did not answer within ${VAULT_COMMAND_TIMEOUT_MS} ms`)),
      VAULT_COMMAND_TIMEOUT_MS,
    );
  });
  return Promise.race([command, deadline]).finally(() => clearTimeout(timer));
}
