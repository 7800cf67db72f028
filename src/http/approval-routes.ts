import { z } from 'zod';
import { APPROVAL_DECISIONS } from '../domain/approval-rules';
import { batchProgressSchema } from '../domain/api-resources';
import type { Batches } from '../payments/payout-batches';
import { batchExample } from './batch-routes';
import { batchId, operatorActionErrors } from './route-parts';
import { route } from './route-spec';

// Maker-checker: a merchant's key creates a batch, an operator's approves or rejects it (docs/api.md).

export interface ApprovalRouteDeps {
  batches: Batches;
}

const decisionRequest = z.strictObject({
  decision: z.enum(APPROVAL_DECISIONS).describe('`approve`, or `reject` (the batch ends, nothing sent)'),
});

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
    body: {
      id: 'PayoutBatchDecision',
      schema: () => decisionRequest,
      examples: { approve: { decision: 'approve' }, reject: { decision: 'reject' } },
    },
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

/** The approval routes, in the order the OpenAPI document lists them. */
export const APPROVAL_ROUTES = [decidePayoutBatch];
