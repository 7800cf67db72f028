import type { Command } from 'commander';
import { z } from 'zod';
import { listOperatorActions } from '../records/operator-actions';
import type { OperatorAction } from '../records/operator-actions';
import type { OpsContext } from './ops-context';
import { limitOption, parseOptions, wantsJson } from './options';
import { json, table, time } from './output';

const actionsOptions = z.object({
  subject: z.string().min(1).optional(),
  operator: z.string().min(1).optional(),
  limit: limitOption,
});

/** `ops actions`: what operators did to payments and batches, newest first, from the records. */
export function registerActions(program: Command, ctx: OpsContext): void {
  program
    .command('actions')
    .description('operator actions recorded in PostgreSQL (resolutions, batch controls, record repairs), newest first')
    .option('--subject <id>', 'only those on this payment or batch')
    .option('--operator <name>', 'only those of this operator')
    .option('--limit <n>', 'at most this many (1–1000)', '100')
    .action(async (raw: Record<string, unknown>, command: Command) => {
      const { subject, operator, limit } = parseOptions(actionsOptions, raw);
      const db = ctx.records('operator actions are recorded in PostgreSQL');
      const actions = await listOperatorActions(db, {
        limit,
        ...(subject === undefined ? {} : { subjectId: subject }),
        ...(operator === undefined ? {} : { operator }),
      });
      ctx.write(wantsJson(command.optsWithGlobals()) ? json(actions) : actionTable(actions));
    });
}

/** Operator actions as an aligned table. */
export function actionTable(actions: readonly OperatorAction[]): string {
  return table(
    actions.map((a) => ({ ...a, at: time(a.at), detail: JSON.stringify(a.detail) })),
    ['at', 'operator', 'action', 'subject_id', 'outcome', 'detail'],
  );
}
