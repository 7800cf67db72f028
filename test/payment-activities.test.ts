import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createPaymentActivities } from '../src/activities/payment-activities';
import type { CallbackConfirmation, ConfirmationInput, PaymentActivities } from '../src/activities/payment-activities';
import { openDatabase } from '../src/records/database';
import { testCallbackTokens } from './support/test-stack';
import { parseKeyring } from '../src/crypto/keyring';
import { signMessage, signatureProblem } from '../src/crypto/signing';
import type { Signed } from '../src/domain/signed';
import { FailureTypes, newPaymentResource } from '../src/domain/payment-model';
import type {
  InitiationVerdict,
  PaymentInput,
  PaymentMessage,
  ProviderAck,
  StatusCheck,
} from '../src/domain/payment-model';
import { ProviderError } from '../src/provider/provider-errors';
import type { ProviderClient } from '../src/provider/provider-client';
import type { PaymentRequest } from '../src/domain/requests';
import { detachCard } from '../src/vault/card-vault';
import { createMemoryVault } from '../src/vault/card-vault';
import type { CardVault } from '../src/vault/card-vault';
import type { StoredPaymentRequest } from '../src/domain/payment-model';
import { paymentRequest, storedRequest } from './support/request-builders';
import { recordDatabase } from './support/record-database';
import type { RecordDatabase } from './support/record-database';

const ack: ProviderAck = { transactionId: '1', statusCode: '2', message: 'pending', redirectUrl: null };
const signingKeys = parseKeyring(`s1:${Buffer.alloc(32, 3).toString('base64')}`);
const callbackTokens = testCallbackTokens('https://pay.example');
const timing = { callbackTimeoutMs: 1, reconcileForMs: 1, reconcileIntervalMs: 1 };
const PAYMENT_ID = 'payment-acme-r1';
/** Where MockActivityEnvironment's activities run. */
const MOCK_SCOPE = { namespace: 'default', taskQueue: 'test' };
const order = (request: StoredPaymentRequest, workflowId = PAYMENT_ID) =>
  signMessage(
    signingKeys,
    'payment',
    workflowId,
    {
      paymentId: workflowId,
      merchantId: 'acme',
      request,
      createdAt: new Date().toISOString(),
      timing,
    },
    MOCK_SCOPE,
  );
const input = order(storedRequest('bank_credit', '00', 'r1'));

const cardVault = createMemoryVault();
// Initiation claims live in a record database of this file's own: runs of one payment claim it once.
let records: RecordDatabase;
before(async () => (records = await recordDatabase()));
after(async () => records?.close());
/** Each case's payment starts unclaimed: most initiate PAYMENT_ID once. */
const forgetClaims = async () => {
  await records?.db.query('DELETE FROM initiation_claims');
  await records?.db.query('DELETE FROM initiation_answers');
};
beforeEach(forgetClaims);

/** Activities over a vault of their own by default, claiming initiations in this file's record database. */
function activitiesWith(provider: ProviderClient, vault: CardVault = createMemoryVault()): PaymentActivities {
  return createPaymentActivities({ provider, cardVault: vault, database: records.db, signingKeys, callbackTokens });
}

/** Runs a status check as Temporal would, inside an activity. */
function checkStatus(activities: PaymentActivities, input: Parameters<PaymentActivities['checkPaymentStatus']>[0]) {
  return new MockActivityEnvironment().run<
    [typeof input],
    Signed<StatusCheck | null>,
    (what: typeof input) => Promise<Signed<StatusCheck | null>>
  >((what) => activities.checkPaymentStatus(what), input);
}

/** Runs the initiation as Temporal would, inside one run of the payment's workflow. */
function initiate(activities: PaymentActivities, what: PaymentMessage, workflowId = PAYMENT_ID, runId = 'run-1') {
  const env = new MockActivityEnvironment({ workflowExecution: { workflowId, runId } });
  return env.run<[PaymentMessage], Signed<ProviderAck>, (order: PaymentMessage) => Promise<Signed<ProviderAck>>>(
    (order) => activities.initiatePayment(order),
    what,
  );
}

