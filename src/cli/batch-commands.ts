import type { Command } from 'commander';
import { z } from 'zod';
import { ITEM_STAGES } from '../domain/batch-model';
import type { ApprovalDecision } from '../domain/approval-rules';
import type { BatchAction, BatchProgress } from '../domain/batch-model';
import type { Batches } from '../payments/payout-batches';
import type { OpsContext } from './ops-context';
import { defaultOperator, operatorOption, parseOptions, wantsJson } from './options';
import { decisions, fields, json, table, time } from './output';
import { addBatchWatch } from './batch-watch';

const byOptions = z.object({ by: operatorOption });

/** `ops batch …`: show, watch, pause, resume and cancel payout batches. */
export function registerBatch(program: Command, ctx: OpsContext): void {
  const batch = program
    .command('batch')
    .description('payout batches: show, watch, pause, resume, cancel, approve, reject');

  batch
    .command('show')
    .description('a batch: its progress by status, and the items in review')
    .argument('<id>', 'batch id, e.g. batch-demo-payroll-2026-05')
    .action(async (id: string, _options: unknown, command: Command) => {
      const progress = await (await ctx.batches()).get(id);
      ctx.write(wantsJson(command.optsWithGlobals()) ? json(progress) : summary(progress));
    });

  addBatchWatch(batch, ctx, summary);

  const withOperator = (
    name: string,
    description: string,
    run: (batches: Batches, id: string, by: string) => Promise<BatchProgress>,
  ) =>
    batch
      .command(name)
      .description(description)
      .argument('<id>', 'batch id')
      .option('--by <name>', 'operator name recorded with it', defaultOperator())
      .action(async (id: string, raw: Record<string, unknown>, command: Command) => {
        const { by } = parseOptions(byOptions, raw);
        const progress = await run(await ctx.batches({ control: true }), id, by);
        ctx.write(wantsJson(command.optsWithGlobals()) ? json(progress) : summary(progress));
      });
  for (const [action, description] of [
    ['pause', 'stop starting items (those in flight go on)'],
    ['resume', 'start items again after a pause'],
    ['cancel', 'start no more items; those in flight finish; the rest are reported as never started'],
  ] as const satisfies readonly (readonly [BatchAction, string])[]) {
    withOperator(action, description, (batches, id, by) => batches.control(id, action, by));
  }
  for (const [decision, description] of [
    ['approve', 'approve a batch waiting for approval (each operator once; the merchant that made it never)'],
    ['reject', 'reject a batch waiting for approval: it ends, nothing sent'],
  ] as const satisfies readonly (readonly [ApprovalDecision, string])[]) {
    withOperator(decision, description, (batches, id, by) => batches.decide(id, decision, by));
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
    ...(progress.starts_at ? { starts: time(progress.starts_at) } : {}),
    ...(progress.approvals_required > 0
      ? {
          approvals: `${decisions(progress.approvals)} (${progress.approvals_required} needed)`,
          'approve by': time(progress.approval_expires_at),
        }
      : {}),
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
