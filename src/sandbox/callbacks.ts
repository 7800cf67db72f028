import { request } from 'undici';
import type { CallbackRecord, SandboxTransaction } from './store';

const ATTEMPT_TIMEOUT_MS = 10_000;

/** The JSON body the sandbox POSTs to a transaction's callback URL. */
export interface CallbackPayload {
  transaction_id: number;
  reference: string;
  status: '1' | '0';
  message: string;
  amount: number;
}

/** The callback body reporting one outcome of a transaction. */
export function callbackPayload(transaction: SandboxTransaction, record: CallbackRecord): CallbackPayload {
  return {
    transaction_id: transaction.transaction_id,
    reference: transaction.reference,
    status: record.status,
    message: record.message,
    amount: transaction.amount,
  };
}

/** POSTs a callback once; resolves to undefined when the receiver answered 2xx, else to what went wrong. */
export async function deliverCallback(
  url: string,
  payload: CallbackPayload,
  signal: AbortSignal,
): Promise<string | undefined> {
  try {
    const response = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'payment-sandbox' },
      body: JSON.stringify(payload),
      signal,
      headersTimeout: ATTEMPT_TIMEOUT_MS,
      bodyTimeout: ATTEMPT_TIMEOUT_MS,
    });
    await response.body.dump();
    return response.statusCode >= 200 && response.statusCode < 300 ? undefined : `HTTP ${response.statusCode}`;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
