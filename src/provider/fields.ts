import { safeText } from './redact';
import { asRecord, capText, parseJson } from './text';

/** What a callback or status answer says, read tolerantly from whatever shape the provider used. */
export interface ProviderFields {
  transactionId: string | null;
  statusCode: string | null;
  message: string | null;
  amount: number | null;
  reference: string | null;
}

const ID_KEYS = ['transaction_id', 'transactionId', 'id', 'provider_id'] as const;
const STATUS_KEYS = ['status', 'code', 'status_code'] as const;
const MESSAGE_KEYS = ['message', 'status_message', 'reason'] as const;

/** Reads the transaction fields of a flat or nested (`transaction`, `data`, `data.transaction`) provider record. */
export function readProviderFields(root: Record<string, unknown>): ProviderFields {
  const data = nested(root, 'data');
  // Most specific first: a nested transaction describes the transaction itself, the envelope may not.
  const layers = [nested(root, 'transaction'), data && nested(data, 'transaction'), data, root].filter(
    (layer): layer is Record<string, unknown> => layer !== undefined,
  );
  return {
    transactionId: first(layers, ID_KEYS, toScalarText),
    statusCode: first(layers, STATUS_KEYS, toScalarText),
    message: first(layers, MESSAGE_KEYS, (v) => (typeof v === 'string' && v.trim() !== '' ? safeText(v) : undefined)),
    amount: first(layers, ['amount'], toAmount),
    reference: first(layers, ['reference'], toScalarText),
  };
}

function nested(record: Record<string, unknown>, key: string): Record<string, unknown> | undefined {
  const value = own(record, key);
  // Form bodies sometimes carry the record as a JSON string.
  return asRecord(typeof value === 'string' ? parseJson(value) : value);
}

function own(record: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function first<T>(
  layers: readonly Record<string, unknown>[],
  keys: readonly string[],
  read: (value: unknown) => T | undefined,
): T | null {
  for (const key of keys) {
    for (const layer of layers) {
      const value = read(own(layer, key));
      if (value !== undefined) return value;
    }
  }
  return null;
}

function toScalarText(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'string' && value.trim() !== '') return capText(value);
  return undefined;
}

function toAmount(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}
