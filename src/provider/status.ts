import type { StatusCheck } from '../domain/payment-model';
import { providerState } from './codes';
import { readProviderFields } from './fields';
import { asRecord } from './text';

/** What the status query was asked about. */
export interface StatusQuery {
  transactionId: string | null;
  reference: string | null;
}

/** Fills a status URL template, URL-encoding the substituted value. */
export function fillTemplate(template: string, placeholder: string, value: string): string {
  return template.split(`{${placeholder}}`).join(encodeURIComponent(value));
}

/**
 * Reads a 2xx status-query answer (`{transaction_id, status, message}`, tolerant of nesting and of a list);
 * a string says why the answer cannot be trusted.
 */
export function readStatusAnswer(
  body: unknown,
  asked: { by: 'transaction_id' | 'reference'; value: string },
): StatusCheck | string {
  const record = asRecord(body);
  const list = Array.isArray(body) ? body : Array.isArray(record?.data) ? (record.data as unknown[]) : undefined;
  if (list && list.length === 0) return { state: 'not_found', transactionId: null, statusCode: null, message: null };
  if (list && list.length > 1) return `${list.length} transactions match`;
  const answer = list ? asRecord(list[0]) : record;
  if (!answer) return 'the answer is not a JSON object';
  const fields = readProviderFields(answer);
  if (fields.statusCode === null) return 'the answer carries no status';
  if (asked.by === 'transaction_id' && fields.transactionId !== null && fields.transactionId !== asked.value) {
    return 'the answer is about another transaction';
  }
  if (asked.by === 'reference' && fields.reference !== null && fields.reference !== asked.value) {
    return 'the answer is about another reference';
  }
  return {
    state: providerState(fields.statusCode),
    transactionId: fields.transactionId ?? (asked.by === 'transaction_id' ? asked.value : null),
    statusCode: fields.statusCode,
    message: fields.message,
    amount: fields.amount,
  };
}
