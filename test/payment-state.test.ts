import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PaymentInput, PaymentStatus, ProviderCallback } from '../src/domain/payment-model';
import { PaymentState } from '../src/workflows/payment-state';
import { storedRequest } from './support/request-builders';

const now = new Date('2026-11-21T10:00:00Z');
const ack = { transactionId: '9', statusCode: '2', message: 'pending', redirectUrl: null };
const callback = (state: ProviderCallback['state'], amount: number | null = null): ProviderCallback => ({
  state,
  transactionId: '9',
  statusCode: state === 'succeeded' ? '1' : '0',
  message: state,
  amount,
});

function newState(type: 'mobile_money_debit' | 'card_payment' = 'mobile_money_debit') {
  const statuses: PaymentStatus[] = [];
  const input: PaymentInput = {
    paymentId: 'p1',
    merchantId: 'acme',
    request: storedRequest(type, '00', 'r1'),
    createdAt: now.toISOString(),
    timing: { callbackTimeoutMs: 1, reconcileForMs: 1, reconcileIntervalMs: 1 },
  };
  return { state: new PaymentState(input, { statusChanged: (s) => statuses.push(s.status) }), statuses };
}

describe('payment state machine', () => {
  it('initiating → pending → succeeded on a callback, once the status query had its say', () => {
    const { state, statuses } = newState();
    state.initiated(ack, now);
    state.callback(callback('succeeded', 12.5), now);
    assert.deepEqual(statuses, ['pending'], 'a callback is a hint until confirmed');
    state.confirmation(state.nextUnconfirmed()!, null, now);
    assert.deepEqual(statuses, ['pending', 'succeeded'], 'without a status query the matching callback stands');
    assert.equal(state.resource.provider.transaction_id, '9');
  });

  it('a callback before the initiation answer is judged by the answer, which still records the provider data', () => {
    const { state } = newState('card_payment');
    state.callback(callback('succeeded', 40), now);
    assert.equal(state.status, 'initiating', 'nothing acknowledged to match yet');
    state.initiated({ ...ack, redirectUrl: 'https://3ds' }, now);
    assert.equal(state.awaitingConfirmation, true);
    state.confirmation(state.nextUnconfirmed()!, null, now);
    assert.equal(state.status, 'succeeded');
    assert.equal(state.resource.provider.status_code, '2');
    // Settled after the acknowledgement (once confirmed), as any card payment: its redirect is kept, as then.
    assert.deepEqual(state.resource.next_action, { type: 'redirect', url: 'https://3ds' });
    assert.equal(state.resource.card?.last4, '1111');
  });

  it('the first terminal outcome wins; duplicates and contradictions are recorded', () => {
    const { state } = newState();
    state.initiated(ack, now);
    state.callback(callback('succeeded', 12.5), now);
    state.confirmation(state.nextUnconfirmed()!, null, now);
    state.callback(callback('succeeded', 12.5), now);
    state.callback(callback('failed'), now);
    assert.equal(state.status, 'succeeded');
    const types = state.resource.events.map((e) => e.type);
    assert.deepEqual(types, [
      'initiated',
      'callback_unconfirmed',
      'callback_received',
      'succeeded',
      'callback_duplicate',
      'callback_contradicting',
    ]);
  });

  it('a callback for another amount does not settle the payment', () => {
    const { state } = newState();
    state.initiated(ack, now);
    state.callback(callback('succeeded', 1000), now);
    assert.equal(state.status, 'pending');
    assert.equal(state.resource.events.at(-1)?.type, 'callback_rejected');
  });

  it('a callback for another transaction than acknowledged is rejected and fills in nothing', () => {
    const { state } = newState();
    state.initiated(ack, now);
    state.callback({ ...callback('succeeded', 12.5), transactionId: '10' }, now);
    assert.equal(state.status, 'pending');
    assert.equal(state.resource.provider.transaction_id, '9');
    assert.match(state.resource.events.at(-1)?.message ?? '', /transaction 10 is not the acknowledged 9/);
  });

  it('a success without an amount, or without a transaction id, waits for the status query', () => {
    for (const doubtful of [callback('succeeded'), { ...callback('succeeded', 12.5), transactionId: null }]) {
      const { state } = newState();
      state.initiated(ack, now);
      state.callback(doubtful, now);
      assert.equal(state.status, 'pending');
      assert.equal(state.awaitingConfirmation, true);
      const next = state.nextUnconfirmed();
      assert.deepEqual(next, doubtful);
      state.confirmation(doubtful, { state: 'pending', transactionId: '9', statusCode: '2', message: null }, now);
      assert.equal(state.status, 'pending', 'the provider does not confirm it');
      state.confirmation(doubtful, { state: 'succeeded', transactionId: '9', statusCode: '1', message: null }, now);
      assert.equal(state.status, 'succeeded');
    }
  });

  it('without a status query, a matching success without an amount is taken; an unmatched one is not', () => {
    const { state } = newState();
    state.initiated(ack, now);
    state.confirmation({ ...callback('succeeded'), transactionId: null }, null, now);
    assert.equal(state.status, 'pending');
    state.confirmation(callback('succeeded'), null, now);
    assert.equal(state.status, 'succeeded');
  });

  it('a status query that disagrees with a settling callback wins when final, about this transaction and amount', () => {
    const check = (state: 'succeeded' | 'failed' | 'pending', amount: number | null, transactionId = '9') => ({
      state,
      transactionId,
      statusCode: state === 'succeeded' ? '1' : '0',
      message: null,
      amount,
    });
    // A leaked URL used with status=0: the provider says the debit went through.
    const forgedFailure = newState();
    forgedFailure.state.initiated(ack, now);
    forgedFailure.state.callback(callback('failed', 12.5), now);
    forgedFailure.state.confirmation(forgedFailure.state.nextUnconfirmed()!, check('succeeded', 12.5), now);
    assert.equal(forgedFailure.state.status, 'succeeded');
    assert.match(
      forgedFailure.state.resource.events.at(-2)?.message ?? '',
      /status query says succeeded, which settles/,
    );
    // A forged success with the exact amount: the provider still has it pending.
    const forgedSuccess = newState();
    forgedSuccess.state.initiated(ack, now);
    forgedSuccess.state.callback(callback('succeeded', 12.5), now);
    forgedSuccess.state.confirmation(forgedSuccess.state.nextUnconfirmed()!, check('pending', 12.5), now);
    assert.equal(forgedSuccess.state.status, 'pending');
    assert.equal(forgedSuccess.state.resource.events.at(-1)?.type, 'callback_rejected');
    // An answer for another amount, or another transaction, settles nothing.
    for (const answer of [check('succeeded', 99), check('succeeded', 12.5, '10'), check('failed', 1)]) {
      const { state } = newState();
      state.initiated(ack, now);
      state.callback(callback('succeeded', 12.5), now);
      state.confirmation(state.nextUnconfirmed()!, answer, now);
      assert.equal(state.status, 'pending', JSON.stringify(answer));
      assert.equal(state.resource.events.at(-1)?.type, 'callback_rejected');
    }
  });

  it('a fork changes apart from its state, which can then take on all it holds', () => {
    const { state, statuses } = newState();
    state.initiated(ack, now);
    state.callback(callback('succeeded', 12.5), now);
    state.callback(callback('failed'), now);
    const before = JSON.stringify(state.resource);
    const forkStatuses: PaymentStatus[] = [];
    const fork = state.fork({ statusChanged: (s) => forkStatuses.push(s.status) });
    const agreeing = { state: 'succeeded' as const, transactionId: null, statusCode: null, message: null };
    fork.confirmation(fork.nextUnconfirmed()!, agreeing, now);
    assert.deepEqual([fork.status, forkStatuses], ['succeeded', ['succeeded']], 'the fork tells its own listener');
    assert.equal(JSON.stringify(state.resource), before, 'the state is as it was');
    assert.equal(state.awaitingConfirmation, true, 'its callbacks still wait');
    state.adopt(fork);
    assert.deepEqual(state.resource, fork.resource);
    assert.equal(state.awaitingConfirmation, false, 'the waiting callback was judged against the outcome on the fork');
    assert.deepEqual(statuses, ['pending'], 'taking it on tells no listener');
  });

  it('a callback before an answer that never came needs the status query', () => {
    const { state } = newState();
    state.callback(callback('failed', 12.5), now);
    state.initiationUnknown('socket reset', now);
    assert.equal(state.status, 'pending');
    assert.equal(state.awaitingConfirmation, true);
  });

  it('a callback whose confirmation failed is asked about again in reconciliation, by its transaction id', () => {
    const early = { ...callback('succeeded', 12.5), transactionId: '77' };
    const { state } = newState();
    state.callback(early, now);
    state.initiationUnknown('headers timeout', now);
    assert.equal(state.nextUnconfirmed(), early);
    state.confirmation(early, { error: 'status query timed out' }, now);
    assert.equal(state.status, 'pending', 'neither taken nor ignored');
    assert.equal(state.resource.events.at(-1)?.type, 'callback_unconfirmed');
    assert.equal(state.transactionIdToCheck, '77', 'reconciliation asks about the transaction it named');
    state.statusChecked(1, { state: 'succeeded', transactionId: '77', statusCode: '1', message: null }, now);
    assert.equal(state.status, 'succeeded');
  });

  it("a final answer against the callback settles a payment whose initiation's answer was lost (scenario 77)", () => {
    // The success callback came first; the worker died mid-initiation; the status query about the transaction the
    // callback named says failed (the provider reversed it), and the failure callback was lost.
    const early = { ...callback('succeeded', 12.5), transactionId: '77' };
    const failed = {
      state: 'failed' as const,
      transactionId: '77',
      statusCode: '0',
      message: 'reversed',
      amount: 12.5,
    };
    const { state, statuses } = newState();
    state.callback(early, now);
    state.initiationUnknown('an earlier try already claimed it', now);
    state.confirmation(state.nextUnconfirmed()!, failed, now);
    assert.equal(state.status, 'failed');
    assert.deepEqual(statuses.at(-1), 'failed');
    assert.equal(state.resource.provider.transaction_id, '77', 'the transaction its callback named');
    assert.equal(state.resource.failure?.message, 'reversed');

    // Before the patch (a run started earlier), or an answer about another transaction or amount: ignored.
    const old = newState().state;
    old.adoptsNamedTransaction = () => false;
    old.callback(early, now);
    old.initiationUnknown('an earlier try already claimed it', now);
    old.confirmation(old.nextUnconfirmed()!, failed, now);
    assert.equal(old.status, 'pending');
    for (const answer of [
      { ...failed, transactionId: '78' },
      { ...failed, amount: 99 },
    ]) {
      const other = newState().state;
      other.callback(early, now);
      other.initiationUnknown('an earlier try already claimed it', now);
      other.confirmation(other.nextUnconfirmed()!, answer, now);
      assert.equal(other.status, 'pending', JSON.stringify(answer));
      assert.equal(other.resource.provider.transaction_id, null);
    }
  });

  it('a flood of one callback becomes one counted event, and never pushes out a resolution', () => {
    const { state } = newState();
    state.initiated(ack, now);
    for (let i = 0; i < 5000; i++) state.callback({ ...callback('succeeded', 12.5), transactionId: `${i % 2}` }, now);
    for (let i = 0; i < 5000; i++) state.callback(callback('pending', 12.5), now);
    state.timedOut(1000, now);
    state.needsReview('unsettled', now);
    state.resolve({ outcome: 'failed', note: 'checked', operator: 'ama' }, now);
    const events = state.resource.events;
    assert.ok(events.length <= 210, `${events.length} events`);
    assert.equal(events.find((e) => e.outcome === 'pending')?.count, 5000);
    assert.deepEqual(
      events.slice(-4).map((e) => e.type),
      ['timed_out', 'needs_review', 'resolved', 'failed'],
    );
    assert.match(events.at(-2)?.message ?? '', /checked \(by ama\)/);
  });

  it('a definite rejection fails the payment with the reason', () => {
    const { state } = newState();
    state.initiationRejected({ code: 'E400', message: 'Insufficient funds' }, now);
    assert.equal(state.status, 'failed');
    assert.deepEqual(state.resource.failure, { code: 'E400', message: 'Insufficient funds' });
  });

  it('only a payment in review can be resolved', () => {
    const { state } = newState();
    state.initiated(ack, now);
    assert.match(state.resolveRefusal() ?? '', /pending/);
    state.timedOut(300_000, now);
    state.statusChecked(1, { state: 'pending', transactionId: '9', statusCode: '2', message: null }, now);
    state.needsReview('unsettled', now);
    assert.equal(state.resolveRefusal(), undefined);
    state.resolve({ outcome: 'failed', note: 'checked with provider' }, now);
    assert.equal(state.status, 'failed');
    assert.equal(state.resource.failure?.code, 'operator_resolved');
  });

  it('a status check that answers succeeded settles the payment', () => {
    const { state } = newState();
    state.initiationUnknown('socket reset', now);
    state.timedOut(1000, now);
    state.statusChecked(1, { state: 'succeeded', transactionId: '10', statusCode: '1', message: 'paid' }, now);
    assert.equal(state.status, 'succeeded');
    assert.equal(state.resource.provider.transaction_id, '10');
  });

  it('fails as not_sent only when the provider never showed it knew the payment and two checks found nothing', () => {
    const notFound = { state: 'not_found' as const, transactionId: null, statusCode: null, message: null };
    const { state } = newState();
    state.initiationUnknown('the worker stopped answering', now);
    state.statusChecked(1, notFound, now);
    assert.equal(state.neverReachedProvider, false, 'one check is not enough');
    state.statusChecked(2, { error: 'timeout' }, now);
    state.statusChecked(3, notFound, now);
    assert.equal(state.neverReachedProvider, true);
    state.notSent(now);
    assert.equal(state.status, 'failed');
    assert.equal(state.resource.failure?.code, 'not_sent');
    assert.match(state.resource.failure?.message ?? '', /after 2 status checks: the request never reached it/);

    const called = newState().state;
    called.initiationUnknown('the worker stopped answering', now);
    called.callback(callback('succeeded'), now);
    called.statusChecked(1, notFound, now);
    called.statusChecked(2, notFound, now);
    assert.equal(called.neverReachedProvider, false, 'a callback means the provider had it');

    const found = newState().state;
    found.initiationUnknown('the worker stopped answering', now);
    found.statusChecked(1, { ...notFound, state: 'pending', statusCode: '2' }, now);
    found.statusChecked(2, notFound, now);
    found.statusChecked(3, notFound, now);
    assert.equal(found.neverReachedProvider, false, 'a status it once found means it had it');

    const acknowledged = newState().state;
    acknowledged.initiated(ack, now);
    acknowledged.statusChecked(1, notFound, now);
    acknowledged.statusChecked(2, notFound, now);
    assert.equal(acknowledged.neverReachedProvider, false, 'an acknowledgement means it had it');
  });
});
