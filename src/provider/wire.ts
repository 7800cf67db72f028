import { z } from 'zod';
import type { ProviderAck, ProviderCallback } from '../domain/payment-model';
import type { PaymentRequest, PaymentType } from '../domain/requests';
import { isValidAmount } from '../domain/money';
import { providerState } from './codes';
import { readProviderFields } from './fields';
import { ProviderError } from './provider-errors';
import { safeText } from './redact';
import { asRecord } from './text';

export const FORM = 'application/x-www-form-urlencoded';
export const JSON_TYPE = 'application/json';

/** An initiation request as the provider wants it on the wire. */
export interface WireRequest {
  url: string;
  contentType: typeof FORM | typeof JSON_TYPE;
  body: string;
}

/** The spec's `{base_url}` and `{mobile_money_base_url}`. */
export interface ProviderBaseUrls {
  baseUrl: string;
  mobileMoneyBaseUrl: string;
}

/** The reference the provider knows the payment by (only bank credits carry one): our payment id. */
export function providerReference(type: PaymentType, paymentId: string): string | undefined {
  return type === 'bank_credit' ? paymentId : undefined;
}

/** Formats an amount as a plain decimal with at most two decimals, e.g. 12.5 → "12.5". */
export function formatAmount(amount: number): string {
  if (!isValidAmount(amount) || amount >= 1e15) {
    throw new ProviderError('invalid amount; the request was not sent', { verdict: 'rejected' });
  }
  return String(Number(amount.toFixed(2)));
}

/** Encodes a product request as the provider's wire request (form for mobile money and card, JSON for bank credit). */
export function encodeInitiation(
  request: PaymentRequest,
  paymentId: string,
  callbackUrl: string,
  urls: ProviderBaseUrls,
): WireRequest {
  const amount = formatAmount(request.amount);
  switch (request.type) {
    case 'mobile_money_debit': {
      const form = new URLSearchParams({
        channel: String(request.channel),
        phone_number: request.phone_number,
        name: request.name,
        amount,
      });
      if (request.voucher_code) form.set('voucher_code', request.voucher_code);
      form.set('callback_url', callbackUrl);
      return { url: join(urls.mobileMoneyBaseUrl, '/api/pay'), contentType: FORM, body: form.toString() };
    }
    case 'card_payment': {
      const form = new URLSearchParams({
        channel: String(request.channel),
        first_name: request.first_name,
        last_name: request.last_name,
        email: request.email,
        phone_number: request.phone_number,
        card_number: request.card_number,
        card_cvv: request.card_cvv,
        expiry_month: request.expiry_month,
        expiry_year: request.expiry_year,
        amount,
        callback_url: callbackUrl,
        return_url: request.return_url,
      });
      return { url: join(urls.baseUrl, '/api/v2/pay'), contentType: FORM, body: form.toString() };
    }
    case 'bank_credit': {
      const body = {
        customerName: request.customer_name,
        bank_code: request.bank_code,
        amount: Number(amount),
        accountNumber: request.account_number,
        // Whether the provider requires a description is not documented; the merchant reference is a safe default.
        description: request.description || request.reference,
        reference: paymentId,
        callback_url: callbackUrl,
      };
      return {
        url: join(urls.baseUrl, '/api/custom/transactions/partner/credits/banks'),
        contentType: JSON_TYPE,
        body: JSON.stringify(body),
      };
    }
  }
}

/** Joins a configured base URL (which may carry a path prefix) and an API path. */
export function join(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`;
}

// Ids arrive as numbers or strings; numbers beyond 2^53 would already have lost digits in JSON.parse.
const id = z
  .union([z.string().trim().min(1).max(100), z.number().refine(Number.isSafeInteger)])
  .transform((v) => String(v));
const statusCode = z.union([z.string().trim().min(1).max(50), z.number().finite()]).transform((v) => String(v));
const text = z
  .unknown()
  .optional()
  .transform((v) => (typeof v === 'string' && v.trim() !== '' ? safeText(v) : undefined));

// Mobile-money and card acknowledgements share the `transaction` envelope; only cards carry a 3-D Secure URL.
const transactionAck = z.looseObject({
  transaction: z.looseObject({ id, status: statusCode, status_message: text, medium_details: z.unknown().optional() }),
  message: text,
});

const bankCreditAck = z.looseObject({
  code: statusCode,
  provider_id: id.nullish(),
  message: text,
});

/** Maps a 2xx answer body to the product's acknowledgement; undefined when it is not the expected shape. */
export function parseAck(type: PaymentType, body: unknown): ProviderAck | undefined {
  switch (type) {
    case 'mobile_money_debit':
    case 'card_payment': {
      const parsed = transactionAck.safeParse(body);
      if (!parsed.success) return undefined;
      const { transaction, message } = parsed.data;
      return {
        transactionId: transaction.id,
        statusCode: transaction.status,
        message: transaction.status_message ?? message ?? '',
        redirectUrl: type === 'card_payment' ? httpUrl(asRecord(transaction.medium_details)?.threeds_url) : null,
      };
    }
    case 'bank_credit': {
      const parsed = bankCreditAck.safeParse(body);
      if (!parsed.success) return undefined;
      return {
        transactionId: parsed.data.provider_id ?? null,
        statusCode: parsed.data.code,
        message: parsed.data.message ?? '',
        redirectUrl: null,
      };
    }
  }
}

// The payer is sent to this address, so only a well-formed http(s) URL is passed on.
function httpUrl(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2048) return null;
  try {
    const { protocol } = new URL(value);
    return protocol === 'https:' || protocol === 'http:' ? value : null;
  } catch {
    return null;
  }
}

/**
 * Tolerantly parses a provider callback (merged JSON body, form body and query string); null when it carries
 * neither a status nor a transaction id.
 */
export function parseCallback(fields: Record<string, unknown>): ProviderCallback | null {
  const record = asRecord(fields);
  if (!record) return null;
  const read = readProviderFields(record);
  if (read.statusCode === null && read.transactionId === null) return null;
  return {
    state: providerState(read.statusCode),
    transactionId: read.transactionId,
    statusCode: read.statusCode,
    message: read.message,
    amount: read.amount,
  };
}
