import type { Command } from 'commander';
import { resolutionSchema } from '../domain/requests';
import type { OpsContext } from './ops-context';
import { defaultOperator, operatorOption, parseOptions, wantsJson } from './options';
import { fields, json } from './output';

const resolveOptions = resolutionSchema.extend({ by: operatorOption });

/** `ops resolve <id>`: an operator settles a payment in review (refused unless it is `needs_review`). */
export function registerResolve(program: Command, ctx: OpsContext): void {
  program
    .command('resolve')
    .description('settle a payment in needs_review')
    .argument('<id>', 'payment id')
    .requiredOption('--outcome <outcome>', 'succeeded|failed')
    .requiredOption('--note <text>', 'why: recorded on the payment')
    .option('--by <name>', 'operator name recorded with the note and the action', defaultOperator())
    .action(async (id: string, raw: Record<string, unknown>, command: Command) => {
      const { by, ...resolution } = parseOptions(resolveOptions, raw);
      // Recorded as the API records an operator key's name: the `resolved` event says who and why.
      const payment = await (await ctx.paymentCommands()).resolve(id, { ...resolution, operator: by });
      ctx.write(
        wantsJson(command.optsWithGlobals())
          ? json(payment)
          : fields({ id: payment.id, status: payment.status, note: resolution.note }),
      );
    });
}
