export type Scenario =
  | 'success'
  | 'failure'
  | 'silent_success'
  | 'silent_pending'
  | 'server_error'
  | 'slow_response'
  | 'triple_callback'
  | 'success_then_failure'
  | 'rejected'
  | 'callback_first';

export type TransactionKind = 'mobile_money' | 'card' | 'bank_credit';

/** A status change the sandbox will make, optionally reported to the callback URL. */
export interface PlannedOutcome {
  status: '1' | '0';
  message: string;
  /** false: the status changes but nothing is called back (scenario 22). */
  notify: boolean;
  /** How many callback delays after the start of the plan it happens. */
  afterDelays: number;
}

const BY_DIGITS: Record<string, Scenario> = {
  '11': 'failure',
  '22': 'silent_success',
  '33': 'silent_pending',
  '44': 'server_error',
  '55': 'slow_response',
  '66': 'triple_callback',
  '77': 'success_then_failure',
  '88': 'rejected',
  '99': 'callback_first',
};

export const SUCCESS_MESSAGE = 'Transaction successful';
export const FAILURE_MESSAGE = 'Transaction failed';
export const REVERSED_MESSAGE = 'Transaction reversed';
export const THREE_DS_DECLINED_MESSAGE = '3-D Secure authentication declined';

/** Picks the scenario from the last two digits of a phone or account number. */
export function scenarioFor(number: string): Scenario {
  return BY_DIGITS[number.slice(-2)] ?? 'success';
}

/** What happens to a transaction once it can proceed (after 3-D Secure for cards). */
export function plannedOutcomes(scenario: Scenario): PlannedOutcome[] {
  const success = (afterDelays: number): PlannedOutcome => ({
    status: '1',
    message: SUCCESS_MESSAGE,
    notify: true,
    afterDelays,
  });
  switch (scenario) {
    case 'failure':
      return [{ status: '0', message: FAILURE_MESSAGE, notify: true, afterDelays: 1 }];
    case 'silent_success':
      return [{ ...success(1), notify: false }];
    case 'silent_pending':
    case 'server_error':
    case 'rejected':
      return [];
    case 'triple_callback':
      return [success(1), success(2), success(3)];
    case 'success_then_failure':
      // A reversal comes well after the success, as a provider's would: after the success is confirmed (by the status
      // query too), not racing it, even on a busy machine (25 delays: 5 s in the tests, where a loaded machine's confirmations took over 1.8 s).
      return [success(1), { status: '0', message: REVERSED_MESSAGE, notify: true, afterDelays: 25 }];
    case 'callback_first':
      return [success(0)];
    case 'success':
    case 'slow_response':
      return [success(1)];
  }
}

const REJECTIONS: Record<TransactionKind, { code: string; message: string }> = {
  mobile_money: { code: 'E_INSUFFICIENT_FUNDS', message: 'Insufficient funds in wallet' },
  card: { code: 'E_CARD_DECLINED', message: 'Card declined by issuer' },
  bank_credit: { code: 'E_ACCOUNT_CLOSED', message: 'Account closed' },
};

/** The error code and message scenario 88 answers with. */
export function rejectionFor(kind: TransactionKind): { code: string; message: string } {
  return REJECTIONS[kind];
}
