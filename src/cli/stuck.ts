import type { Command } from 'commander';
import { z } from 'zod';
import type { PaymentStatus } from '../domain/payment-model';
import type { OpsContext } from './ops-context';
import { SUMMARY_COLUMNS, summaryRows } from './list';
import { durationOption, limitOption, parseOptions, wantsJson } from './options';
import { json, table } from './output';

const STUCK_STATUSES: readonly PaymentStatus[] = ['pending', 'reconciling'];

const stuckOptions = z.object({ olderThan: durationOption, limit: limitOption });

/** `ops stuck`: payments still pending or reconciling long after they were created, and any whose workflow ended without an outcome. */
export function registerStuck(program: Command, ctx: OpsContext): void {
  program
    .command('stuck')
    .description(
      `payments whose workflow ended without an outcome (shown needs_review), then those still ` +
        `${STUCK_STATUSES.join(' or ')} longer than a threshold, newest first`,
    )
    .option('--older-than <duration>', 'created longer ago than this', '2h')
    .option('--limit <n>', 'at most this many', '100')
    .action(async (raw: Record<string, unknown>, command: Command) => {
      const options = parseOptions(stuckOptions, raw);
      const now = Date.now();
      const service = await ctx.paymentReads();
      // Whatever their age, payments whose workflow ended without an outcome (terminated…) are stuck for good.
      const ended = await service.list({ endedWithoutOutcome: true, limit: options.limit });
      const waiting = await service.list({
        status: STUCK_STATUSES,
        createdBefore: new Date(now - options.olderThan),
        limit: options.limit,
      });
      const payments = [...ended, ...waiting].slice(0, options.limit);
      ctx.write(
        wantsJson(command.optsWithGlobals()) ? json(payments) : table(summaryRows(payments, now), SUMMARY_COLUMNS),
      );
    });
}
