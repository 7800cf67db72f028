import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** One AES-256 key and the id written next to everything it encrypts. */
export interface EncryptionKey {
  id: string;
  key: Buffer;
}

/** The configured keys: the first encrypts, every one decrypts, so keys rotate without breaking old data. */
export interface Keyring {
  primary: EncryptionKey;
  byId: ReadonlyMap<string, EncryptionKey>;
}

/** What AES-256-GCM produced: the key id and `iv ‖ ciphertext ‖ tag`. */
export interface Sealed {
  keyId: string;
  data: Buffer;
}

/** Key ids: no `.`, which separates a signature's key id from its MAC (`id.mac`), nor `:` or `,` of the list. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Parses `id:base64key,id:base64key`; the error names the bad entry by position and never echoes a key. */
export function parseKeyring(text: string): Keyring {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new Error('needs at least one `key_id:base64_key` entry');
  const keys = entries.map((entry, index) => {
    const colon = entry.indexOf(':');
    const id = entry.slice(0, colon);
    const key = Buffer.from(entry.slice(colon + 1), 'base64');
    if (colon < 1 || !KEY_ID_PATTERN.test(id)) {
      throw new Error(
        `entry ${index + 1} must be \`key_id:base64_key\` (id of 1–32 letters, digits, "_" or "-"; no ".")`,
      );
    }
    if (key.length !== 32) throw new Error(`key "${id}" must be 32 bytes in base64 (openssl rand -base64 32)`);
    return { id, key };
  });
  const byId = new Map<string, EncryptionKey>();
  for (const key of keys) {
    if (byId.has(key.id)) throw new Error(`key id "${key.id}" appears twice`);
    byId.set(key.id, key);
  }
  return { primary: keys[0]!, byId };
}

/** A fresh `id:key` entry for ENCRYPTION_KEYS. */
export function generateKeyEntry(id: string): string {
  return `${id}:${randomBytes(32).toString('base64')}`;
}

/** Encrypts with the primary key; `aad` binds the ciphertext to its context (it must be given again to open it). */
export function seal(keyring: Keyring, plain: Uint8Array, aad?: Uint8Array): Sealed {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyring.primary.key, iv);
  if (aad) cipher.setAAD(aad);
  const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  return { keyId: keyring.primary.id, data };
}

/** Decrypts with the key the data names; throws when the key is unknown or the data was altered. */
export function open(keyring: Keyring, sealed: Sealed, aad?: Uint8Array): Buffer {
  const entry = keyring.byId.get(sealed.keyId);
  if (!entry) throw new Error(`no encryption key with id "${sealed.keyId}" is configured`);
  if (sealed.data.length < IV_BYTES + TAG_BYTES) throw new Error('encrypted data is truncated');
  const iv = sealed.data.subarray(0, IV_BYTES);
  const tag = sealed.data.subarray(sealed.data.length - TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', entry.key, iv);
  if (aad) decipher.setAAD(aad);
  decipher.setAuthTag(tag);
  return Buffer.concat([
    decipher.update(sealed.data.subarray(IV_BYTES, sealed.data.length - TAG_BYTES)),
    decipher.final(),
  ]);
}
