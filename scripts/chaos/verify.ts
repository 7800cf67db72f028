import type { BatchProgress } from '../../src/domain/batch-model';
import type { PaymentResource } from '../../src/domain/payment-model';
import type { PaymentType } from '../../src/domain/requests';
import type { CallbackHistory } from './callback-faults';
import { explain } from './explain';
import type { FinalStatus } from './explain';
import type { AnswerTally } from './merchant';
import type { ProviderRequestRecord } from './provider-faults';

/** One payment or batch item the run sent. */
export interface Planned {
  id: string;
  type: PaymentType;
  scenario: string;
  body: unknown;
  /** Part of the batch (its POST is the batch's). */
  batchItem: boolean;
}

/** When a process was down, from the moment it was killed or stopped until it was back. */
export interface Outage {
  at: number;
  until: number;
}

/** Everything the run saw from outside. */
export interface Observed {
  plan: Planned[];
  /** Final payments by id, as GET answered them. */
  finals: Map<string, PaymentResource>;
  batch: BatchProgress | undefined;
  /** The payment id of each initiation request and each transaction in the provider's ledger. */
  ledger: { requests: Array<string | undefined>; transactions: Array<string | undefined> };
  providerRequests: ProviderRequestRecord[];
  callbacks: Map<string, CallbackHistory>;
  outages: Outage[];
  tally: AnswerTally;
}

export interface Verdict {
  problems: string[];
  figures: string[];
  /** Payment by payment: its status, what was allowed and why. */
  report: unknown[];
}

/** A kill or restart this close to an initiation may have cost it its answer. */
const INITIATION_WINDOW_MS = { before: 1000, after: 3000 };
/** How long a payment may wait for its initiation without faults (the server's INITIATION_WAIT). */
const INITIATION_WAIT_MS = 5000;
const NO_CALLBACKS: CallbackHistory = { faults: [], delivered: [] };
/** The events by which a payment's workflow records how its initiation went. */
const INITIATION_OUTCOMES = new Set<string>(['initiated', 'initiation_rejected', 'initiation_unknown']);
const FINAL_EVENTS = new Set<string>(['succeeded', 'failed', 'needs_review']);

