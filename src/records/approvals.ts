import type { Database } from './database';
import { inTransaction } from './database';
import { recordOperatorAction } from './operator-actions';
import type { ApprovalDecision } from '../domain/approval-rules';

// Operators' decisions on what waits for approval (table `approvals`, docs/records.md), each with its operator action.

/** One operator's decision about a batch or payment, and what it left. */
export interface ApprovalRecord {
  /** What it decides on: its operator action is `batch.approve`, `payment.reject`… */
  subject: 'batch' | 'payment';
  subjectId: string;
  operator: string;
  decision: ApprovalDecision;
  /** The subject's status after the decision. */
  outcome: string;
}

/** Records a decision and its operator action (`batch.approve`, `payment.reject`…) in one transaction; once per operator. */
export async function recordApproval(db: Database, approval: ApprovalRecord): Promise<void> {
  await inTransaction(db, async (client) => {
    const action = await recordOperatorAction(client, {
      operator: approval.operator,
      action: `${approval.subject}.${approval.decision}`,
      subjectId: approval.subjectId,
      outcome: approval.outcome,
    });
    await client.query(
      `INSERT INTO approvals (subject_id, operator, decision, at, merchant_id) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (subject_id, operator) DO NOTHING`,
      [approval.subjectId, approval.operator, approval.decision, action.at, action.merchant_id],
    );
  });
}
