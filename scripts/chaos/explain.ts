import type { PaymentType } from '../../src/domain/requests';
import type { CallbackHistory } from './callback-faults';
import type { ProviderFault } from './provider-faults';

export type FinalStatus = 'succeeded' | 'failed' | 'needs_review';

/** What the harness saw from outside of one payment: the provider's ledger, the proxies, the process kills. */
export interface PaymentFacts {
  type: PaymentType;
  /** The sandbox scenario (the last two digits of the phone or account number). */
  scenario: string;
  /** Initiation requests the provider's ledger received for it. */
  received: number;
  /** The proxy's fault on each of its initiation requests. */
  initiationFaults: Array<ProviderFault | 'none'>;
  /** A worker died, or Temporal restarted, while its initiation's answer may have been on its way. */
  answerMaybeLost: boolean;
  /**
   * A worker died, or Temporal or Redis restarted, during its reconciliation: with the run's short window (30 s) that
   * can cost it the status checks that would have settled it.
   */
  reconciliationHit: boolean;
  callbacks: CallbackHistory;
}

/** The final statuses the scenario and the faults explain, and the faults that touched the payment. */
export interface Explanation {
  /** Where the scenario ends without faults. */
  expected: FinalStatus;
  allowed: FinalStatus[];
  causes: string[];
}

const STATUS_FROM_CALLBACK: Record<string, FinalStatus> = { '1': 'succeeded', '0': 'failed' };

/** Where a payment of this scenario ends when nothing goes wrong (PRODUCT.md's sandbox table). */
export function scenarioOutcome(type: PaymentType, scenario: string): FinalStatus {
  switch (scenario) {
    case '11':
    case '88':
      return 'failed';
    case '33':
      return 'needs_review';
    case '44':
      // A 500 that created nothing: only bank credits can be looked up by reference, and fail as never sent.
      return type === 'bank_credit' ? 'failed' : 'needs_review';
    default:
      return 'succeeded';
  }
}

/** What the provider's status query would say once the scenario has played out. */
function statusQueryOutcome(scenario: string): FinalStatus[] {
  if (scenario === '11') return ['failed'];
  if (scenario === '33') return ['needs_review'];
  // Success, then a reversal: a query before it says succeeded, after it failed.
  if (scenario === '77') return ['succeeded', 'failed'];
  return ['succeeded'];
}

/** The outcomes of a payment the provider created a transaction for. */
function createdOutcomes(facts: PaymentFacts, answerSeen: boolean): FinalStatus[] {
  const first = facts.callbacks.delivered[0];
  if (first) {
    const byCallback = STATUS_FROM_CALLBACK[first.status];
    if (!byCallback) return ['needs_review'];
    // 77's reversal may come first (reordered), or a status query may see either side before any callback arrives.
    if (facts.scenario === '77' && (facts.callbacks.faults.length > 0 || !answerSeen)) return ['succeeded', 'failed'];
    return [byCallback];
  }
  // No callback reached the server: only a status query can settle it, and without the transaction id (its answer
  // was lost) only a bank credit can be looked up, by reference.
  if (answerSeen || facts.type === 'bank_credit') return statusQueryOutcome(facts.scenario);
  return ['needs_review'];
}

/** The outcomes when the provider created nothing (never received the request, a 500 or a 400 answer). */
function notCreatedOutcomes(facts: PaymentFacts, answerSeen: boolean): FinalStatus[] {
  if (facts.scenario === '88' && facts.received > 0 && answerSeen) return ['failed'];
  return facts.type === 'bank_credit' ? ['failed'] : ['needs_review'];
}

/** The final statuses a payment may have, given its scenario and what the harness did to it. */
export function explain(facts: PaymentFacts): Explanation {
  const created = facts.received > 0 && facts.scenario !== '44' && facts.scenario !== '88';
  const faultLost = facts.initiationFaults.includes('timeout') || facts.scenario === '55';
  const outcomes = (answerSeen: boolean) =>
    created ? createdOutcomes(facts, answerSeen) : notCreatedOutcomes(facts, answerSeen);
  const allowed = new Set<FinalStatus>(outcomes(!faultLost));
  if (facts.answerMaybeLost) for (const status of outcomes(false)) allowed.add(status);
  if (facts.reconciliationHit) allowed.add('needs_review');

  const causes = [
    ...facts.initiationFaults.filter((f) => f !== 'none').map((f) => `initiation ${f}`),
    ...facts.callbacks.faults.map((f) => `callback ${f}`),
    ...(facts.answerMaybeLost ? ['a kill or restart during initiation'] : []),
    ...(facts.reconciliationHit ? ['a kill or restart during reconciliation'] : []),
  ];
  return { expected: scenarioOutcome(facts.type, facts.scenario), allowed: [...allowed], causes: [...new Set(causes)] };
}
