import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { BatchAction, BatchInput, ItemOutcome } from '../src/domain/batch-model';
import { CALLBACK_EVENT_TYPES, isTerminal } from '../src/domain/payment-model';
import type { PaymentInput, PaymentStatus, ProviderCallback, StatusCheck } from '../src/domain/payment-model';
import type { ApprovalDecision } from '../src/domain/approval-rules';
import { toMinorUnits } from '../src/domain/money';
import { BatchState } from '../src/workflows/batch-state';
import { PaymentState } from '../src/workflows/payment-state';
import { storedRequest } from './support/request-builders';

// Model-based tests of the two state machines the workflows drive: random sequences of everything that can reach a
// payment or a batch, in any order, with the invariants checked after every step. Pure code: 150,000 runs in seconds.

const PAYMENT_RUNS = 100_000;
const BATCH_RUNS = 50_000;
const AMOUNT = 25.5;
const TX = 'tx-1';

/** Statuses a payment may go to from each (the status diagram of docs/operating.md). */
const NEXT: Record<PaymentStatus, readonly PaymentStatus[]> = {
  awaiting_approval: ['initiating', 'failed'],
  initiating: ['pending', 'succeeded', 'failed'],
  pending: ['reconciling', 'succeeded', 'failed', 'needs_review'],
  reconciling: ['succeeded', 'failed', 'needs_review'],
  needs_review: ['succeeded', 'failed'],
  succeeded: [],
  failed: [],
};

const CALLBACK_EVENTS = new Set<string>(CALLBACK_EVENT_TYPES);

interface PaymentModel {
  /** Statuses in the order the state machine announced them. */
  statuses: PaymentStatus[];
  callbacks: number;
  initiationAnswered: boolean;
  /** The workflow times out its callback wait and ends its reconciliation once each. */
  timedOut: boolean;
  reconciled: boolean;
  resolved: boolean;
  clock: number;
  /** Whether the workflow has sent it: at once, or once approved (a bank credit above its threshold). */
  sent: boolean;
  /** Operators whose decision the Update's validator let through. */
  deciders: string[];
}

interface Real {
  state: PaymentState;
}

const now = (model: PaymentModel) => new Date(Date.UTC(2026, 10, 23) + ++model.clock * 1000);

/** After every step: no status change but along the diagram, the first outcome final, nothing important lost. */
function checkPayment(model: PaymentModel, { state }: Real): void {
  for (let i = 1; i < model.statuses.length; i++) {
    const [from, to] = [model.statuses[i - 1]!, model.statuses[i]!];
    assert.ok(NEXT[from].includes(to), `${from} → ${to} is not a transition`);
  }
  const outcome = model.statuses.find(isTerminal);
  if (outcome) assert.equal(state.status, outcome, 'the first outcome is final');
  const events = state.resource.events;
  const recorded = events.filter((e) => CALLBACK_EVENTS.has(e.type)).reduce((n, e) => n + (e.count ?? 1), 0);
  assert.ok(recorded >= model.callbacks, `${model.callbacks} callbacks, ${recorded} recorded`);
  if (state.terminal)
    assert.ok(
      events.some((e) => e.type === state.status),
      'the settling event is kept',
    );
  if (state.status === 'needs_review') assert.ok(events.some((e) => e.type === 'needs_review'));
  const approvals = state.resource.approvals ?? [];
  assert.deepEqual(
    approvals.map((a) => a.operator),
    model.deciders,
    'every decision let through is shown',
  );
  assert.ok(!approvals.some((a) => a.operator === 'acme'), 'the creator never approves');
  assert.equal(new Set(approvals.map((a) => a.operator)).size, approvals.length, 'each operator decides once');
  if (['rejected_by_operator', 'approval_expired'].includes(state.resource.failure?.code ?? '')) {
    assert.ok(!model.sent, 'nothing sent');
    assert.ok(!events.some((e) => e.type === 'initiated'));
  }
  if (model.statuses.includes('awaiting_approval') && model.sent) {
    assert.deepEqual(
      approvals.map((a) => a.decision),
      ['approve'],
      'sent only once approved',
    );
  }
  if (model.resolved)
    assert.ok(
      events.some((e) => e.type === 'resolved'),
      'the resolution is kept',
    );
  assert.ok(events.length <= 1000, 'the events stay bounded');
}

