import type { Command } from 'commander';
import { z } from 'zod';
import type { PaymentStatus } from '../domain/payment';
import type { OpsContext } from './context';
import { SUMMARY_COLUMNS, summaryRows } from './list';
import { durationOption, limitOption, parseOptions, wantsJson } from './options';
import { json, table } from './output';

const STUCK_STATUSES: readonly PaymentStatus[] = ['pending', 'reconciling'];

const stuckOptions = z.object({ olderThan: durationOption, limit: limitOption });

/** `ops stuck`: payments still pending or reconciling long after they were created. */
export function registerStuck(program: Command, ctx: OpsContext): void {
  program
    .command('stuck')
    .description(`payments still ${STUCK_STATUSES.join(' or ')} longer than a threshold, newest first`)
    .option('--older-than <duration>', 'created longer ago than this', '2h')
    .option('--limit <n>', 'at most this many', '100')
    .action(async (raw: Record<string, unknown>, command: Command) => {
      const options = parseOptions(stuckOptions, raw);
      const now = Date.now();
      const payments = await (
        await ctx.payments()
      ).list({ status: STUCK_STATUSES, createdBefore: new Date(now - options.olderThan), limit: options.limit });
      ctx.write(
        wantsJson(command.optsWithGlobals()) ? json(payments) : table(summaryRows(payments, now), SUMMARY_COLUMNS),
      );
    });
}
