import type { Command } from 'commander';
import { z } from 'zod';
import type { BatchProgress } from '../domain/batch-model';
import { isBatchClosed } from '../domain/batch-model';
import { readBatchFigures } from '../payments/batch-figures';
import type { BatchFigures } from '../payments/batch-figures';
import type { OpsContext } from './ops-context';
import { durationOption, parseOptions, wantsJson } from './options';
import { json } from './output';
import { progressLine } from './progress';

const watchOptions = z.object({ interval: durationOption });

/**
 * `ops batch watch <id>` (also `follow`): a live progress bar read from the records in PostgreSQL every second, with
 * counts by stage, items per second and time left; on a terminal one line redrawn, otherwise a line per change. Ends
 * when the batch closes, with `summary` of it.
 */
export function addBatchWatch(batch: Command, ctx: OpsContext, summary: (progress: BatchProgress) => string): void {
  batch
    .command('watch')
    .alias('follow')
    .description(
      'watch a batch live until it closes: a progress bar with counts by stage, items/s and time left, then its ' +
        'summary (reads the records: needs DATABASE_URL)',
    )
    .argument('<id>', 'batch id')
    .option('--interval <duration>', 'how often to read the records', '1s')
    .action(async (id: string, raw: Record<string, unknown>, command: Command) => {
      const { interval } = parseOptions(watchOptions, raw);
      const quiet = wantsJson(command.optsWithGlobals());
      const { batch: closed, pace } = await watch(ctx, id, interval, !quiet);
      ctx.write(quiet ? json({ ...closed, pace }) : summary(closed));
    });
}

async function watch(ctx: OpsContext, id: string, intervalMs: number, live: boolean): Promise<BatchFigures> {
  const db = ctx.records('batch watch reads the batch and its items from the records');
  const tty = live && process.stdout.isTTY;
  let printed = '';
  for (;;) {
    const figures = await readBatchFigures(db, id);
    const closed = isBatchClosed(figures.batch.status);
    const line = watchLine(figures);
    if (tty) {
      ctx.write(`\r${line}\x1b[K${closed ? '\n' : ''}`);
    } else if (live && line !== printed) {
      // Not a terminal (a log, a CI job): a line each time the figures change instead of redrawing one.
      ctx.write(`${line}\n`);
      printed = line;
    }
    if (closed) return figures;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** The progress bar, the counts by stage and, when the batch halted itself, why. */
export function watchLine({ batch, pace }: BatchFigures): string {
  const { items } = batch;
  const stages =
    `in flight ${items.in_flight.count} · succeeded ${items.succeeded.count} · failed ${items.failed.count} · ` +
    `review ${items.needs_review.count} · not started ${items.not_started.count}`;
  const halted = batch.paused_by === 'system' && batch.halt ? `  halted: ${batch.halt.message}` : '';
  return `${progressLine(batch, pace.items_per_second ?? 0)}  | ${stages}${halted}`;
}
