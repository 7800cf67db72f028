import { bounded, closeRedis, connectRedis } from './redis-connection';
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
  // Commands sent to a Redis that stopped answering are given up after VAULT_COMMAND_TIMEOUT_MS (see bounded).
  const client = await connectRedis(options.url, 'the card vault at VAULT_URL');
  const ttlMs = Math.min(options.ttlMs ?? CARD_VAULT_TTL_MS, CARD_VAULT_TTL_MS);
  return {
    async put(secret: CardData) {
      const token = newVaultToken();
      const key = vaultKey(token);
      const sealed = seal(options.keyring, Buffer.from(JSON.stringify(secret)), Buffer.from(key));
      await vaultCommand(
        client.set(key, `${sealed.keyId}.${sealed.data.toString('base64')}`, {
          expiration: { type: 'PX', value: ttlMs },
        }),
      );
      return token;
    },
    async take(token: string) {
      const key = vaultKey(token);
      const stored = await vaultCommand(client.getDel(key));
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
      await vaultCommand(client.del(vaultKey(token)));
    },
    close: () => closeRedis(client),
  };
}

/** A vault command, given up after VAULT_COMMAND_TIMEOUT_MS (a late GETDEL still removes the entry; a late SET expires). */
function vaultCommand<T>(command: Promise<T>): Promise<T> {
  return bounded(command, VAULT_COMMAND_TIMEOUT_MS, 'the card vault');
}
