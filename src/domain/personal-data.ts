import type { CardPaymentRequest, PaymentRequest } from './requests';

// The one list of the personal and card data a payment request carries. Log redaction (server), the provider
// client's scrubbing of outside texts, the card vault and the sandbox's request log all derive from it.

/** What a personal field is and how the code treats it. */
export interface PersonalField {
  what: string;
  /** Card data: kept in the card vault, never in Temporal. */
  card: boolean;
  /** Searched for and removed in the provider's answers and errors (too short or common a value is not). */
  scrubbedFromText: boolean;
  /** How a record of what the provider received (the sandbox's request log) shows it. */
  recorded: 'last4' | 'dropped' | 'as-is';
}

export const PERSONAL_FIELDS = {
  card_number: { what: 'the card number (PAN)', card: true, scrubbedFromText: true, recorded: 'last4' },
  card_cvv: { what: "the card's security code", card: true, scrubbedFromText: true, recorded: 'dropped' },
  expiry_month: { what: "the card's expiry month", card: true, scrubbedFromText: false, recorded: 'as-is' },
  expiry_year: { what: "the card's expiry year", card: true, scrubbedFromText: false, recorded: 'as-is' },
  first_name: { what: "the card holder's first name", card: false, scrubbedFromText: true, recorded: 'as-is' },
  last_name: { what: "the card holder's last name", card: false, scrubbedFromText: true, recorded: 'as-is' },
  name: { what: "the mobile-money payer's name", card: false, scrubbedFromText: true, recorded: 'as-is' },
  customer_name: { what: "the bank credit's beneficiary", card: false, scrubbedFromText: true, recorded: 'as-is' },
  email: { what: "the card holder's e-mail address", card: false, scrubbedFromText: true, recorded: 'as-is' },
  phone_number: {
    what: 'a phone number (payer or card holder)',
    card: false,
    scrubbedFromText: true,
    recorded: 'as-is',
  },
  account_number: { what: 'a bank account number', card: false, scrubbedFromText: true, recorded: 'as-is' },
} as const satisfies Record<string, PersonalField>;

export type PersonalFieldName = keyof typeof PERSONAL_FIELDS;

const FIELD_NAMES = Object.keys(PERSONAL_FIELDS) as PersonalFieldName[];

/** The card fields that stay in the vault, outside Temporal. */
export type CardField = {
  [F in PersonalFieldName]: (typeof PERSONAL_FIELDS)[F]['card'] extends true ? F : never;
}[PersonalFieldName];

export const CARD_FIELDS = FIELD_NAMES.filter((f) => PERSONAL_FIELDS[f].card) as CardField[];

/** A card payment's card data, as the vault holds it. */
export type CardData = Pick<CardPaymentRequest, CardField>;

/** The part of a card number that may be shown and kept: its last four digits. */
export function lastFour(cardNumber: string): string {
  return cardNumber.slice(-4);
}

/** Every personal field's name: what the logs censor wherever it appears. */
export function personalFieldNames(): readonly PersonalFieldName[] {
  return FIELD_NAMES;
}

/** The request's values that must never reach a log line or an error message, even when the provider echoes them. */
export function personalValues(request: PaymentRequest): string[] {
  const fields = request as Partial<Record<PersonalFieldName, unknown>>;
  return FIELD_NAMES.filter((f) => PERSONAL_FIELDS[f].scrubbedFromText)
    .map((f) => fields[f])
    .filter((v): v is string => typeof v === 'string');
}

/** A card payment split into its card data and the rest. */
export function splitCardData(request: CardPaymentRequest): {
  card: CardData;
  rest: Omit<CardPaymentRequest, CardField>;
} {
  const rest: Record<string, unknown> = { ...request };
  const card: Record<string, unknown> = {};
  for (const field of CARD_FIELDS) {
    card[field] = request[field];
    delete rest[field];
  }
  return { card: card as CardData, rest: rest as Omit<CardPaymentRequest, CardField> };
}

/** A copy of a received body with each personal field shown as the model says (`recorded`). */
export function recordedBody(body: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...body };
  for (const field of FIELD_NAMES) {
    if (!(field in copy)) continue;
    const rule = PERSONAL_FIELDS[field].recorded;
    const value = copy[field];
    if (rule === 'dropped') delete copy[field];
    else if (rule === 'last4') copy[field] = typeof value === 'string' ? lastFour(value) : '[redacted]';
  }
  return copy;
}
