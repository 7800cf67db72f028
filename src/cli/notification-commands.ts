import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { z } from 'zod';
import { OPERATOR_NAME, operatorNameFrom } from '../domain/operator';
import { DELIVERY_STATUSES } from '../domain/notification-delivery';
import type { DeliveryView } from '../payments/notification-deliveries';
import type { OpsContext } from './ops-context';
import { parseOptions, wantsJson } from './options';
import { fields, json, table, time } from './output';

const merchant = z
  .string()
  .regex(/^[a-z0-9]{1,32}$/, 'must be a merchant id (lower-case letters and digits)')
  .optional();
const listOptions = z.object({ merchant, status: z.array(z.enum(DELIVERY_STATUSES)).optional() });
const replayOptions = z.object({
  merchant,
  by: z.string().regex(OPERATOR_NAME, 'must be an operator name: 1–32 of a-z 0-9 . _ -'),
});

const collect = (value: string, previous: string[] = []) => [...previous, ...value.split(',')];

/** `ops notifications …`: merchants' notification deliveries, and replaying a failed one. */
export function registerNotifications(program: Command, ctx: OpsContext): void {
  const group = program.command('notifications').description("merchants' notifications: list deliveries, replay");

  group
    .command('list')
    .description('deliveries kept by the dispatchers (open ones, and the latest finished ones), oldest first')
    .option('--merchant <id>', 'merchant id')
    .option('--status <status>', `${DELIVERY_STATUSES.join('|')} (repeatable or comma-separated)`, collect)
    .action(async (raw: Record<string, unknown>, command: Command) => {
      const options = parseOptions(listOptions, raw);
      const { deliveries, unanswered } = await (
        await ctx.notifications()
      ).list({ merchantId: options.merchant, status: options.status });
      if (wantsJson(command.optsWithGlobals())) {
        ctx.write(json(deliveries));
      } else {
        ctx.write(table(deliveries.map(row), COLUMNS));
      }
      for (const id of unanswered) process.stderr.write(`ops: ${id} did not answer (is its worker running?)\n`);
    });

  group
    .command('replay')
    .description('send a failed or stopped notification again, with a fresh retry window')
    .argument('<eventId>', 'event id, e.g. evt_3f…')
    .option('--merchant <id>', 'merchant id (found by searching every dispatcher otherwise)')
    .option('--by <name>', 'operator name recorded with the replay', operatorNameFrom(userInfo().username))
    .action(async (eventId: string, raw: Record<string, unknown>, command: Command) => {
      const options = parseOptions(replayOptions, raw);
      const record = await (
        await ctx.notifications()
      ).replay(eventId, { merchantId: options.merchant, operator: options.by });
      ctx.write(
        wantsJson(command.optsWithGlobals())
          ? json(record)
          : fields({ event: record.event_id, type: record.type, status: record.status, replays: record.replays }),
      );
    });
}

const COLUMNS = ['event', 'type', 'merchant', 'subject', 'status', 'attempts', 'error', 'next', 'queued'] as const;

function row(d: DeliveryView): Record<(typeof COLUMNS)[number], string | number | null> {
  return {
    event: d.event_id,
    type: d.type,
    merchant: d.merchant_id,
    subject: d.subject,
    status: d.status,
    attempts: d.current_attempt ?? d.attempts,
    error: d.last_attempt_error ?? d.last_error,
    next: time(d.next_attempt_at),
    queued: time(d.queued_at),
  };
}
