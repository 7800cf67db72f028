import { z } from 'zod';
import { isKnownBank } from './sandbox-banks';

const requiredMessage = (field: string): string => `The ${field} field is required.`;

const requiredText = (field: string, max = 255) =>
  z
    .string({
      error: (issue) => (issue.input === undefined ? requiredMessage(field) : `The ${field} must be one text value.`),
    })
    .trim()
    .min(1, requiredMessage(field))
    .max(max, `The ${field} must not be longer than ${max} characters.`);

const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

const httpUrl = (field: string) =>
  z.url({
    protocol: /^https?$/,
    error: (issue) =>
      issue.input === undefined ? requiredMessage(field) : `The ${field} must be an http or https URL.`,
  });

const amountMessage = 'The amount must be a positive number with at most two decimals.';

/** An amount as a JSON number or as text (form bodies are all text). */
const amount = z.preprocess(
  (value) => (typeof value === 'string' && /^\d+(\.\d{1,2})?$/.test(value.trim()) ? Number(value) : value),
  z
    .number({
      error: (issue) => (issue.input === undefined || issue.input === '' ? requiredMessage('amount') : amountMessage),
    })
    .refine((value) => value > 0 && Math.abs(value * 100 - Math.round(value * 100)) < 1e-6, amountMessage),
);

const channel = requiredText('channel')
  .regex(/^\d{1,3}$/, 'The channel must be a number.')
  .transform(Number);

/** Luhn checksum over a string of digits. */
function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index += 1) {
    let digit = Number(digits[digits.length - 1 - index]);
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** The card network of a card number, or undefined when the sandbox does not take it. */
export function cardNetwork(cardNumber: string): 'VISA' | 'MASTERCARD' | undefined {
  if (cardNumber.startsWith('4')) return 'VISA';
  if (/^(5[1-5]|2[2-7])/.test(cardNumber)) return 'MASTERCARD';
  return undefined;
}

const formBody = { error: 'The request body must be form fields.' };

export const mobileMoneySchema = z.object(
  {
    channel,
    phone_number: requiredText('phone_number').regex(
      /^\d{8,15}$/,
      'The phone_number must be 8 to 15 digits in international format, without a plus sign.',
    ),
    name: requiredText('name'),
    amount,
    voucher_code: optional(requiredText('voucher_code', 64)),
    callback_url: optional(httpUrl('callback_url')),
  },
  formBody,
);

export const cardSchema = z.object(
  {
    channel,
    first_name: requiredText('first_name'),
    last_name: requiredText('last_name'),
    email: z.email({
      error: (issue) =>
        issue.input === undefined ? requiredMessage('email') : 'The email must be a valid e-mail address.',
    }),
    phone_number: requiredText('phone_number').regex(
      /^\+\d{8,15}$/,
      'The phone_number must be in international format with a leading plus sign.',
    ),
    card_number: requiredText('card_number')
      .regex(/^\d{12,19}$/, 'The card_number must be 12 to 19 digits.')
      .refine(passesLuhn, 'The card_number is not a valid card number.')
      .refine((value) => cardNetwork(value) !== undefined, 'The card_number must be a Visa or Mastercard card.'),
    card_cvv: requiredText('card_cvv').regex(/^\d{3,4}$/, 'The card_cvv must be 3 or 4 digits.'),
    expiry_month: requiredText('expiry_month').regex(/^(0?[1-9]|1[0-2])$/, 'The expiry_month must be 01 to 12.'),
    expiry_year: requiredText('expiry_year').regex(/^(\d{2}|\d{4})$/, 'The expiry_year must be 2 or 4 digits.'),
    amount,
    callback_url: httpUrl('callback_url'),
    return_url: httpUrl('return_url'),
  },
  formBody,
);

export const bankCreditSchema = z.object(
  {
    customerName: requiredText('customerName'),
    bank_code: requiredText('bank_code').refine(isKnownBank, 'The selected bank_code is not a supported bank.'),
    amount,
    accountNumber: requiredText('accountNumber').regex(/^\d{6,20}$/, 'The accountNumber must be 6 to 20 digits.'),
    description: requiredText('description'),
    reference: requiredText('reference', 100),
    callback_url: optional(httpUrl('callback_url')),
  },
  { error: 'The request body must be a JSON object.' },
);

export type MobileMoneyInput = z.infer<typeof mobileMoneySchema>;
export type CardInput = z.infer<typeof cardSchema>;
export type BankCreditInput = z.infer<typeof bankCreditSchema>;

/** Groups validation issues by field, the way the sandbox reports them. */
export function fieldErrors(error: z.ZodError): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const issue of error.issues) {
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'body';
    (errors[field] ??= []).push(issue.message);
  }
  return errors;
}
