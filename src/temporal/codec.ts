import type { Payload, PayloadCodec } from '@temporalio/common';
import { METADATA_ENCODING_KEY } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { open, seal } from '../crypto/keyring';
import type { Keyring } from '../crypto/keyring';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
const CIPHER_METADATA = 'encryption-cipher';
const CIPHER = 'AES256-GCM';
const text = new TextEncoder();
const decoder = new TextDecoder();

/** AES-256-GCM over whole payloads (metadata and data): the Temporal server only ever sees ciphertext. */
export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly keyring: Keyring) {}

  /** Encrypts every payload with the primary key. */
  encode(payloads: Payload[]): Promise<Payload[]> {
    return settle(() =>
      payloads.map((payload) => {
        const sealed = seal(this.keyring, temporal.api.common.v1.Payload.encode(payload).finish());
        return {
          metadata: {
            [METADATA_ENCODING_KEY]: text.encode(ENCRYPTED_ENCODING),
            [CIPHER_METADATA]: text.encode(CIPHER),
            [KEY_ID_METADATA]: text.encode(sealed.keyId),
          },
          data: sealed.data,
        };
      }),
    );
  }

  /** Decrypts payloads this codec encrypted, with whichever configured key they name; others pass unchanged. */
  decode(payloads: Payload[]): Promise<Payload[]> {
    return settle(() =>
      payloads.map((payload) => {
        const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
        if (!encoding || decoder.decode(encoding) !== ENCRYPTED_ENCODING) return payload;
        const keyId = payload.metadata?.[KEY_ID_METADATA];
        if (!keyId || !payload.data) throw new Error('encrypted payload without key id or data');
        const plain = open(this.keyring, { keyId: decoder.decode(keyId), data: Buffer.from(payload.data) });
        return temporal.api.common.v1.Payload.decode(plain);
      }),
    );
  }
}

/** Runs synchronous crypto so that a failure rejects the promise instead of throwing. */
function settle<T>(work: () => T): Promise<T> {
  return new Promise((resolve) => resolve(work()));
}
