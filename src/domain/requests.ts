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

/**
 * A rule the server checks that JSON Schema cannot state (a checksum, the clock, configuration, other fields): the
 * document carries it as `x-rule` beside the field's description, and a request breaking it is a 400 naming the field.
 */
export function checkedRule<T extends z.ZodType>(schema: T, rule: string): T {
  return schema.meta({ description: rule, 'x-rule': rule });
}

/** An amount in major units: at least 0.01, at most two decimals, at most `max` (the merchant's limit). */
function amountSchema(max: number) {
  return z
    .number()
    .min(0.01, 'must be at least 0.01')
    .multipleOf(0.01, 'must have at most two decimals')
    .max(max, `must be at most ${max.toFixed(2)} (this merchant's limit)`);
}

const channel = z.number().int().positive().max(999_999);
// Letters (any script), marks, spaces and the punctuation names use: no markup, quotes, control or format characters.
// Trimmed after the checks (the pattern allows the white space around), so the document states exactly what is checked.
const personName = z
  .string()
  .max(100)
  .regex(/^\s*[\p{L}\p{M}][\p{L}\p{M} '.,-]*\s*$/u, 'must be letters, spaces, "\'", ".", "," or "-"')
  .trim();
// A host name whose last label starts with a letter (so the URL parser never reads it as an IPv4 address), or a
// dotted-quad IPv4 address; a port of at most five digits; then any path, query and fragment of URL characters.
const URL_PATTERN = new RegExp(
  '^https?://(?:(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?' +
    '|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))' +
    "(?::(?:6553[0-5]|655[0-2]\\d|65[0-4]\\d{2}|6[0-4]\\d{3}|[1-5]\\d{4}|[1-9]\\d{0,3}))?(?:[/?#][A-Za-z0-9\\-._~:/?#[\\]@!$&'()*+,;=%]*)?$",
);
/** An http(s) URL, as the document can say it and the WHATWG parser checks it. */
export const httpUrl = z
  .string()
  .max(2048)
  .regex(URL_PATTERN, 'must be an http(s) URL')
  .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }))
  .meta({
    description: 'an http(s) URL',
    'x-rule': 'must also parse as a URL by the WHATWG URL Standard (a `xn--` label must be valid Punycode)',
  });
const freeText = z
  .string()
  .max(140)
  .regex(/^\s*[\p{L}\p{M}\p{N} .,:/'()#&+_@!?*-]*\s*$/u, 'must be letters, digits, spaces and common punctuation')
  .trim();

export const MAX_METADATA_PAIRS = 20;

/**
 * The merchant's own key-value pairs, stored and answered with the resource, never sent to the provider: at most 20,
 * keys of 1–40 characters, string values of at most 500.
 */
export const metadataSchema = z
  .record(z.string(), z.string({ error: 'must be a string' }).max(500, 'must be at most 500 characters'), {
    error: 'must be an object of string values',
  })
  // The checks below, as JSON Schema states them (they stay checks of their own: their messages name the key). The
  // JSON parser refuses a `__proto__` key anywhere (a 400, `invalid_json`): not a key metadata can have.
  .meta({
    maxProperties: MAX_METADATA_PAIRS,
    propertyNames: { type: 'string', minLength: 1, maxLength: 40, not: { const: '__proto__' } },
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
    "up to 20 string pairs of the merchant's own (keys 1–40 characters, not `__proto__`, values at most 500); never " +
      'sent to the provider',
  );

/** As JSON Schema states it: a debit on one of these channels carries a `voucher_code` (the check is below). */
function voucherRequirement(voucherChannels: readonly number[]) {
  if (voucherChannels.length === 0) return {};
  return {
    if: { properties: { channel: { enum: [...voucherChannels] } }, required: ['channel'] },
    then: { required: ['voucher_code'] },
  };
}

const mobileMoneyDebit = (amount: ReturnType<typeof amountSchema>, voucherChannels: readonly number[]) =>
  z
    .strictObject({
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
    })
    .meta(voucherRequirement(voucherChannels));

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
    card_number: checkedRule(
      z
        .string()
        .regex(/^\d{12,19}$/, 'must be 12–19 digits')
        .refine(passesLuhn, 'is not a valid card number (Luhn check)'),
      'must pass the Luhn check digit test',
    ).meta({ examples: ['4111111111111111', '5555555555554444'] }),
    card_cvv: z.string().regex(/^\d{3,4}$/, 'must be 3 or 4 digits'),
    expiry_month: z.string().regex(/^(0[1-9]|1[0-2])$/, 'must be 01–12'),
    expiry_year: checkedRule(
      z.string().regex(/^20\d{2}$/, 'must be a four-digit year'),
      'with `expiry_month`, the current month or later (UTC)',
    ),
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
    bank_code: checkedRule(
      z.string().regex(/^[A-Za-z0-9]{2,20}$/, 'must be 2–20 letters or digits'),
      "must be the code of a bank in the provider's bank list",
    ).meta({ examples: ['GH030100'] }),
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
    mobileMoneyDebit(amount, rules.voucherChannels),
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
  // Trimmed after the checks: `\S` is the document's way of saying "not blank".
  note: z.string().min(1, 'is required').max(500).regex(/\S/, 'is required').trim(),
});
