import type { Command } from 'commander';
import type { PaymentResource } from '../domain/payment-model';
import { listOperatorActions } from '../records/operator-actions';
import type { OperatorAction } from '../records/operator-actions';
import { actionTable } from './action-list';
import type { OpsContext } from './ops-context';
import { wantsJson } from './options';
import { decisions, fields, json, table, time } from './output';
import type { Row } from './output';

/**
 * `ops show <id>`: the payment, its own timeline of events, the steps of its Temporal history and, with DATABASE_URL,
 * the operator actions recorded on it.
 */
export function registerShow(program: Command, ctx: OpsContext): void {
  program
    .command('show')
    .description('a payment with its timeline and its workflow history')
    .argument('<id>', 'payment id (the workflow ID), e.g. payment-demo-order-1001')
    .option('--no-history', 'leave out the Temporal history')
    .action(async (id: string, options: { history: boolean }, command: Command) => {
      const { payment, workflow, history } = await (await ctx.paymentReads()).inspect(id, options.history);
      const actions = await recordedActions(ctx, id);
      if (wantsJson(command.optsWithGlobals())) {
        ctx.write(json({ payment, workflow, history, ...(actions ? { actions } : {}) }));
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
      if (actions) ctx.write(`\nOperator actions\n${actionTable(actions)}`);
    });
}

/** The operator actions on the payment when DATABASE_URL is set; without them (unset, unreachable) it is shown all the same. */
async function recordedActions(ctx: OpsContext, id: string): Promise<OperatorAction[] | undefined> {
  const db = ctx.recordsIfSet();
  if (!db) return undefined;
  return listOperatorActions(db, { subjectId: id, limit: 100 }).catch((err: unknown) => {
    process.stderr.write(`ops: operator actions not shown: ${err instanceof Error ? err.message : String(err)}\n`);
    return undefined;
  });
}

/** A bank credit's approvals and their deadline, when it needed approval (`ops show`, `ops approve`). */
export function approvalFields(payment: PaymentResource): Row {
  if (!payment.approvals) return {};
  return { approvals: decisions(payment.approvals), 'approve by': time(payment.approval_expires_at) };
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
    ...approvalFields(payment),
    workflow: workflowStatus,
  });
}
