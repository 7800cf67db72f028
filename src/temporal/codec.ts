import type { Payload, PayloadCodec } from '@temporalio/common';
import { METADATA_ENCODING_KEY } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { open, seal } from '../crypto/keyring';
import type { Keyring } from '../crypto/keyring';
import { signatureProblem } from '../crypto/signing';
import { isSigned } from '../domain/signed';
import type { Unverified } from '../domain/signed';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
const CIPHER_METADATA = 'encryption-cipher';
const CIPHER = 'AES256-GCM';
const JSON_ENCODING = 'json/plain';
const text = new TextEncoder();
const decoder = new TextDecoder();

export interface CodecOptions {
  /** The worker's: signed messages are checked here, outside the workflow sandbox, before a workflow sees them. */
  verifySignatures?: Keyring;
  /** Migration only (ACCEPT_UNENCRYPTED_PAYLOADS): lets payloads written before encryption through. */
  acceptUnencrypted?: boolean;
  /** Told why a payload was refused or a message replaced, for the log. */
  onRefused?: (reason: string) => void;
}

/** AES-256-GCM over whole payloads (metadata and data): the Temporal server only ever sees ciphertext. */
export class EncryptionCodec implements PayloadCodec {
  constructor(
    private readonly keyring: Keyring,
    private readonly options: CodecOptions = {},
  ) {}

  /** Encrypts every payload with the primary key. */
  encode(payloads: Payload[]): Promise<Payload[]> {
    return asPromise(() =>
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

  /**
   * Decrypts payloads with whichever configured key they name. Anything else is refused: whoever can reach Temporal
   * but holds no key cannot put a value in front of a workflow. With `verifySignatures`, a signed message whose
   * signature fails is replaced by an `Unverified` value naming why, so the workflow refuses it visibly.
   */
  decode(payloads: Payload[]): Promise<Payload[]> {
    return asPromise(() => payloads.map((payload) => this.decodeOne(payload)));
  }

  private decodeOne(payload: Payload): Payload {
    const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
    if (!encoding || decoder.decode(encoding) !== ENCRYPTED_ENCODING) {
      if (this.options.acceptUnencrypted) return payload;
      return this.refuse('a payload that is not encrypted was refused (ACCEPT_UNENCRYPTED_PAYLOADS is off)');
    }
    const keyId = payload.metadata?.[KEY_ID_METADATA];
    if (!keyId || !payload.data) return this.refuse('an encrypted payload without key id or data was refused');
    let plain: Buffer;
    try {
      plain = open(this.keyring, { keyId: decoder.decode(keyId), data: Buffer.from(payload.data) });
    } catch (err) {
      return this.refuse(`an encrypted payload was refused: ${(err as Error).message}`);
    }
    const inner = temporal.api.common.v1.Payload.decode(plain);
    return this.options.verifySignatures ? this.verified(inner, this.options.verifySignatures) : inner;
  }

  private verified(payload: Payload, keyring: Keyring): Payload {
    const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
    if (!encoding || decoder.decode(encoding) !== JSON_ENCODING || !payload.data) return payload;
    let value: unknown;
    try {
      value = JSON.parse(decoder.decode(payload.data));
    } catch {
      return payload;
    }
    if (!isSigned(value)) return payload;
    const problem = signatureProblem(keyring, value);
    if (!problem) return payload;
    this.options.onRefused?.(`a signed message for ${String(value.workflowId)} does not verify: ${problem}`);
    const replacement: Unverified = { unverified: problem };
    return { ...payload, data: text.encode(JSON.stringify(replacement)) };
  }

  private refuse(reason: string): never {
    this.options.onRefused?.(reason);
    throw new Error(reason);
  }
}

/** Runs synchronous crypto so that a failure rejects the promise instead of throwing. */
function asPromise<T>(work: () => T): Promise<T> {
  return new Promise((resolve) => resolve(work()));
}
