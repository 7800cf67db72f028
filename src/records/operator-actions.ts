import type { Database, Queryable } from './database';

// What operators did to payments and batches, one row per action (table `operator_actions`, docs/records.md).

/** The value kept in `detail`: the action's own words (a note, an outcome), never card or personal data. */
export type ActionDetail = Record<string, string | number | boolean | null>;

/** One action as it is recorded. */
export interface OperatorActionInput {
  operator: string;
  /** `payment.resolve`, `batch.pause`, `batch.resume`, `batch.cancel`, `record.repair`, … */
  action: string;
  /** The payment or batch id. */
  subjectId: string;
  /** Whose subject; when absent, taken from the subject's payment or batch record (null without one). */
  merchantId?: string;
  detail?: ActionDetail;
  /** What it left: the subject's status after it, or `repaired`. */
  outcome: string;
}

/** One recorded action, as `ops actions` prints it. */
export interface OperatorAction {
  id: string;
  at: string;
  operator: string;
  action: string;
  subject_id: string;
  merchant_id: string | null;
  detail: ActionDetail;
  outcome: string;
}

const INSERT_ACTION = `
INSERT INTO operator_actions (operator, action, subject_id, merchant_id, detail, outcome)
VALUES ($1, $2, $3,
  COALESCE($4, (SELECT merchant_id FROM payments WHERE id = $3), (SELECT merchant_id FROM batches WHERE id = $3)),
  $5, $6)
RETURNING id::text, at, operator, action, subject_id, merchant_id, detail, outcome`;

/** Records one operator action and answers it as stored. */
export async function recordOperatorAction(db: Queryable, input: OperatorActionInput): Promise<OperatorAction> {
  const { rows } = await db.query<ActionRow>(INSERT_ACTION, [
    input.operator,
    input.action,
    input.subjectId,
    input.merchantId ?? null,
    JSON.stringify(input.detail ?? {}),
    input.outcome,
  ]);
  const row = rows[0];
  if (!row) throw new Error('operator_actions: the insert answered no row');
  return fromRow(row);
}

/** Which actions to list: every filter optional; newest first. */
export interface ActionFilter {
  subjectId?: string;
  operator?: string;
  limit: number;
}

/** The recorded actions that match, newest first. */
export async function listOperatorActions(db: Database, filter: ActionFilter): Promise<OperatorAction[]> {
  const clauses: string[] = [];
  const values: unknown[] = [];
  if (filter.subjectId !== undefined) clauses.push(`subject_id = $${values.push(filter.subjectId)}`);
  if (filter.operator !== undefined) clauses.push(`operator = $${values.push(filter.operator)}`);
  const where = clauses.length ? `WHERE ${clauses.join(' AND ')}` : '';
  const { rows } = await db.query<ActionRow>(
    `SELECT id::text, at, operator, action, subject_id, merchant_id, detail, outcome FROM operator_actions ${where}
     ORDER BY at DESC, id DESC LIMIT $${values.push(filter.limit)}`,
    values,
  );
  return rows.map(fromRow);
}

type ActionRow = Omit<OperatorAction, 'at'> & { at: Date };

function fromRow(row: ActionRow): OperatorAction {
  return { ...row, at: row.at.toISOString() };
}
