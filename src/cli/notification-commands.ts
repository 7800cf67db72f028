import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { z } from 'zod';
import { OPERATOR_NAME, operatorNameFrom } from '../domain/operator';
import { DELIVERY_STATUSES } from '../domain/notification-delivery';
import type { DeliveryRecord } from '../domain/notification-delivery';
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
    .description('the latest notifications and where their delivery stands, newest first')
    .option('--merchant <id>', 'merchant id')
    .option('--status <status>', `${DELIVERY_STATUSES.join('|')} (repeatable or comma-separated)`, collect)
    .action(async (raw: Record<string, unknown>, command: Command) => {
      const options = parseOptions(listOptions, raw);
      const deliveries = await (
        await ctx.notifications()
      ).deliveries({ merchantId: options.merchant, status: options.status });
      ctx.write(wantsJson(command.optsWithGlobals()) ? json(deliveries) : table(deliveries.map(row), COLUMNS));
    });

  group
    .command('replay')
    .description('send a failed or stopped notification again, with a fresh retry window')
    .argument('<eventId>', 'event id, e.g. evt_3f…')
    .option('--merchant <id>', "merchant id (refused when the event is another merchant's)")
    .option('--by <name>', 'operator name recorded with the replay', operatorNameFrom(userInfo().username))
    .action(async (eventId: string, raw: Record<string, unknown>, command: Command) => {
      const options = parseOptions(replayOptions, raw);
      const record = await (
        await ctx.notifications()
      ).replay(eventId, { operator: options.by, merchantId: options.merchant });
      ctx.write(
        wantsJson(command.optsWithGlobals())
          ? json(record)
          : fields({ event: record.event_id, type: record.type, status: record.status, replays: record.replays }),
      );
    });
}

const COLUMNS = ['event', 'type', 'merchant', 'subject', 'status', 'attempts', 'error', 'next', 'queued'] as const;

function row(d: DeliveryRecord): Record<(typeof COLUMNS)[number], string | number | null> {
  return {
    event: d.event_id,
    type: d.type,
    merchant: d.merchant_id,
    subject: d.subject,
    status: d.status,
    attempts: d.attempts,
    error: d.last_error,
    next: time(d.next_attempt_at),
    queued: time(d.queued_at),
  };
}
