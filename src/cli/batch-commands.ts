import type { Command } from 'commander';
import { z } from 'zod';
import { ITEM_STAGES, isBatchClosed } from '../domain/batch-model';
import type { ApprovalDecision } from '../domain/approval-rules';
import type { BatchAction, BatchProgress } from '../domain/batch-model';
import type { Batches } from '../payments/payout-batches';
import type { OpsContext } from './ops-context';
import { defaultOperator, durationOption, operatorOption, parseOptions, wantsJson } from './options';
import { fields, json, table, time } from './output';
import { RateMeter, itemsDone, progressLine } from './progress';

const followOptions = z.object({ interval: durationOption });
const byOptions = z.object({ by: operatorOption });

/** `ops batch …`: show, follow, pause, resume and cancel payout batches. */
export function registerBatch(program: Command, ctx: OpsContext): void {
  const batch = program
    .command('batch')
    .description('payout batches: show, follow, pause, resume, cancel, approve, reject');

  batch
    .command('show')
    .description('a batch: its progress by status, and the items in review')
    .argument('<id>', 'batch id, e.g. batch-demo-payroll-2026-05')
    .action(async (id: string, _options: unknown, command: Command) => {
      const progress = await (await ctx.batches()).get(id);
      ctx.write(wantsJson(command.optsWithGlobals()) ? json(progress) : summary(progress));
    });

  batch
    .command('follow')
    .description('follow a batch with a live progress bar until it completes, then print its summary')
    .argument('<id>', 'batch id')
    .option('--interval <duration>', 'how often to ask', '1s')
    .action(async (id: string, raw: Record<string, unknown>, command: Command) => {
      const { interval } = parseOptions(followOptions, raw);
      const progress = await follow(ctx, id, interval, !wantsJson(command.optsWithGlobals()));
      ctx.write(wantsJson(command.optsWithGlobals()) ? json(progress) : summary(progress));
    });

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

async function follow(ctx: OpsContext, id: string, intervalMs: number, live: boolean): Promise<BatchProgress> {
  const batches = await ctx.batches();
  const meter = new RateMeter();
  const tty = live && process.stdout.isTTY;
  let lastLine = 0;
  for (;;) {
    const progress = await batches.get(id);
    const rate = meter.sample(Date.now(), itemsDone(progress));
    const closed = isBatchClosed(progress.status);
    if (tty) {
      ctx.write(`\r${progressLine(progress, rate)}\x1b[K${closed ? '\n' : ''}`);
    } else if (live && (closed || Date.now() - lastLine >= 10_000)) {
      // Not a terminal (a log, a CI job): a line now and then instead of redrawing one.
      ctx.write(`${progressLine(progress, rate)}\n`);
      lastLine = Date.now();
    }
    if (closed) return progress;
    await new Promise((r) => setTimeout(r, intervalMs));
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
          approvals: `${progress.approvals.map((a) => `${a.decision} by ${a.operator} at ${a.at}`).join('; ') || 'none'} (${progress.approvals_required} needed)`,
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
