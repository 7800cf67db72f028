import { createClient } from 'redis';
import { open, seal } from '../crypto/keyring';
import type { Keyring } from '../crypto/keyring';
import { CARD_VAULT_TTL_MS, newVaultToken, vaultKey } from './card-vault';
import type { CardSecret, CardVault } from './card-vault';

export interface RedisVaultOptions {
  url: string;
  /** Encrypts entries at rest in Redis (PCI DSS 3.5.1), bound to their key. */
  keyring: Keyring;
  ttlMs?: number;
}

/** The card vault on Redis, shared by a server and workers in separate processes; entries encrypted, read once. */
export async function createRedisVault(options: RedisVaultOptions): Promise<CardVault> {
  const client = createClient({ url: options.url, socket: { connectTimeout: 5000, reconnectStrategy: 1000 } });
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
    async put(secret: CardSecret) {
      const token = newVaultToken();
      const key = vaultKey(token);
      const sealed = seal(options.keyring, Buffer.from(JSON.stringify(secret)), Buffer.from(key));
      await client.set(key, `${sealed.keyId}.${sealed.data.toString('base64')}`, {
        expiration: { type: 'PX', value: ttlMs },
      });
      return token;
    },
    async take(token: string) {
      const key = vaultKey(token);
      const stored = await client.getDel(key);
      if (stored === null) return null;
      const dot = stored.indexOf('.');
      const plain = open(
        options.keyring,
        { keyId: stored.slice(0, dot), data: Buffer.from(stored.slice(dot + 1), 'base64') },
        Buffer.from(key),
      );
      return JSON.parse(plain.toString('utf8')) as CardSecret;
    },
    async discard(token: string) {
      await client.del(vaultKey(token));
    },
    async close() {
      await client.quit().catch(() => client.destroy());
    },
  };
}