const callbackArb = fc.record({
  state: fc.constantFrom<ProviderCallback['state']>('succeeded', 'failed', 'pending', 'unknown'),
  transactionId: fc.constantFrom<string | null>(TX, null, 'tx-other'),
  amount: fc.constantFrom<number | null>(AMOUNT, null, 99),
  statusCode: fc.constantFrom<string | null>('1', '0', '2', null),
});
const checkArb = fc.record({
  state: fc.constantFrom<StatusCheck['state']>('succeeded', 'failed', 'pending', 'unknown', 'not_found'),
  transactionId: fc.constantFrom<string | null>(TX, null),
});

type PaymentCommand = fc.Command<PaymentModel, Real>;

/** One step of a payment's life: `run` drives the state machine, the invariants are checked after it. */
function step(name: string, ok: (m: PaymentModel) => boolean, act: (m: PaymentModel, r: Real) => void): PaymentCommand {
  return {
    check: ok,
    run: (m, r) => {
      act(m, r);
      checkPayment(m, r);
    },
    toString: () => name,
  };
}

const paymentCommands = [
  fc.constant(
    step(
      'initiated',
      (m) => m.sent && !m.initiationAnswered,
      (m, { state }) => {
        m.initiationAnswered = true;
        state.initiated({ transactionId: TX, statusCode: '2', message: 'pending', redirectUrl: null }, now(m));
      },
    ),
  ),
  fc.constant(
    step(
      'initiation unknown',
      (m) => m.sent && !m.initiationAnswered,
      (m, { state }) => {
        m.initiationAnswered = true;
        state.initiationUnknown('timed out', now(m));
      },
    ),
  ),
  callbackArb.map((c) =>
    step(
      `callback ${JSON.stringify(c)}`,
      () => true,
      (m, { state }) => {
        m.callbacks += 1;
        state.callback({ ...c, message: null }, now(m));
      },
    ),
  ),
  checkArb.map((c) =>
    step(
      `confirmation ${JSON.stringify(c)}`,
      (m) => m.initiationAnswered,
      (m, { state }) => {
        const callback = state.awaitingConfirmation ? state.nextUnconfirmed() : undefined;
        if (callback) state.confirmation(callback, { ...c, statusCode: null, message: null }, now(m));
      },
    ),
  ),
  fc.constant(
    step(
      'timed out',
      // Only a wait that ended without an outcome times out.
      (m) => m.initiationAnswered && !m.timedOut && !m.statuses.some(isTerminal),
      (m, { state }) => {
        m.timedOut = true;
        state.timedOut(1000, now(m));
      },
    ),
  ),
  checkArb.map((c) =>
    step(
      `status check ${JSON.stringify(c)}`,
      (m) => m.initiationAnswered,
      (m, { state }) => state.statusChecked(1, { ...c, statusCode: null, message: null }, now(m)),
    ),
  ),
  fc.constant(
    step(
      'reconciliation ends',
      (m) => m.timedOut && !m.reconciled,
      (m, { state }) => {
        m.reconciled = true;
        if (state.neverReachedProvider) state.notSent(now(m));
        if (!state.terminal) state.needsReview('reconciliation could not settle the payment', now(m));
      },
    ),
  ),
  fc.constantFrom<'succeeded' | 'failed'>('succeeded', 'failed').map((outcome) =>
    step(
      `resolve ${outcome}`,
      () => true,
      (m, { state }) => {
        // The Update's validator refuses what is not in review; what passes is applied.
        if (state.resolveRefusal()) return;
        m.resolved = true;
        state.resolve({ outcome, note: 'checked with the provider', operator: 'ada.ops' }, now(m));
      },
    ),
  ),
  fc
    .record({
      operator: fc.constantFrom('ada.ops', 'kwame.ops', 'acme'),
      decision: fc.constantFrom<ApprovalDecision>('approve', 'reject'),
    })
    .map((d) =>
      step(
        `decide ${JSON.stringify(d)}`,
        () => true,
        (m, { state }) => {
          // The Update's validator refuses what is not due or not this operator's; what passes is applied.
          if (state.decisionRefusal(d)) return;
          m.deciders.push(d.operator);
          state.decided({ ...d, at: now(m).toISOString() }, now(m));
          // The workflow sends it once approved.
          m.sent = state.status === 'initiating';
        },
      ),
    ),
  fc.constant(
    step(
      'approval window passes',
      (m) => m.statuses.at(-1) === 'awaiting_approval',
      (m, { state }) => state.approvalExpired(now(m)),
    ),
  ),
  fc.constant(
    step(
      'cancellation requested',
      () => true,
      (m, { state }) => state.cancelRequested(now(m)),
    ),
  ),
];

