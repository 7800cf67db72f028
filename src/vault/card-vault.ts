import type { StoredPaymentRequest } from '../domain/payment-model';
import type { PaymentRequest } from '../domain/requests';
import { lastFour, splitCardData } from '../domain/personal-data';
import type { CardData } from '../domain/personal-data';
import { randomBytes } from 'node:crypto';
import { sha256 } from '../crypto/digest';

/** A short-lived store outside Temporal for card data, read at most once. */
export interface CardVault {
  /** Stores card data for one use within the time-to-live; answers its one-time token. */
  put(secret: CardData): Promise<string>;
  /** Takes the card data out and deletes it; null when it expired, was used already or never existed. */
  take(token: string): Promise<CardData | null>;
  /** Deletes card data that will not be used (the payment already existed). */
  discard(token: string): Promise<void>;
  close(): Promise<void>;
}

/** PCI DSS 3.3.1: the CVV may not outlive authorization; unused entries go after this at the latest. */
export const CARD_VAULT_TTL_MS = 15 * 60_000;

/** A new one-time token: unguessable, and not the key it is stored under. */
export function newVaultToken(): string {
  return `cvt_${randomBytes(32).toString('base64url')}`;
}

/** Where a token's entry is stored: a hash, so a listing of the store reveals no usable token. */
export function vaultKey(token: string): string {
  return `vault:card:${sha256(token).toString('hex')}`;
}

/** An in-process vault: only for a server and worker that live in one process (unit tests). */
export function createMemoryVault(ttlMs = CARD_VAULT_TTL_MS): CardVault {
  const entries = new Map<string, { secret: CardData; timer: NodeJS.Timeout }>();
  const remove = (key: string) => {
    clearTimeout(entries.get(key)?.timer);
    entries.delete(key);
  };
  return {
    put(secret) {
      const token = newVaultToken();
      const key = vaultKey(token);
      entries.set(key, { secret: { ...secret }, timer: setTimeout(() => entries.delete(key), ttlMs).unref() });
      return Promise.resolve(token);
    },
    take(token) {
      const entry = entries.get(vaultKey(token));
      remove(vaultKey(token));
      return Promise.resolve(entry?.secret ?? null);
    },
    discard(token) {
      remove(vaultKey(token));
      return Promise.resolve();
    },
    close() {
      for (const key of [...entries.keys()]) remove(key);
      return Promise.resolve();
    },
  };
}

/** Moves a card payment's card data into the vault; the request that remains holds a token and the last four digits. */
export async function detachCard(request: PaymentRequest, vault: CardVault): Promise<StoredPaymentRequest> {
  if (request.type !== 'card_payment') return request;
  const { card, rest } = splitCardData(request);
  const token = await vault.put(card);
  return { ...rest, card: { token, last4: lastFour(card.card_number) } };
}

/** The full request for the provider, taking the card data out of the vault (once); null when it is gone. */
export async function attachCard(request: StoredPaymentRequest, vault: CardVault): Promise<PaymentRequest | null> {
  if (request.type !== 'card_payment') return request;
  const { card, ...rest } = request;
  const secret = await vault.take(card.token);
  return secret ? { ...rest, ...secret } : null;
}

/** The vault token of a stored card payment, if it is one. */
export function cardToken(request: StoredPaymentRequest): string | undefined {
  return request.type === 'card_payment' ? request.card.token : undefined;
}
