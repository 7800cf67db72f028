import type { BankDirectory } from '../banks/directory';
import { AppError } from '../payments/app-errors';
import { ApiError } from './http-errors';
import type { FieldError } from './http-errors';

/** Refuses (400) bank codes the provider does not list, before anything is sent; each bad one is named by its path. */
export async function assertKnownBanks(
  banks: BankDirectory,
  entries: ReadonlyArray<{ path: string; code: string }>,
): Promise<void> {
  if (entries.length === 0) return;
  const known = await banks.knownCodes().catch(() => {
    throw new AppError('unavailable', 'the list of supported banks cannot be fetched from the provider right now');
  });
  const fields: FieldError[] = entries
    .filter((entry) => !known.has(entry.code))
    .map((entry) => ({ path: entry.path, message: `"${entry.code}" is not a bank the provider supports` }));
  if (fields.length > 0) throw new ApiError(400, 'invalid_request', 'the request is invalid', fields);
}