function newPayment(model: PaymentModel, needsApproval: boolean): PaymentState {
  const input: PaymentInput = {
    paymentId: 'payment-acme-model',
    merchantId: 'acme',
    request: { ...storedRequest(needsApproval ? 'bank_credit' : 'mobile_money_debit', '00', 'model'), amount: AMOUNT },
    createdAt: new Date(Date.UTC(2026, 10, 23)).toISOString(),
    timing: { callbackTimeoutMs: 1000, reconcileForMs: 1000, reconcileIntervalMs: 100 },
    ...(needsApproval ? { approvalsRequired: 1, approvalWindowMs: 60_000 } : {}),
  };
  return new PaymentState(input, { statusChanged: (state) => model.statuses.push(state.status) });
}

describe('state machines, model-based', () => {
  it(`a payment: ${PAYMENT_RUNS.toLocaleString('en')} random sequences of approvals, callbacks, checks, time-outs, resolutions and cancellations`, () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.commands(paymentCommands, { maxCommands: 30, size: 'large' }),
        (needsApproval, commands) => {
          const model: PaymentModel = {
            statuses: [needsApproval ? 'awaiting_approval' : 'initiating'],
            sent: !needsApproval,
            deciders: [],
            callbacks: 0,
            initiationAnswered: false,
            timedOut: false,
            reconciled: false,
            resolved: false,
            clock: 0,
          };
          fc.modelRun(() => ({ model, real: { state: newPayment(model, needsApproval) } }), commands);
        },
      ),
      { numRuns: PAYMENT_RUNS },
    );
  });

  it(`a batch: ${BATCH_RUNS.toLocaleString('en')} random sequences of starts, reports in any order, repeats and controls; the counts always add up`, () => {
    const ITEMS = 6;
    const amounts = Array.from({ length: ITEMS }, (_, i) => toMinorUnits(10 + i));
    const input: BatchInput = {
      batchId: 'batch-acme-model',
      merchantId: 'acme',
      reference: 'model',
      createdAt: new Date(0).toISOString(),
      itemCount: ITEMS,
      totalMinor: amounts.reduce((a, b) => a + b, 0),
      pageSize: ITEMS,
      concurrency: 3,
      maxRunEvents: 10_000,
      itemCheckMs: 60_000,
      timing: { callbackTimeoutMs: 1, reconcileForMs: 1, reconcileIntervalMs: 1 },
    };
    const action = fc.oneof(
      fc.record({ kind: fc.constant('start' as const) }),
      fc.record({
        kind: fc.constant('report' as const),
        item: fc.integer({ min: 0, max: ITEMS - 1 }),
        status: fc.constantFrom<ItemOutcome>('succeeded', 'failed', 'needs_review'),
      }),
      fc.record({
        kind: fc.constant('control' as const),
        action: fc.constantFrom<BatchAction>('pause', 'resume', 'cancel'),
      }),
    );
    fc.assert(
      fc.property(fc.array(action, { maxLength: 40, size: 'large' }), (actions) => {
        const state = new BatchState(input, undefined, new Date(0));
        const outcome = new Map<number, ItemOutcome>();
        for (const a of actions) {
          if (a.kind === 'start' && state.freeSlots > 0)
            state.started(`item-${state.nextIndex}`, amounts[state.nextIndex]!);
          if (a.kind === 'report' && a.item < state.nextIndex) {
            const before = outcome.get(a.item);
            // A payment reports its outcome once, and once more after a review; a repeat changes nothing.
            if (before === undefined || before === 'needs_review') outcome.set(a.item, a.status);
            state.settled({ paymentId: `item-${a.item}`, status: a.status });
          }
          if (a.kind === 'control' && !state.refusal({ action: a.action })) state.apply({ action: a.action });
          const { total, items } = state.progress();
          const stages = Object.values(items);
          assert.equal(
            stages.reduce((n, t) => n + t.count, 0),
            total.count,
            'the counts add up',
          );
          assert.equal(
            toMinorUnits(stages.reduce((n, t) => n + t.amount, 0)),
            toMinorUnits(total.amount),
            'the amounts add up',
          );
          for (const stage of ['succeeded', 'failed', 'needs_review'] as const) {
            const expected = [...outcome.values()].filter((s) => s === stage).length;
            assert.equal(items[stage].count, expected, `${stage}: every report counted once`);
          }
        }
      }),
      { numRuns: BATCH_RUNS },
    );
  });
});
