import type { CardInput, MobileMoneyInput } from './schemas';
import type { SandboxTransaction } from './store';

const MERCHANT_ID = 1042;
const MERCHANT_NAME = 'Sandbox Merchant';
const CURRENCY = 'GHS';
export const PENDING_MESSAGE = 'Request sent, pending processing';
export const BANK_PENDING_MESSAGE = 'Pending Gateway Response';

const WALLETS: Record<number, string> = { 1: 'MTN', 2: 'VODAFONE', 3: 'AIRTELTIGO' };

/** Formats an ISO timestamp as the spec's `YYYY-MM-DD HH:MM:SS` (UTC). */
export function wireTimestamp(iso: string): string {
  return iso.slice(0, 19).replace('T', ' ');
}

/** The acknowledgement of a mobile money debit, in the spec's shape. */
export function mobileMoneyResponse(transaction: SandboxTransaction, input: MobileMoneyInput): unknown {
  return {
    transaction: {
      id: transaction.transaction_id,
      type: 'debit',
      merchant_id: MERCHANT_ID,
      reference: transaction.reference,
      medium: WALLETS[input.channel] ?? `CHANNEL-${input.channel}`,
      amount: transaction.amount,
      amount_details: `${CURRENCY} ${transaction.amount.toFixed(2)}`,
      status: '2',
      status_message: PENDING_MESSAGE,
      sender_details: { type: 1, no: input.phone_number, name: input.name, token: null },
      recipient_details: { type: 2, no: MERCHANT_ID, name: MERCHANT_NAME },
      description: 'Mobile money debit',
      extra: input.voucher_code ?? '',
      api: 1,
      callback_url: input.callback_url ?? '',
      updated_at: wireTimestamp(transaction.updated_at),
      created_at: wireTimestamp(transaction.created_at),
    },
    type: 'success',
    message: 'Payment request sent to the wallet holder',
  };
}

/** The acknowledgement of a card payment, in the spec's shape. */
export function cardResponse(
  transaction: SandboxTransaction,
  input: CardInput,
  providerId: number,
  medium: string,
  threedsUrl: string,
): unknown {
  return {
    transaction: {
      id: transaction.transaction_id,
      merchant_id: String(MERCHANT_ID),
      type: 'payment',
      medium,
      reference: transaction.reference,
      provider_id: providerId,
      amount: input.amount,
      amount_details: {
        cc: 0,
        rate: '1.0000',
        send: input.amount,
        receive: input.amount,
        send_local: input.amount,
        send_currency: CURRENCY,
        receive_currency: CURRENCY,
      },
      medium_details: { threeds_url: threedsUrl },
      status: '2',
    },
  };
}

/** The acknowledgement of a bank credit, in the spec's shape. */
export function bankCreditResponse(transaction: SandboxTransaction): unknown {
  return {
    code: '411',
    provider_id: transaction.transaction_id,
    amount: transaction.amount.toFixed(2),
    message: BANK_PENDING_MESSAGE,
  };
}
