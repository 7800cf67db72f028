import type { ProviderCallback } from '../domain/payment-model';
import { providerState } from './codes';
import { readProviderFields } from './fields';
import { asRecord } from './text';

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
