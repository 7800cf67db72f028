import { passesLuhn } from '../domain/card';
import { capText, MAX_TEXT } from './text';

export type Redactor = (text: string) => string;

const REDACTED = '[redacted]';

/** Builds a redactor that removes the given secrets and anything shaped like a card number from text. */
export function createRedactor(secrets: readonly (string | undefined)[] = []): Redactor {
  const patterns = secrets
    .filter((s): s is string => typeof s === 'string' && s.length >= 3)
    .sort((a, b) => b.length - a.length)
    .map((s) => new RegExp(/^\d+$/.test(s) ? `(?<!\\d)${escape(s)}(?!\\d)` : escape(s), 'g'));
  return (text) => {
    let out = text;
    for (const pattern of patterns) out = out.replace(pattern, REDACTED);
    // A whole run of digits goes if any 13–19 digit window of it could be a card number.
    return out.replace(/\d(?:[ -]?\d)*/g, (run) => (hidesCardNumber(run.replace(/\D/g, '')) ? REDACTED : run));
  };
}

function hidesCardNumber(digits: string): boolean {
  if (digits.length > 40) return true;
  for (let length = 13; length <= Math.min(19, digits.length); length++) {
    for (let start = 0; start + length <= digits.length; start++) {
      if (passesLuhn(digits.slice(start, start + length))) return true;
    }
  }
  return false;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const cardNumbers = createRedactor();

/** Outside text made safe to keep: redacted first (so a cut never leaves half a secret), then capped. */
export function safeText(text: string, redact: Redactor = cardNumbers, max = MAX_TEXT): string {
  return capText(redact(capText(text, 20_000)), max);
}
