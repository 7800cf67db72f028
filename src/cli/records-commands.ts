import type { Command } from 'commander';
import { z } from 'zod';
import type { VerifyReport } from '../payments/record-verification';
import { CliError } from './ops-context';
import type { OpsContext } from './ops-context';
import { formatDuration } from '../domain/duration';
import { purgeRecords } from '../records/record-purge';
import type { PurgeReport } from '../records/record-purge';
import { EXIT } from './ops-context';
import { defaultOperator, durationOption, operatorOption, parseOptions, wantsJson } from './options';
import { json, table } from './output';

const verifyOptions = z.object({
  dryRun: z.boolean().default(false),
  newerThan: durationOption.optional(),
  by: operatorOption,
});
const purgeOptions = z.object({ dryRun: z.boolean().default(false) });

/** Past this many workflows a run reports its progress on stderr, every this many. */
const PROGRESS_EVERY = 500;

/**
 * `ops records verify`: the records in PostgreSQL against the workflows Temporal still holds, repaired where they lag;
 * `ops records purge`: finished records older than RECORDS_PURGE_AFTER deleted.
 */
export function registerRecords(program: Command, ctx: OpsContext): void {
  const records = program
    .command('records')
    .description('the records in PostgreSQL (the system of record; needs DATABASE_URL)');
  records
    .command('verify')
    .description(
      'compare each payment and batch record with its workflow, for those still in Temporal, and repair the records ' +
        'that lag or are missing (run it after restoring PostgreSQL from a backup)',
    )
    .option('--dry-run', 'only report what differs; repair nothing')
    .option('--newer-than <duration>', 'only workflows started within this long (30m, 2h, 7d)')
    .option('--by <name>', 'operator name each repair is recorded for', defaultOperator())
    .action(async (raw: Record<string, unknown>, command: Command) => {
      const options = parseOptions(verifyOptions, raw);
      const verification = await ctx.recordVerification();
      let shown = 0;
      const report = await verification.verify({
        dryRun: options.dryRun,
        operator: options.by,
        ...(options.newerThan === undefined ? {} : { startedFrom: new Date(Date.now() - options.newerThan) }),
        progress: (sofar) => {
          const checked = sofar.payments.checked + sofar.batches.checked;
          if (checked - shown < PROGRESS_EVERY) return;
          shown = checked;
          process.stderr.write(`records verify: ${checked} checked, ${repairedOrLagging(sofar)}\n`);
        },
      });
      ctx.write(wantsJson(command.optsWithGlobals()) ? json(report) : summary(report));
      const unreadable = report.payments.unreadable + report.batches.unreadable;
      if (unreadable > 0) {
        throw new CliError(`${unreadable} workflows could not be read (is a worker running?): run verify again`);
      }
    });
  records
    .command('purge')
    .description(
      'delete the finished payment and batch records (and their operator actions) last changed longer ago than ' +
        'RECORDS_PURGE_AFTER, in chunks; their references stay taken (a re-sent one answers 409 reference_purged)',
    )
    .option('--dry-run', 'only count what would be deleted')
    .action(async (raw: Record<string, unknown>, command: Command) => {
      const { dryRun } = parseOptions(purgeOptions, raw);
      const keepMs = ctx.purgeAfterMs();
      if (keepMs === undefined) {
        throw new CliError(
          'RECORDS_PURGE_AFTER is not set: records are kept forever; set it (e.g. 400d) to purge',
          EXIT.usage,
        );
      }
      const db = ctx.records();
      const report = await purgeRecords(db, {
        before: new Date(Date.now() - keepMs),
        dryRun,
        progress: (sofar) => process.stderr.write(`records purge: ${purged(sofar)}\n`),
      });
      ctx.write(wantsJson(command.optsWithGlobals()) ? json(report) : purgeSummary(report, keepMs));
    });
}

function purged(report: PurgeReport): string {
  return `${report.payments} payments, ${report.batches} batches (${report.batchItems} items)`;
}

function purgeSummary(report: PurgeReport, keepMs: number): string {
  const related = Object.entries(report.related).map(([table, count]) => `, ${count} ${table}`);
  const head = report.dryRun ? 'dry run: would delete' : 'deleted';
  return (
    `${head} ${purged(report)}${related.join('')}: finished and last changed before ${report.before} ` +
    `(RECORDS_PURGE_AFTER ${formatDuration(keepMs)})\n`
  );
}

function repairedOrLagging(report: VerifyReport): string {
  const repaired = report.payments.repaired + report.batches.repaired;
  const differing = report.payments.lagging + report.payments.missing + report.batches.lagging + report.batches.missing;
  return report.dryRun ? `${differing} differing` : `${repaired} repaired`;
}

const COLUMNS = ['kind', 'checked', 'equal', 'lagging', 'missing', 'repaired', 'unreadable'];

function summary(report: VerifyReport): string {
  const rows = [
    { kind: 'payments', ...report.payments },
    { kind: 'batches', ...report.batches },
  ];
  const differences = report.differences.map(
    (d) => `${d.kind} ${d.id}: ${d.found}${d.repaired ? ', repaired' : ''}${d.error ? ` (${d.error})` : ''}`,
  );
  const note = report.dryRun ? ['dry run: nothing repaired'] : [];
  return [table(rows, COLUMNS).trimEnd(), ...differences, ...note].join('\n') + '\n';
}
