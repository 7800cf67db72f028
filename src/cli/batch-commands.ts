import type { Command } from 'commander';
import { z } from 'zod';
import { ITEM_STAGES } from '../domain/batch-model';
import type { BatchAction, BatchProgress } from '../domain/batch-model';
import type { OpsContext } from './ops-context';
import { defaultOperator, operatorOption, parseOptions, wantsJson } from './options';
import { fields, json, table, time } from './output';
import { addBatchWatch } from './batch-watch';

const byOptions = z.object({ by: operatorOption });

/** `ops batch …`: show, watch, pause, resume and cancel payout batches. */
export function registerBatch(program: Command, ctx: OpsContext): void {
  const batch = program.command('batch').description('payout batches: show, watch, pause, resume, cancel');

  batch
    .command('show')
    .description('a batch: its progress by status, and the items in review')
    .argument('<id>', 'batch id, e.g. batch-demo-payroll-2026-05')
    .action(async (id: string, _options: unknown, command: Command) => {
      const progress = await (await ctx.batches()).get(id);
      ctx.write(wantsJson(command.optsWithGlobals()) ? json(progress) : summary(progress));
    });

  addBatchWatch(batch, ctx, summary);

  for (const [action, description] of [
    ['pause', 'stop starting items (those in flight go on)'],
    ['resume', 'start items again after a pause'],
    ['cancel', 'start no more items; those in flight finish; the rest are reported as never started'],
  ] as const satisfies readonly (readonly [BatchAction, string])[]) {
    batch
      .command(action)
      .description(description)
      .argument('<id>', 'batch id')
      .option('--by <name>', 'operator name recorded with the action', defaultOperator())
      .action(async (id: string, raw: Record<string, unknown>, command: Command) => {
        const { by } = parseOptions(byOptions, raw);
        const progress = await (await ctx.batches({ control: true })).control(id, action, by);
        ctx.write(wantsJson(command.optsWithGlobals()) ? json(progress) : summary(progress));
      });
  }
}

function summary(progress: BatchProgress): string {
  const head = fields({
    id: progress.id,
    reference: progress.reference,
    status: progress.paused_by ? `${progress.status} (by ${progress.paused_by})` : progress.status,
    started: time(progress.started_at),
    finished: time(progress.finished_at),
    concurrency: progress.concurrency,
  });
  const rows = [
    ...ITEM_STAGES.map((stage) => ({ status: stage, ...progress.items[stage] })),
    { status: 'total', ...progress.total },
  ];
  const review = progress.needs_review.length
    ? `\nIn review (resolve each with \`ops resolve <id>\`)\n${progress.needs_review.join('\n')}\n`
    : '';
  const notStarted = progress.not_started?.length
    ? `\nNever started (cancelled)\n${progress.not_started.join('\n')}\n`
    : '';
  return `${head}\n${table(rows, ['status', 'count', 'amount'])}${review}${notStarted}`;
}