/** `name n, name n` for the values, by key. */
export function countBy<T>(values: T[], key: (value: T) => string): string {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(key(value), (counts.get(key(value)) ?? 0) + 1);
  return [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
}

function countIds(ids: Array<string | undefined>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const id of ids) if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

function listed(label: string, values: string[], separator = ', '): string[] {
  return values.length ? [`${label} ${values.length}: ${values.slice(0, 10).join(separator)}`] : [];
}

/** Checks every payment, the batch and the provider's ledger; every required zero must be zero. */
export function verify(observed: Observed): Verdict {
  const { plan, finals, batch, tally } = observed;
  const requests = countIds(observed.ledger.requests);
  const transactions = countIds(observed.ledger.transactions);
  const known = new Set(plan.map((p) => p.id));
  const stuck = plan.filter((p) => !finals.has(p.id));
  const lost = [...new Set([...observed.ledger.requests, ...observed.ledger.transactions])].filter(
    (id) => !id || !known.has(id),
  );
  const doubles = plan.filter((p) => (requests.get(p.id) ?? 0) > 1 || (transactions.get(p.id) ?? 0) > 1);
  const initiationsOf = new Map<string, ProviderRequestRecord[]>();
  for (const record of observed.providerRequests) {
    if (record.paymentId) initiationsOf.set(record.paymentId, [...(initiationsOf.get(record.paymentId) ?? []), record]);
  }

  let asScenario = 0;
  let otherwise = 0;
  /** The causes behind each payment that ended otherwise than its scenario, as its faults explain. */
  const causes: string[] = [];
  const unexplained: string[] = [];
  const report: unknown[] = [];
  for (const p of plan) {
    const payment = finals.get(p.id);
    if (!payment) continue;
    const initiations = initiationsOf.get(p.id) ?? [];
    // A kill or restart between its creation and the moment its workflow recorded how the initiation went (however
    // slow a loaded machine made that) may have cost it the provider's answer.
    const createdAt = Date.parse(payment.created_at);
    const recorded = payment.events.find((e) => INITIATION_OUTCOMES.has(e.type));
    const from = Math.min(createdAt, ...initiations.map((r) => r.at)) - INITIATION_WINDOW_MS.before;
    const to = Math.max(
      recorded ? Date.parse(recorded.at) : createdAt + INITIATION_WAIT_MS,
      ...initiations.map((r) => r.at + INITIATION_WINDOW_MS.after),
    );
    const answerMaybeLost = observed.outages.some((o) => o.at <= to && o.until >= from);
    const reconciling = payment.events.find((e) => e.type === 'timed_out');
    const settled = payment.events.find((e) => FINAL_EVENTS.has(e.type));
    const reconciliationHit =
      reconciling !== undefined &&
      observed.outages.some(
        (o) => o.until >= Date.parse(reconciling.at) && o.at <= Date.parse(settled?.at ?? reconciling.at),
      );
    const callbacks = observed.callbacks.get(p.id) ?? NO_CALLBACKS;
    const explanation = explain({
      type: p.type,
      scenario: p.scenario,
      received: requests.get(p.id) ?? 0,
      initiationFaults: initiations.map((r) => r.fault),
      answerMaybeLost,
      reconciliationHit,
      callbacks,
    });
    const status = payment.status as FinalStatus;
    report.push({
      id: p.id,
      type: p.type,
      scenario: p.scenario,
      status,
      ...explanation,
      initiations,
      callbacks,
      events: payment.events,
    });
    if (status === explanation.expected) asScenario++;
    else if (explanation.allowed.includes(status)) {
      otherwise++;
      causes.push(...explanation.causes);
    } else {
      const why = explanation.causes.join(', ') || 'no faults';
      const events = payment.events.map((e) => e.type).join(' ');
      unexplained.push(
        `${p.id} ${p.type}/${p.scenario}: ${status}, expected ${explanation.allowed.join(' or ')} (${why}): ${events}`,
      );
    }
  }

  // The batch's tallies against its items one by one.
  const items = plan.filter((p) => p.batchItem).map((p) => finals.get(p.id));
  const batchCounts = (['succeeded', 'failed', 'needs_review'] as const).map((stage) => {
    const inStage = items.filter((p) => p?.status === stage);
    const amount = inStage.reduce((sum, p) => sum + (p?.amount ?? 0), 0);
    const tallied = batch?.items[stage];
    const exact = tallied?.count === inStage.length && Math.abs(tallied.amount - amount) < 0.005;
    return { stage, counted: tallied?.count, items: inStage.length, exact };
  });

  const problems = [
    ...(batch?.status === 'completed' ? [] : [`the batch is ${batch?.status ?? 'unknown'}, not completed`]),
    ...batchCounts.filter((c) => !c.exact).map((c) => `batch ${c.stage}: counted ${c.counted}, items ${c.items}`),
    ...listed(
      'stuck',
      stuck.map((p) => `${p.id} ${p.type}/${p.scenario}`),
    ),
    ...listed(
      'lost (in the provider ledger, unknown here)',
      lost.map((id) => id ?? '?'),
    ),
    ...listed(
      'double initiations',
      doubles.map((p) => p.id),
    ),
    ...listed('unexplained', unexplained, '\n  '),
    ...listed('wrong answers', tally.wrong, '\n  '),
    ...listed('unresolved requests', tally.unresolved),
  ];

  const faulted = observed.providerRequests.filter((r) => r.fault !== 'none');
  const share = (100 * faulted.length) / Math.max(1, observed.providerRequests.length);
  const callbackFaults = [...observed.callbacks.values()].flatMap((h) => h.faults);
  const taken = [...observed.callbacks.values()].reduce((n, h) => n + h.delivered.length, 0);
  const all = [...finals.values()];
  const figures = [
    `provider requests ${observed.providerRequests.length}: faults ${faulted.length} (${share.toFixed(1)} %: ${countBy(faulted, (r) => `${r.kind} ${r.fault}`)})`,
    `callbacks: ${callbackFaults.length} faults (${countBy(callbackFaults, (f) => f)}); ${taken} taken by the server`,
    `API answers: ${tally.correct} correct; ${tally.unavailable} × 503 and ${tally.connectionLost} lost connections, each resolved by a retry with the same reference; wrong ${tally.wrong.length}, unresolved ${tally.unresolved.length}`,
    `PostgreSQL unreachable: ${tally.recordsUnavailable} × 503, the slowest in ${tally.slowestRecords503Ms} ms (2 s promised)`,
    `settled ${all.length}/${plan.length} (${countBy(all, (p) => p.status)}): as the scenario says ${asScenario}, otherwise but explained by faults ${otherwise}, unexplained ${unexplained.length}`,
    ...(otherwise ? [`faults behind those ${otherwise}: ${countBy(causes, (c) => c)}`] : []),
    `batch ${batch?.status ?? '?'}: ${batchCounts.map((c) => `${c.stage} ${c.counted}`).join(', ')} (${batchCounts.every((c) => c.exact) ? 'exact' : 'NOT exact'} against its ${items.length} items)`,
    `ledger: ${requests.size} payments initiated upstream, ${transactions.size} transactions`,
    `lost ${lost.length} · stuck ${stuck.length} · double initiations ${doubles.length} · unexplained ${unexplained.length} · wrong answers ${tally.wrong.length}`,
  ];
  return { problems, figures, report };
}
