import { z } from 'zod';
import { bankCreditSchema, checkedRule, metadataSchema, referenceSchema } from './requests';

/** How far ahead a batch may be scheduled: its signed items must outlive the wait and its approval window. */
const MAX_SCHEDULE_AHEAD_MS = 30 * 24 * 3600_000;

/** A batch item: a bank credit up to the merchant's largest amount, its `type` optional. */
const batchItem = (maxAmount: number) =>
  bankCreditSchema(maxAmount).extend({ type: z.literal('bank_credit').default('bank_credit') });

/**
 * The zod schema of `POST /v1/payout-batches` for a merchant's largest amount. No item count: the upload's size is
 * bounded (BATCH_UPLOAD_LIMIT_BYTES) and every item is validated on its own.
 */
export const payoutBatchSchema = (maxAmount: number) =>
  z
    .strictObject({
      reference: referenceSchema,
      items: checkedRule(
        z
          .array(z.unknown(), { error: 'must be an array of bank credits' })
          .min(1, 'must hold at least one item')
          .pipe(z.array(batchItem(maxAmount))),
        'no two items with the same `reference`',
      ),
      metadata: metadataSchema.optional(),
      scheduled_at: checkedRule(
        z.iso
          .datetime({ offset: true })
          .refine((at) => Date.parse(at) <= Date.now() + MAX_SCHEDULE_AHEAD_MS, 'must be at most 30 days ahead'),
        'at most 30 days ahead',
      )
        .optional()
        .describe('when its items may start (at most 30 days ahead); absent or past: at once'),
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

export type PayoutBatchRequest = z.infer<ReturnType<typeof payoutBatchSchema>>;
