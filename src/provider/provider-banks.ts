import { z } from 'zod';
import type { Bank } from '../domain/bank';
import { asRecord } from './text';

const bank = z.object({
  code: z.union([z.string().trim().min(1).max(50), z.number().int()]).transform(String),
  name: z.string().trim().max(200).optional(),
});

/**
 * Reads the provider's bank list tolerantly: a bare array or one wrapped in `data`/`banks`, codes as strings or
 * numbers, unknown fields ignored. Entries without a usable code are skipped; undefined when no list is found.
 */
export function parseBankList(body: unknown): Bank[] | undefined {
  const record = asRecord(body);
  const list = Array.isArray(body) ? body : (record?.data ?? record?.banks);
  if (!Array.isArray(list)) return undefined;
  return list.flatMap((entry) => {
    const parsed = bank.safeParse(entry);
    return parsed.success ? [{ code: parsed.data.code, name: parsed.data.name ?? parsed.data.code }] : [];
  });
}
