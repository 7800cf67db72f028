import { z } from 'zod';
import { bankCredit, referenceSchema } from './requests';

export const MAX_BATCH_ITEMS = 10_000;

/** A batch item: a bank credit, its `type` optional. */
const batchItem = bankCredit.extend({ type: z.literal('bank_credit').default('bank_credit') });

/** The zod schema of `POST /v1/payout-batches`; the item count is checked before any item is read. */
export const payoutBatchSchema = z
  .strictObject({
    reference: referenceSchema,
    items: z
      .array(z.unknown(), { error: 'must be an array of bank credits' })
      .min(1, 'must hold at least one item')
      .max(MAX_BATCH_ITEMS, `must hold at most ${MAX_BATCH_ITEMS} items`)
      .pipe(z.array(batchItem)),
  })
  .superRefine((batch, ctx) => {
    const firstIndex = new Map<string, number>();
    batch.items.forEach((item, index) => {
      const first = firstIndex.get(item.reference);
      if (first === undefined) firstIndex.set(item.reference, index);
      else
        ctx.addIssue({
          code: 'custom',
          path: ['items', index, 'reference'],
          message: `repeats items.${first}.reference`,
        });
    });
  });

export type PayoutBatchRequest = z.infer<typeof payoutBatchSchema>;
