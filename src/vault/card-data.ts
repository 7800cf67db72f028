import type { StoredPaymentRequest } from '../domain/payment-model';
import type { PaymentRequest } from '../domain/requests';
import type { CardVault } from './card-vault';
import { lastFour, splitCardData } from '../domain/personal-data';

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
