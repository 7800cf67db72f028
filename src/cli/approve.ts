import type { Command } from 'commander';
import { z } from 'zod';
import type { ApprovalDecision } from '../domain/approval-rules';
import type { OpsContext } from './ops-context';
import { defaultOperator, operatorOption, parseOptions, wantsJson } from './options';
import { fields, json } from './output';
import { approvalFields } from './show';

const byOptions = z.object({ by: operatorOption });

/**
 * `ops approve <id>` and `ops reject <id>`: an operator decides on a bank credit waiting for approval (refused unless
 * it is `awaiting_approval`, and for the merchant that made it). Approved, it is sent; rejected, it fails, nothing sent.
 */
export function registerApprove(program: Command, ctx: OpsContext): void {
  for (const [decision, description] of [
    ['approve', 'approve a bank credit awaiting_approval: it is sent (each operator once; its merchant never)'],
    ['reject', 'reject a bank credit awaiting_approval: it fails, nothing sent'],
  ] as const satisfies readonly (readonly [ApprovalDecision, string])[]) {
    program
      .command(decision)
      .description(description)
      .argument('<id>', 'payment id')
      .option('--by <name>', 'operator name recorded with the decision', defaultOperator())
      .action(async (id: string, raw: Record<string, unknown>, command: Command) => {
        const { by } = parseOptions(byOptions, raw);
        const payment = await (await ctx.paymentCommands()).decide(id, decision, by);
        const failure = payment.failure ? `${payment.failure.code}: ${payment.failure.message}` : undefined;
        ctx.write(
          wantsJson(command.optsWithGlobals())
            ? json(payment)
            : fields({ id: payment.id, status: payment.status, ...approvalFields(payment), failure }),
        );
      });
  }
}
