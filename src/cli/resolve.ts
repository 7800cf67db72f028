import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { z } from 'zod';
import { resolutionSchema } from '../domain/requests';
import type { OpsContext } from './context';
import { parseOptions, wantsJson } from './options';
import { fields, json } from './output';

const resolveOptions = resolutionSchema.extend({ by: z.string().trim().min(1).max(100) });

/** `ops resolve <id>`: an operator settles a payment in review (refused unless it is `needs_review`). */
export function registerResolve(program: Command, ctx: OpsContext): void {
  program
    .command('resolve')
    .description('settle a payment in needs_review')
    .argument('<id>', 'payment id')
    .requiredOption('--outcome <outcome>', 'succeeded|failed')
    .requiredOption('--note <text>', 'why: recorded on the payment')
    .option('--by <name>', 'operator name recorded with the note', userInfo().username)
    .action(async (id: string, raw: Record<string, unknown>, command: Command) => {
      const { by, ...resolution } = parseOptions(resolveOptions, raw);
      const payment = await (await ctx.payments()).resolve(id, { ...resolution, operator: `${by} (ops CLI)` });
      ctx.write(
        wantsJson(command.optsWithGlobals())
          ? json(payment)
          : fields({ id: payment.id, status: payment.status, note: resolution.note }),
      );
    });
}
