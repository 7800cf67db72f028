import { openDatabase } from '../../src/records/database';
import type { Database } from '../../src/records/database';
import { OPERATOR_KEY, OPERATOR_NAME, startStack, testEnvironment } from './test-stack';
import type { Stack } from './test-stack';

/** A second operator: some decisions need two different ones, and the first may not decide twice. */
export const SECOND_OPERATOR = 'kwame.ops';
export const SECOND_KEY = 'ok_second_0123456789abcdef';

/**
 * A stack whose merchants have these APPROVAL_THRESHOLDS, an approval window short enough to see expiry, and two
 * operators; with a connection to its records, to read the approvals and operator actions written.
 */
export async function startApprovalStack(thresholds: string, windowS: number): Promise<{ stack: Stack; db: Database }> {
  const stack = await startStack({
    env: {
      APPROVAL_THRESHOLDS: thresholds,
      APPROVAL_WINDOW: `${windowS}s`,
      OPERATOR_API_KEYS: `${OPERATOR_NAME}:${OPERATOR_KEY},${SECOND_OPERATOR}:${SECOND_KEY}`,
    },
  });
  return { stack, db: openDatabase(testEnvironment().databaseUrl, { max: 2 }) };
}
