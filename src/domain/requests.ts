import { z } from 'zod';
import { isExpiryCurrent, passesLuhn } from './card';

/** Rules of the merchant API that depend on configuration or the clock. */
export interface RequestRules {
  /** Mobile-money channel codes whose wallet provider needs a voucher code. */
  voucherChannels: readonly number[];
  now: () => Date;
  /** The largest amount one payment or batch item of the merchant may have (MERCHANT_MAX_AMOUNTS). */
  maxAmount: (merchantId: string) => number;
  /** The largest payout batch upload in bytes (BATCH_UPLOAD_LIMIT_BYTES); each item is validated on its own. */
  batchUploadLimitBytes: number;
}

/** A merchant reference: the idempotency key, part of the payment id and safe inside visibility queries. */
export const referenceSchema = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1–64 characters of letters, digits, ".", "_" or "-"');

/** An amount in major units: at least 0.01, at most two decimals, at most `max` (the merchant's limit). */
function amountSchema(max: number) {
  return z
    .number()
    .min(0.01, 'must be at least 0.01')
    .refine((a) => Math.abs(a * 100 - Math.round(a * 100)) < 1e-6, 'must have at most two decimals')
    .max(max, `must be at most ${max.toFixed(2)} (this merchant's limit)`);
}

const channel = z.number().int().positive().max(999_999);
// Letters (any script), marks, spaces and the punctuation names use: no markup, quotes, control or format characters.
const personName = z
  .string()
  .trim()
  .max(100)
  .regex(/^[\p{L}\p{M}][\p{L}\p{M} '.,-]*$/u, 'must be letters, spaces, "\'", ".", "," or "-"');
const httpUrl = z
  .string()
  .max(2048)
  .regex(/^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/, 'must be an http(s) URL')
  .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }));
const freeText = z
  .string()
  .trim()
  .max(140)
  .regex(/^[\p{L}\p{M}\p{N} .,:/'()#&+_@!?*-]*$/u, 'must be letters, digits, spaces and common punctuation');

export const MAX_METADATA_PAIRS = 20;

/**
 * The merchant's own key-value pairs, stored and answered with the resource, never sent to the provider: at most 20,
 * keys of 1–40 characters, string values of at most 500.
 */
export const metadataSchema = z
  .record(z.string(), z.string({ error: 'must be a string' }).max(500, 'must be at most 500 characters'), {
    error: 'must be an object of string values',
  })
  .superRefine((metadata, ctx) => {
    const keys = Object.keys(metadata);
    if (keys.length > MAX_METADATA_PAIRS) {
      ctx.addIssue({ code: 'custom', message: `must hold at most ${MAX_METADATA_PAIRS} pairs` });
    }
    for (const key of keys.filter((k) => k.length < 1 || k.length > 40)) {
      ctx.addIssue({ code: 'custom', path: [key], message: 'must be a key of 1–40 characters' });
    }
  })
  .describe(
    "up to 20 string pairs of the merchant's own (keys 1–40 characters, values at most 500); never sent to the provider",
  );

const mobileMoneyDebit = (amount: ReturnType<typeof amountSchema>) =>
  z.strictObject({
    type: z.literal('mobile_money_debit'),
    reference: referenceSchema,
    amount,
    channel,
    phone_number: z.string().regex(/^[1-9]\d{7,14}$/, 'must be 8–15 digits in international format, without a plus'),
    name: personName,
    voucher_code: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, 'must be 1–64 letters, digits or "-"')
      .optional(),
    metadata: metadataSchema.optional(),
  });

const cardPayment = (amount: ReturnType<typeof amountSchema>) =>
  z.strictObject({
    type: z.literal('card_payment'),
    reference: referenceSchema,
    amount,
    channel,
    first_name: personName,
    last_name: personName,
    email: z.email({ error: 'must be an e-mail address' }).max(254),
    phone_number: z.string().regex(/^\+[1-9]\d{7,14}$/, 'must be a plus followed by 8–15 digits'),
    card_number: z
      .string()
      .regex(/^\d{12,19}$/, 'must be 12–19 digits')
      .refine(passesLuhn, 'is not a valid card number (Luhn check)'),
    card_cvv: z.string().regex(/^\d{3,4}$/, 'must be 3 or 4 digits'),
    expiry_month: z.string().regex(/^(0[1-9]|1[0-2])$/, 'must be 01–12'),
    expiry_year: z.string().regex(/^20\d{2}$/, 'must be a four-digit year'),
    return_url: httpUrl,
    metadata: metadataSchema.optional(),
  });

/** A bank credit as the merchant API takes it, up to the merchant's largest amount. */
export const bankCreditSchema = (maxAmount: number) =>
  z.strictObject({
    type: z.literal('bank_credit'),
    reference: referenceSchema,
    amount: amountSchema(maxAmount),
    customer_name: personName,
    bank_code: z.string().regex(/^[A-Za-z0-9]{2,20}$/, 'must be 2–20 letters or digits'),
    account_number: z.string().regex(/^[A-Za-z0-9]{4,34}$/, 'must be 4–34 letters or digits'),
    description: freeText.optional(),
  });

/** A bank credit as a payment of its own, with metadata (a batch's items take none: a page of them stays small). */
const bankCreditPayment = (maxAmount: number) =>
  bankCreditSchema(maxAmount).extend({ metadata: metadataSchema.optional() });

/** The zod schema of `POST /v1/payments` for one merchant, with the rules that need configuration and the clock. */
export function paymentRequestSchema(rules: RequestRules, merchantId: string) {
  const amount = amountSchema(rules.maxAmount(merchantId));
  const types = [
    mobileMoneyDebit(amount),
    cardPayment(amount),
    bankCreditPayment(rules.maxAmount(merchantId)),
  ] as const;
  return z.discriminatedUnion('type', types).superRefine((req, ctx) => {
    if (req.type === 'card_payment' && !isExpiryCurrent(req.expiry_month, req.expiry_year, rules.now())) {
      ctx.addIssue({ code: 'custom', path: ['expiry_year'], message: 'the card has expired' });
    }
    if (req.type === 'mobile_money_debit' && rules.voucherChannels.includes(req.channel) && !req.voucher_code) {
      ctx.addIssue({ code: 'custom', path: ['voucher_code'], message: `is required for channel ${req.channel}` });
    }
  });
}

export type MobileMoneyDebitRequest = z.infer<ReturnType<typeof mobileMoneyDebit>>;
export type CardPaymentRequest = z.infer<ReturnType<typeof cardPayment>>;
export type BankCreditRequest = z.infer<ReturnType<typeof bankCreditPayment>>;
export type Metadata = z.infer<typeof metadataSchema>;
export type PaymentRequest = MobileMoneyDebitRequest | CardPaymentRequest | BankCreditRequest;
export type PaymentType = PaymentRequest['type'];
export const PAYMENT_TYPES = [
  'mobile_money_debit',
  'card_payment',
  'bank_credit',
] as const satisfies readonly PaymentType[];

/** An operator's decision on a payment in review, from the API or the CLI. */
export const resolutionSchema = z.strictObject({
  outcome: z.enum(['succeeded', 'failed']),
  note: z.string().trim().min(1, 'is required').max(500),
});
