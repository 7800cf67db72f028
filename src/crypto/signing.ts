import { timingSafeEqual } from 'node:crypto';
import { hmacSha256 } from './digest';
import type { MessageKind, Signed } from '../domain/signed';
import { isSigned } from '../domain/signed';
import { canonicalJson } from './canonical-json';
import type { Keyring } from './keyring';

function mac(key: Buffer, message: Omit<Signed<unknown>, 'signature'>): Buffer {
  const { kind, workflowId, issuedAt, body } = message;
  return hmacSha256(key, canonicalJson({ kind, workflowId, issuedAt, body }));
}

/** Signs a message for one workflow with the primary signing key (SIGNING_KEYS). */
export function signMessage<T>(
  keyring: Keyring,
  kind: MessageKind,
  workflowId: string,
  body: T,
  now: Date = new Date(),
): Signed<T> {
  const message = { kind, workflowId, issuedAt: now.toISOString(), body };
  const { id, key } = keyring.primary;
  return { ...message, signature: `${id}.${mac(key, message).toString('base64url')}` };
}

/** The signing keys, or an error naming the setting: what starts, settles or resolves a workflow must be signed. */
export function requireSigningKeys(keys: Keyring | undefined): Keyring {
  if (!keys) throw new Error('SIGNING_KEYS is not set: what is sent to a payment or batch workflow must be signed');
  return keys;
}

/** Why a message's signature does not verify with any configured key, or undefined when it verifies. */
export function signatureProblem(keyring: Keyring, message: unknown): string | undefined {
  if (!isSigned(message)) return 'not a signed message';
  const { kind, workflowId, issuedAt, body } = message;
  if (typeof kind !== 'string' || typeof workflowId !== 'string' || typeof issuedAt !== 'string') {
    return 'malformed signed message';
  }
  const dot = message.signature.indexOf('.');
  const entry = keyring.byId.get(message.signature.slice(0, Math.max(dot, 0)));
  if (!entry) return 'signed with an unknown key';
  const presented = Buffer.from(message.signature.slice(dot + 1), 'base64url');
  const expected = mac(entry.key, { kind, workflowId, issuedAt, body });
  return presented.length === expected.length && timingSafeEqual(presented, expected) ? undefined : 'bad signature';
}
