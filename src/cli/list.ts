import type { Command } from 'commander';
import { z } from 'zod';
import { PAYMENT_STATUSES } from '../domain/payment-model';
import { PAYMENT_TYPES, referenceSchema } from '../domain/requests';
import type { PaymentSummary } from '../payments/payment-reads';
import type { OpsContext } from './ops-context';
import { durationOption, limitOption, parseOptions, wantsJson } from './options';
import { age, json, table } from './output';
import type { Row } from './output';

const listOptions = z.object({
  status: z.array(z.enum(PAYMENT_STATUSES)).optional(),
  type: z.enum(PAYMENT_TYPES).optional(),
  reference: referenceSchema.optional(),
  merchant: z
    .string()
    .regex(/^[a-z0-9]{1,32}$/, 'must be a merchant id (lower-case letters and digits)')
    .optional(),
  olderThan: durationOption.optional(),
  newerThan: durationOption.optional(),
  limit: limitOption,
});

/** The columns of a payment list, shared by `list` and `stuck`. */
export function summaryRows(payments: readonly PaymentSummary[], now = Date.now()): Row[] {
  return payments.map((p) => ({
    id: p.id,
    status: p.status,
    type: p.type,
    amount: p.amount,
    reference: p.reference,
    age: age(p.created_at, now),
  }));
}

export const SUMMARY_COLUMNS = ['id', 'status', 'type', 'amount', 'reference', 'age'] as const;

const collect = (value: string, previous: string[] = []) => [...previous, ...value.split(',')];

/** `ops list`: payments by status, type, reference, merchant and age, newest first. */
export function registerList(program: Command, ctx: OpsContext): void {
  program
    .command('list')
    .description('list payments, newest first')
    .option('--status <status>', `${PAYMENT_STATUSES.join('|')} (repeatable or comma-separated)`, collect)
    .option('--type <type>', PAYMENT_TYPES.join('|'))
    .option('--reference <reference>', "the merchant's reference")
    .option('--merchant <id>', 'merchant id')
    .option('--older-than <duration>', 'created longer ago than this, e.g. 2h')
    .option('--newer-than <duration>', 'created within this, e.g. 30m')
    .option('--limit <n>', 'at most this many', '50')
    .action(async (raw: Record<string, unknown>, command: Command) => {
      const options = parseOptions(listOptions, raw);
      const now = Date.now();
      const payments = await (
        await ctx.paymentReads()
      ).list({
        status: options.status,
        type: options.type,
        reference: options.reference,
        merchantId: options.merchant,
        createdBefore: options.olderThan === undefined ? undefined : new Date(now - options.olderThan),
        createdAfter: options.newerThan === undefined ? undefined : new Date(now - options.newerThan),
        limit: options.limit,
      });
      ctx.write(
        wantsJson(command.optsWithGlobals()) ? json(payments) : table(summaryRows(payments, now), SUMMARY_COLUMNS),
      );
    });
}
