import { z } from 'zod';
import { APPROVAL_DECISIONS } from '../domain/approval-rules';
import { batchProgressSchema, paymentResourceSchema } from '../domain/api-resources';
import type { PaymentCommands } from '../payments/payment-commands';
import type { Batches } from '../payments/payout-batches';
import { batchExample } from './batch-routes';
import { batchId, operatorActionErrors, paymentId } from './route-parts';
import { route } from './route-spec';

// Maker-checker: a merchant's key creates a batch or a bank credit above its threshold, an operator's approves or
// rejects it (docs/api.md).

export interface ApprovalRouteDeps {
  batches: Batches;
  payments: PaymentCommands;
}

/** A decision's body, documented as `id`: its own schema, as the document names each schema once. */
function decisionBody(id: string, rejected: string) {
  const schema = z.strictObject({
    decision: z.enum(APPROVAL_DECISIONS).describe(`\`approve\`, or \`reject\` (${rejected})`),
  });
  return { id, schema: () => schema, examples: { approve: { decision: 'approve' }, reject: { decision: 'reject' } } };
}

const NONE = { count: 0, amount: 0 };
const ZERO_ITEMS = { not_started: NONE, in_flight: NONE, succeeded: NONE, failed: NONE, needs_review: NONE };

/** `POST /v1/payout-batches/{id}/approvals`: an operator approves or rejects a batch waiting for approval. */
const decidePayoutBatch = route(
  {
    operationId: 'decidePayoutBatch',
    method: 'POST',
    path: '/v1/payout-batches/:id/approvals',
    tag: 'Payout batches',
    summary: 'Approve or reject a batch',
    description:
      'An operator decides on a batch that is `scheduled` or `awaiting_approval`, once per operator: enough ' +
      'different operators approving start it (at its `starts_at`), one rejecting ends it with nothing sent. ' +
      'Applied as a Temporal Update; recorded with the operator and the time. A 409 when no decision is due or this ' +
      'operator has already decided.',
    auth: 'operator',
    forbidden: 'only an operator key approves or rejects a batch',
    params: z.object({ id: batchId }),
    notFound: 'no such payout batch',
    body: decisionBody('PayoutBatchDecision', 'the batch ends, nothing sent'),
    answers: {
      200: {
        description: 'The batch after the decision.',
        schema: batchProgressSchema,
        example: {
          ...batchExample,
          items: { ...ZERO_ITEMS, not_started: batchExample.total },
          approvals_required: 1,
          approvals: [{ operator: 'ada.ops', decision: 'approve', at: '2026-05-04T10:05:00.000Z' }],
          approval_expires_at: '2026-05-05T10:00:00.000Z',
        },
      },
    },
    errors: { ...operatorActionErrors, 403: ['forbidden'] },
  },
  async ({ caller, params, body, request }, { batches }: ApprovalRouteDeps) => {
    const batch = await batches.decide(params.id, body.decision, caller.name);
    request.log.info({ batchId: batch.id, decision: body.decision, operator: caller.name }, 'payout batch decision');
    return batch;
  },
);

/** `POST /v1/payments/{id}/approvals`: an operator approves or rejects a bank credit waiting for approval. */
const decidePayment = route(
  {
    operationId: 'decidePayment',
    method: 'POST',
    path: '/v1/payments/:id/approvals',
    tag: 'Operators',
    summary: 'Approve or reject a payment',
    description:
      'An operator other than its creator decides on a bank credit that is `awaiting_approval` (above its ' +
      "merchant's `credit` threshold): `approve` sends it (`initiating`), `reject` fails it " +
      '(`failure.code: rejected_by_operator`) with nothing sent. Applied as a Temporal Update; recorded with the ' +
      'operator and the time. A 409 when no decision is due.',
    auth: 'operator',
    forbidden: 'only an operator key approves or rejects a payment',
    params: z.object({ id: paymentId }),
    notFound: 'no such payment',
    body: decisionBody('PaymentDecision', 'the payment fails, nothing sent'),
    answers: {
      200: {
        description: 'The payment after the decision.',
        schema: paymentResourceSchema,
        example: {
          id: 'payment-acme-refund-77',
          type: 'bank_credit',
          reference: 'refund-77',
          status: 'initiating',
          amount: 250,
          created_at: '2026-05-04T10:00:00.000Z',
          updated_at: '2026-05-04T10:05:00.000Z',
          provider: { transaction_id: null, status_code: null, message: null },
          next_action: null,
          failure: null,
          approvals: [{ operator: 'ada.ops', decision: 'approve', at: '2026-05-04T10:05:00.000Z' }],
          approval_expires_at: '2026-05-05T10:00:00.000Z',
          events: [
            { at: '2026-05-04T10:05:00.000Z', type: 'approval_decided', outcome: 'approve', message: 'by ada.ops' },
          ],
        },
      },
    },
    errors: { ...operatorActionErrors, 403: ['forbidden'] },
  },
  async ({ caller, params, body, request }, { payments }: ApprovalRouteDeps) => {
    const payment = await payments.decide(params.id, body.decision, caller.name);
    request.log.info({ paymentId: payment.id, decision: body.decision, operator: caller.name }, 'payment decision');
    return payment;
  },
);

/** The approval routes, in the order the OpenAPI document lists them. */
export const APPROVAL_ROUTES = [decidePayoutBatch, decidePayment];
