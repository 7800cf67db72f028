import { setTimeout as sleep } from 'node:timers/promises';
import { isUnreachable } from '../records/database';
import type { Database } from '../records/database';
import { recordApproval } from '../records/approvals';
import type { ApprovalRecord } from '../records/approvals';
import { recordOperatorAction } from '../records/operator-actions';
import type { OperatorActionInput } from '../records/operator-actions';
import { AppError } from './app-errors';

// An operator action is recorded once Temporal has applied it. Should PostgreSQL not take the row, the action is not
// undone (it cannot be: a resolution has settled the payment) nor left unrecorded in silence: the write is retried
// for a few seconds, then the caller gets `action_not_recorded`, naming what was applied (docs/records.md).

/** Waits between the tries of a record write after the action was applied: about 3.5 s in all. */
const RETRY_DELAYS_MS = [500, 1000, 2000];

/**
 * Records an action Temporal has applied (with `write`, the rows that go with it: an approval's); retried briefly,
 * then an `action_not_recorded` error that says so.
 */
export async function recordAppliedAction(
  db: Database,
  action: OperatorActionInput,
  wait: (ms: number) => Promise<unknown> = sleep,
  write: () => Promise<unknown> = () => recordOperatorAction(db, action),
): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      await write();
      return;
    } catch (err) {
      const delay = RETRY_DELAYS_MS[attempt];
      if (isUnreachable(err) && delay !== undefined) {
        await wait(delay);
        continue;
      }
      const reason = err instanceof Error ? err.message : String(err);
      throw new AppError(
        'action_not_recorded',
        `${action.action} on ${action.subjectId} by ${action.operator} was applied (${action.outcome}) but could ` +
          `not be recorded in PostgreSQL (${reason}); do not repeat it: record it by hand from this message ` +
          `(detail ${JSON.stringify(action.detail ?? {})})`,
      );
    }
  }
}

/** Records an operator's approval or rejection that Temporal has applied: its operator action with its approval row. */
export async function recordAppliedDecision(db: Database, approval: ApprovalRecord): Promise<void> {
  const { subject, subjectId, operator, decision, outcome } = approval;
  const action = { operator, action: `${subject}.${decision}`, subjectId, outcome };
  await recordAppliedAction(db, action, undefined, () => recordApproval(db, approval));
}
