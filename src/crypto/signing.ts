import { randomBytes, timingSafeEqual } from 'node:crypto';
import { hmacSha256 } from './digest';
import type { ActivityBinding, MessageKind, MessageScope, Signed } from '../domain/signed';
import { isSigned } from '../domain/signed';
import { canonicalJson } from './canonical-json';
import type { Keyring } from './keyring';

/** How long a signal or Update the server signs may wait to be acted on: it sends it at once. */
export const MESSAGE_TTL_MS = 5 * 60_000;

/** How to sign: where the message may act, when it was issued, for how long, and (a result) for which activity. */
export interface SigningOptions extends MessageScope {
  now?: Date;
  ttlMs?: number;
  binding?: ActivityBinding;
}

const STRING_FIELDS = ['kind', 'workflowId', 'issuedAt', 'expiresAt', 'nonce', 'namespace', 'taskQueue'] as const;

function mac(key: Buffer, message: Omit<Signed<unknown>, 'signature'>): Buffer {
  const { kind, workflowId, issuedAt, expiresAt, nonce, namespace, taskQueue, runId, activityId, attempt, body } =
    message;
  const bound = { kind, workflowId, issuedAt, expiresAt, nonce, namespace, taskQueue, body };
  return hmacSha256(key, canonicalJson(runId === undefined ? bound : { ...bound, runId, activityId, attempt }));
}

/** Signs a message for one workflow, namespace and task queue with the primary signing key (SIGNING_KEYS). */
export function signMessage<T>(
  keyring: Keyring,
  kind: MessageKind,
  workflowId: string,
  body: T,
  { namespace, taskQueue, now = new Date(), ttlMs = MESSAGE_TTL_MS, binding }: SigningOptions,
): Signed<T> {
  const message: Omit<Signed<T>, 'signature'> = {
    kind,
    workflowId,
    namespace,
    taskQueue,
    issuedAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + ttlMs).toISOString(),
    nonce: randomBytes(16).toString('base64url'),
    ...binding,
    body,
  };
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
  if (STRING_FIELDS.some((field) => typeof message[field] !== 'string')) return 'malformed signed message';
  const dot = message.signature.indexOf('.');
  const entry = keyring.byId.get(message.signature.slice(0, Math.max(dot, 0)));
  if (!entry) return 'signed with an unknown key';
  const presented = Buffer.from(message.signature.slice(dot + 1), 'base64url');
  const expected = mac(entry.key, message);
  return presented.length === expected.length && timingSafeEqual(presented, expected) ? undefined : 'bad signature';
}
