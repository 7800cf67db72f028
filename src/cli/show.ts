import type { Command } from 'commander';
import type { PaymentResource } from '../domain/payment-model';
import type { OpsContext } from './ops-context';
import { wantsJson } from './options';
import { fields, json, table, time } from './output';

/** `ops show <id>`: the payment, its own timeline of events, and the steps of its Temporal history. */
export function registerShow(program: Command, ctx: OpsContext): void {
  program
    .command('show')
    .description('a payment with its timeline and its workflow history')
    .argument('<id>', 'payment id (the workflow ID), e.g. payment-demo-order-1001')
    .option('--no-history', 'leave out the Temporal history')
    .action(async (id: string, options: { history: boolean }, command: Command) => {
      const { payment, workflow, history } = await (await ctx.paymentReads()).inspect(id, options.history);
      if (wantsJson(command.optsWithGlobals())) {
        ctx.write(json({ payment, workflow, history }));
        return;
      }
      ctx.write(paymentFields(payment, workflow.status));
      ctx.write('\nTimeline\n');
      ctx.write(
        table(
          payment.events.map((e) => ({ ...e, at: time(e.at) })),
          ['at', 'type', 'outcome', 'status_code', 'message'],
        ),
      );
      if (history) {
        ctx.write('\nTemporal history\n');
        ctx.write(
          table(
            history.map((h) => ({ ...h, at: time(h.at) })),
            ['at', 'step'],
          ),
        );
      }
    });
}

function paymentFields(payment: PaymentResource, workflowStatus: string): string {
  const { provider, failure } = payment;
  return fields({
    id: payment.id,
    status: payment.status,
    type: payment.type,
    reference: payment.reference,
    amount: payment.amount,
    card: payment.card ? `•••• ${payment.card.last4}` : undefined,
    created: time(payment.created_at),
    updated: time(payment.updated_at),
    'provider transaction': provider.transaction_id,
    'provider status': [provider.status_code, provider.message].filter(Boolean).join(' ') || undefined,
    failure: failure ? `${failure.code}: ${failure.message}` : undefined,
    'next action': payment.next_action ? `redirect to ${payment.next_action.url}` : undefined,
    workflow: workflowStatus,
  });
}