function fakeProvider(overrides: Partial<ProviderClient>): ProviderClient {
  return {
    initiate: () => Promise.resolve(ack),
    checkStatus: () => Promise.resolve(null),
    canCheckStatus: true,
    listBanks: () => Promise.resolve([]),
    close: () => Promise.resolve(),
    ...overrides,
  };
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ApplicationFailure);
    return err;
  }
  assert.fail('expected an ApplicationFailure');
}

/** The verdict a failed initiation carries, signed for the activity that failed (kind, run, activity id). */
function verdictOf(failure: ApplicationFailure): InitiationVerdict {
  const signed = failure.details?.[0] as Signed<InitiationVerdict>;
  assert.equal(signed.kind, 'initiation-verdict');
  assert.equal(signatureProblem(signingKeys, signed), undefined, 'signed with SIGNING_KEYS');
  return signed.body;
}

describe('payment activities', () => {
  it('turn each verdict into one non-retryable ApplicationFailure type', async () => {
    const cases = [
      ['rejected', FailureTypes.rejected],
      ['unknown', FailureTypes.unknown],
      ['not_sent', FailureTypes.not_sent],
    ] as const;
    for (const [verdict, type] of cases) {
      await forgetClaims();
      const provider = fakeProvider({
        initiate: () =>
          Promise.reject(new ProviderError('boom', { verdict, httpStatus: 400, providerMessage: 'Account closed' })),
      });
      const failure = await failureOf(initiate(activitiesWith(provider), input));
      assert.equal(failure.type, type);
      assert.equal(failure.nonRetryable, true);
      if (verdict === 'rejected') {
        assert.deepEqual(verdictOf(failure), { verdict, failure: { code: 'http_400', message: 'Account closed' } });
      }
    }
  });

  it('name a provider-wide answer (authentication, 5xx) by its HTTP status, whatever code its body has', async () => {
    const cases = [
      [401, 'rejected', 'http_401'],
      [503, 'unknown', 'http_503'],
      [400, 'rejected', 'E_ACCOUNT_CLOSED'],
    ] as const;
    for (const [httpStatus, verdict, code] of cases) {
      await forgetClaims();
      const provider = fakeProvider({
        initiate: () =>
          Promise.reject(
            new ProviderError('boom', { verdict, httpStatus, providerCode: 'E_ACCOUNT_CLOSED', providerMessage: 'no' }),
          ),
      });
      const failure = await failureOf(initiate(activitiesWith(provider), input));
      // A rejection's failure travels in its signed verdict; an unknown outcome's as it is.
      const shown = verdict === 'rejected' ? verdictOf(failure).failure : failure.details?.[0];
      assert.deepEqual(shown, { code, message: 'no' }, `HTTP ${httpStatus}`);
    }
  });

  it('one provider transaction settles at most one payment: bound to another, its answers are refused', async () => {
    const transactionId = `tx-${randomUUID()}`;
    const provider = fakeProvider({
      initiate: () => Promise.resolve({ ...ack, transactionId }),
      checkStatus: () => Promise.resolve({ state: 'succeeded', transactionId, statusCode: '1', message: 'paid' }),
    });
    const activities = activitiesWith(provider);
    const [a, b] = [`payment-acme-${randomUUID()}`, `payment-acme-${randomUUID()}`];
    const first = await initiate(activities, order(storedRequest('bank_credit', '00', 'a'), a), a);
    assert.equal(first.body.transactionId, transactionId);
    // The provider (or whoever answers in its name) hands the same transaction to a second payment.
    const second = await failureOf(initiate(activities, order(storedRequest('bank_credit', '00', 'b'), b), b));
    assert.equal(second.type, FailureTypes.unknown, 'not pending with that transaction: reconciled');
    assert.match(second.message, new RegExp(`transaction ${transactionId} is already bound to payment ${a}`));
    const check = await failureOf(checkStatus(activities, { paymentId: b, type: 'bank_credit', transactionId: null }));
    assert.equal(check.type, FailureTypes.rejected, 'a status answer naming it settles nothing');
    assert.equal(check.nonRetryable, true);
    const own = await checkStatus(activities, { paymentId: a, type: 'bank_credit', transactionId });
    assert.equal(own.body?.state, 'succeeded', 'its own payment still gets its answers');
  });

  it('an initiation run again in its run (its workflow task tried again) answers as the first did, sending nothing', async () => {
    let sent = 0;
    let answer = () => Promise.resolve({ ...ack, transactionId: `tx-${randomUUID()}` });
    const activities = activitiesWith(
      fakeProvider({
        initiate: () => {
          sent += 1;
          return answer();
        },
      }),
    );
    const twice = async (runIds: [string, string]) => {
      const paymentId = `payment-acme-${randomUUID()}`;
      const what = order(storedRequest('mobile_money_debit', '00', paymentId), paymentId);
      /** The initiation as a local activity of one run, each execution with a result id of its own. */
      const run = (runId: string) =>
        new MockActivityEnvironment({ isLocal: true, workflowExecution: { workflowId: paymentId, runId } }).run<
          [PaymentMessage],
          Signed<ProviderAck>,
          (input: PaymentMessage) => Promise<Signed<ProviderAck>>
        >((input) => activities.initiatePayment(input, randomUUID()), what);
      const first = await run(runIds[0]).catch((err: unknown) => err);
      const second = await run(runIds[1]).catch((err: unknown) => err);
      return { first, second };
    };

    const acked = await twice(['run-1', 'run-1']);
    assert.equal(sent, 1, 'sent once');
    assert.ok(!(acked.second instanceof Error), String(acked.second));
    assert.deepEqual((acked.second as Signed<ProviderAck>).body, (acked.first as Signed<ProviderAck>).body);
    assert.equal(signatureProblem(signingKeys, acked.second as Signed<ProviderAck>), undefined, 'signed anew');

    // Chaos seed 22681: a rejection recorded `failed`, then its task ran again after a Temporal restart.
    answer = () =>
      Promise.reject(new ProviderError('refused', { verdict: 'rejected', providerCode: '7', providerMessage: 'No' }));
    const rejected = await twice(['run-1', 'run-1']);
    assert.equal(sent, 2, 'sent once more: one per payment');
    for (const failure of [rejected.first, rejected.second]) {
      assert.ok(failure instanceof ApplicationFailure);
      assert.equal(failure.type, FailureTypes.rejected);
      assert.deepEqual(verdictOf(failure), { verdict: 'rejected', failure: { code: '7', message: 'No' } });
    }

    const reset = await twice(['run-1', 'run-2']);
    assert.equal(sent, 3);
    assert.ok(reset.second instanceof ApplicationFailure);
    assert.equal(
      reset.second.type,
      FailureTypes.unknown,
      "another run (a Reset's) reconciles: it is never handed the answer",
    );

    // A first execution that died mid-call kept no answer: the second cannot know what it sent.
    const paymentId = `payment-acme-${randomUUID()}`;
    await records.db.query(
      "INSERT INTO initiation_claims (payment_id, run_id, execution) VALUES ($1, 'run-1', 'dead')",
      [paymentId],
    );
    const what = order(storedRequest('mobile_money_debit', '00', paymentId), paymentId);
    const orphan = await failureOf(initiate(activities, what, paymentId, 'run-1'));
    assert.equal(orphan.type, FailureTypes.unknown);
    assert.equal(sent, 3, 'and never sends');
  });

  it('an acknowledgement that already says failed is a definite rejection', async () => {
    const provider = fakeProvider({
      initiate: () => Promise.resolve({ ...ack, statusCode: '0', message: 'Declined' }),
    });
    const failure = await failureOf(initiate(activitiesWith(provider), input));
    assert.equal(failure.type, FailureTypes.rejected);
  });

  it('status checks ask by transaction id, and by our reference for bank credits', async () => {
    const queries: unknown[] = [];
    const provider = fakeProvider({
      checkStatus: (q) => {
        queries.push(q);
        return Promise.resolve(null);
      },
    });
    const activities = activitiesWith(provider);
    await checkStatus(activities, { paymentId: 'p1', type: 'bank_credit', transactionId: null });
    await checkStatus(activities, { paymentId: 'p2', type: 'mobile_money_debit', transactionId: '7' });
    assert.deepEqual(queries, [
      { transactionId: null, reference: 'p1' },
      { transactionId: '7', reference: null },
    ]);
  });

  it("a callback's confirmation run again (its workflow task tried again) answers the run's first final answer", async () => {
    const transactionId = `tx-${randomUUID()}`;
    let state: StatusCheck['state'] = 'pending';
    const provider = fakeProvider({
      checkStatus: () => Promise.resolve({ state, transactionId, statusCode: null, message: state }),
    });
    const activities = activitiesWith(provider);
    const paymentId = `payment-acme-${randomUUID()}`;
    const what = { paymentId, type: 'mobile_money_debit' as const, transactionId, heldTransactionId: transactionId };
    /** The confirmation as a local activity of one run (each try hands it a result id of its own). */
    const confirm = (runId: string) =>
      new MockActivityEnvironment({ isLocal: true, workflowExecution: { workflowId: paymentId, runId } }).run<
        [typeof what],
        Signed<StatusCheck | null>,
        (input: typeof what) => Promise<Signed<StatusCheck | null>>
      >((input) => activities.checkPaymentStatus({ ...input, resultId: randomUUID() }), what);

    assert.equal((await confirm('run-1')).body?.state, 'pending', 'an answer that settles nothing');
    state = 'succeeded';
    const first = await confirm('run-1');
    assert.equal(first.body?.state, 'succeeded', 'is not kept: the next confirmation asks afresh');
    // The provider reverses the payment before the workflow task that settled it is tried again.
    state = 'failed';
    const again = await confirm('run-1');
    assert.deepEqual(again.body, first.body, 'the first final answer stands');
    assert.equal(signatureProblem(signingKeys, again), undefined, 'signed anew for the activity that asked');
    assert.equal((await confirm('run-2')).body?.state, 'failed', 'another run asks afresh');
    // Reconciliation's checks are activities whose answers Temporal records: they always ask.
    assert.equal((await checkStatus(activities, what)).body?.state, 'failed');
  });

  it("a callback's confirmation writes the record of its settlement when the answer confirms it, and only then", async () => {
    let says: StatusCheck['state'] = 'failed';
    const provider = fakeProvider({
      checkStatus: (q) =>
        Promise.resolve({ state: says, transactionId: q.transactionId, statusCode: null, message: null }),
    });
    const unreachable = openDatabase('postgres://127.0.0.1:1/none', { queryTimeoutMs: 1000 });
    const confirm = async (answers: PaymentActivities, paymentId: string) => {
      const payment: PaymentInput = {
        paymentId,
        merchantId: 'acme',
        request: storedRequest('mobile_money_debit', '00', paymentId),
        createdAt: new Date().toISOString(),
        timing,
      };
      const settled = { ...newPaymentResource(payment), status: 'succeeded' as const };
      const settlement = { resource: settled, merchantId: 'acme', revision: 2, recordedAt: settled.updated_at };
      const callback = {
        state: 'succeeded' as const,
        transactionId: 'tx-1',
        statusCode: '1',
        message: null,
        amount: 12.5,
      };
      const what = { paymentId, type: 'mobile_money_debit' as const, transactionId: 'tx-1', heldTransactionId: 'tx-1' };
      const answer = await new MockActivityEnvironment({
        isLocal: true,
        workflowExecution: { workflowId: paymentId, runId: randomUUID() },
      }).run<
        [ConfirmationInput],
        Signed<CallbackConfirmation>,
        (input: ConfirmationInput) => Promise<Signed<CallbackConfirmation>>
      >((input) => answers.confirmCallback(input), { ...what, resultId: randomUUID(), callback, settlement });
      assert.equal(answer.kind, 'confirmation-result');
      assert.equal(signatureProblem(signingKeys, answer), undefined, 'signed with SIGNING_KEYS');
      const { rows } = await records.db.query<{ status: string; revision: number }>(
        'SELECT status, revision FROM payments WHERE id = $1',
        [paymentId],
      );
      return { ...answer.body, row: rows[0] };
    };
    try {
      const disagreeing = await confirm(activitiesWith(provider), `payment-acme-${randomUUID()}`);
      assert.equal(disagreeing.check?.state, 'failed');
      assert.equal(disagreeing.recorded, false, 'the workflow decides what a disagreeing answer makes of it');
      assert.equal(disagreeing.row, undefined, 'nothing written');
      says = 'succeeded';
      const agreeing = await confirm(activitiesWith(provider), `payment-acme-${randomUUID()}`);
      assert.deepEqual([agreeing.recorded, agreeing.row], [true, { status: 'succeeded', revision: 2 }]);
      const down = createPaymentActivities({
        provider,
        cardVault,
        database: unreachable,
        signingKeys,
        callbackTokens,
      });
      const unwritten = await confirm(down, `payment-acme-${randomUUID()}`);
      assert.equal(unwritten.check?.state, 'succeeded', 'the answer still comes back');
      assert.equal(unwritten.recorded, false, "left to the workflow's record writer");
    } finally {
      await unreachable.end();
    }
  });

  it('a failed status query is retryable unless the provider definitely refused it', async () => {
    const activities = (verdict: 'unknown' | 'rejected') =>
      activitiesWith(
        fakeProvider({
          checkStatus: () => Promise.reject(new ProviderError('status query failed', { verdict })),
        }),
      );
    const transient = await failureOf(
      checkStatus(activities('unknown'), { paymentId: 'p', type: 'card_payment', transactionId: '1' }),
    );
    assert.equal(transient.nonRetryable, false);
    const refused = await failureOf(
      checkStatus(activities('rejected'), { paymentId: 'p', type: 'card_payment', transactionId: '1' }),
    );
    assert.equal(refused.nonRetryable, true);
  });

  it('a card payment takes its card data out of the vault once, for the provider only', async () => {
    const sent: PaymentRequest[] = [];
    const provider = fakeProvider({
      initiate: (req) => {
        sent.push(req.request);
        return Promise.resolve(ack);
      },
    });
    const full = paymentRequest('card_payment', '00', 'c1');
    const stored = await detachCard(full, cardVault);
    assert.ok(stored.type === 'card_payment' && !('card_number' in stored) && !('card_cvv' in stored));
    assert.deepEqual(stored.card.last4, '1111');
    const card = order(stored);
    const activities = activitiesWith(provider, cardVault);
    const answer = await initiate(activities, card);
    assert.deepEqual(answer.body, ack);
    assert.deepEqual(sent, [full]);
    assert.equal(await cardVault.take(stored.card.token), null, 'the CVV is gone after its first use');
    // The same payment initiated again by a Reset's new run: refused before the vault, as an unknown outcome.
    const again = await failureOf(initiate(activities, card, PAYMENT_ID, 'run-2'));
    assert.equal(again.type, FailureTypes.unknown);
    assert.equal(again.nonRetryable, true);
    assert.match(again.message, /already claimed it: not sent again/);
    // By the same run's workflow task tried again after Temporal lost its completion: the first answer, no vault.
    assert.deepEqual((await initiate(activities, card, PAYMENT_ID, 'run-1')).body, ack);
    assert.equal(sent.length, 1, 'never sent twice');

    // Card data gone before a first initiation: a definite failure, nothing sent.
    const expired = await detachCard(paymentRequest('card_payment', '00', 'c2'), cardVault);
    assert.ok(expired.type === 'card_payment');
    await cardVault.take(expired.card.token);
    const gone = await failureOf(initiate(activities, order(expired, 'payment-acme-c2'), 'payment-acme-c2'));
    assert.equal(gone.type, FailureTypes.rejected);
    assert.deepEqual(verdictOf(gone).failure, {
      code: 'card_data_unavailable',
      message: 'the card data expired or was already used before initiation; nothing was sent to the provider',
    });
    assert.equal(sent.length, 1, 'nothing sent without card data');
  });

  it('sends only what the server signed for this very workflow, with a callback URL derived here', async () => {
    const sent: { paymentId: string; callbackUrl: string }[] = [];
    const provider = fakeProvider({
      initiate: (req) => {
        sent.push({ paymentId: req.paymentId, callbackUrl: req.callbackUrl });
        return Promise.resolve(ack);
      },
    });
    const activities = activitiesWith(provider);
    // An unsigned order, as someone who can reach Temporal but holds no keys would hand it.
    const plain = {
      paymentId: PAYMENT_ID,
      request: storedRequest('bank_credit', '00', 'r1'),
      callbackUrl: 'http://evil',
    } as unknown as PaymentMessage;
    const tampered = { ...input, body: { ...input.body, request: storedRequest('bank_credit', '00', 'evil') } };
    const forged = signMessage(
      parseKeyring(`s9:${Buffer.alloc(32, 8).toString('base64')}`),
      'payment',
      PAYMENT_ID,
      input.body,
      MOCK_SCOPE,
    );
    const refusals = [
      [plain, PAYMENT_ID, /not a signed message/],
      [tampered, PAYMENT_ID, /bad signature/],
      [forged, PAYMENT_ID, /unknown key/],
      [input, 'payment-acme-other', /signed for payment-acme-r1, not payment-acme-other/],
    ] as const;
    for (const [what, workflowId, reason] of refusals) {
      const failure = await failureOf(initiate(activities, what, workflowId));
      assert.equal(failure.type, FailureTypes.untrusted);
      assert.equal(failure.nonRetryable, true);
      assert.match(failure.message, reason);
      assert.equal(verdictOf(failure).failure?.code, 'untrusted_input');
    }
    assert.equal(sent.length, 0, 'nothing sent for an untrusted order');
    await initiate(activities, input);
    // The URL derived here, from the payment id alone; its token names its expiry second, so it is verified rather
    // than compared with one made a clock tick later.
    const prefix = callbackTokens.urlFor(PAYMENT_ID).replace(/[^/]+$/, '');
    assert.deepEqual(
      sent.map(({ paymentId, callbackUrl }) => ({ paymentId, prefix: callbackUrl.slice(0, prefix.length) })),
      [{ paymentId: PAYMENT_ID, prefix }],
    );
    assert.ok(callbackTokens.verify(PAYMENT_ID, sent[0]?.callbackUrl.slice(prefix.length) ?? ''), 'its token verifies');
    assert.match(
      sent[0]!.callbackUrl,
      /^https:\/\/pay\.example\/v1\/callbacks\/payment-acme-r1\/[\w-]+\.\d+\.[\w-]{43}$/,
    );
  });

  it('unused card data expires', async () => {
    const shortVault = createMemoryVault(50);
    const token = await shortVault.put({
      card_number: '4111111111111111',
      card_cvv: '123',
      expiry_month: '12',
      expiry_year: '2031',
    });
    await new Promise((r) => setTimeout(r, 120));
    assert.equal(await shortVault.take(token), null);
  });
});
