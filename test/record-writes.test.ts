import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createPaymentActivities } from '../src/activities/payment-activities';
import { returnedPayment } from '../src/domain/batch-model';
import { parseKeyring } from '../src/crypto/keyring';
import { signMessage } from '../src/crypto/signing';
import type { Signed } from '../src/domain/signed';
import type { BatchProgress } from '../src/domain/batch-model';
import { newBatchProgress } from '../src/domain/batch-progress';
import { FailureTypes, newPaymentResource } from '../src/domain/payment-model';
import type {
  InitiationVerdict,
  PaymentMessage,
  PaymentResource,
  PaymentStatus,
  ProviderAck,
} from '../src/domain/payment-model';
import { startPostgres } from '../src/local/postgres';
import type { ProviderClient } from '../src/provider/provider-client';
import {
  bindTransaction,
  claimInitiation,
  keepFirstAnswer,
  keepInitiationAnswer,
  upsertBatchRecord,
  upsertPaymentRecord,
} from '../src/records/record-writes';
import { OUTBOX_CHANNEL } from '../src/records/notification-outbox';
import { createMemoryVault } from '../src/vault/card-vault';
import { recordDatabase } from './support/record-database';
import type { RecordDatabase } from './support/record-database';
import { paymentRequest, storedRequest, uniqueReference } from './support/request-builders';
import { startStack, testCallbackTokens, connectTestClient } from './support/test-stack';
import { paymentQuery } from '../src/workflows/definitions';
import type { paymentWorkflow } from '../src/workflows/payment-workflow';
import { eventually } from '../src/local/eventually';

// The records' writes: versioned upserts that never move a record back, whatever the order and repetition of the
// writes (a model test against a real PostgreSQL), and the initiation claim that keeps a second run from sending.

const STATUSES: PaymentStatus[] = ['initiating', 'pending', 'reconciling', 'needs_review', 'succeeded'];

let records: RecordDatabase;
before(async () => (records = await recordDatabase()));
after(async () => records?.close());

/** A payment's successive states, revision 1 to `count`: each one a status further and an event more. */
function revisionsOf(id: string, count: number): PaymentResource[] {
  const request = storedRequest('bank_credit', '00', id);
  const base = newPaymentResource({
    paymentId: `payment-acme-${id}`,
    merchantId: 'acme',
    request,
    createdAt: '2025-01-01T00:00:00.000Z',
    timing: { callbackTimeoutMs: 1, reconcileForMs: 1, reconcileIntervalMs: 1 },
  });
  return Array.from({ length: count }, (_, index) => ({
    ...base,
    status: STATUSES[Math.min(index, STATUSES.length - 1)]!,
    updated_at: new Date(Date.UTC(2025, 0, 1, 0, index + 1)).toISOString(),
    events: Array.from({ length: index + 1 }, (_, e) => ({
      at: base.created_at,
      type: 'status_checked' as const,
      count: e + 1,
    })),
  }));
}

async function storedPayment(id: string): Promise<{ revision: number; status: string; resource: PaymentResource }> {
  const { rows } = await records.db.query<{ revision: number; status: string; resource: PaymentResource }>(
    'SELECT revision, status, resource FROM payments WHERE id = $1',
    [id],
  );
  assert.equal(rows.length, 1, `one record of ${id}`);
  return rows[0]!;
}

/** The workflow clock of a run's change: within a run it never goes back; a later run's changes come after. */
function recordedAt(run: number, revision: number): string {
  return new Date(Date.UTC(2025, 0, 1) + run * 3_600_000 + revision * 1000).toISOString();
}

describe('record writes', () => {
  it('a payment record never regresses under reordered, repeated and concurrent writes (model test)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }).chain((count) =>
          fc.record({
            count: fc.constant(count),
            // Revisions written, in any order, any number of times (a retried or late write), by the first run or by
            // a second one that replaced it later (a Reset: its changes come later on the workflow's clock).
            writes: fc.array(fc.tuple(fc.integer({ min: 1, max: 2 }), fc.integer({ min: 1, max: count })), {
              minLength: 1,
              maxLength: 20,
            }),
            // How many writes go at once (a worker restart racing the write that was under way).
            together: fc.integer({ min: 1, max: 3 }),
            // Whether the server inserted revision 0 first (a batch item has no such row).
            serverRow: fc.boolean(),
            batchItem: fc.boolean(),
          }),
        ),
        async ({ count, writes, together, serverRow, batchItem }) => {
          const states = revisionsOf(uniqueReference('model'), count);
          const id = states[0]!.id;
          const batchId = batchItem ? 'batch-acme-model' : undefined;
          // Run 2's state at a revision differs from run 1's (its own story after the Reset).
          const stateOf = ([run, revision]: [number, number]) => {
            const state = states[revision - 1]!;
            return { ...state, provider: { ...state.provider, message: `run ${run}` } };
          };
          const write = ([run, revision]: [number, number]) =>
            upsertPaymentRecord(records.db, {
              resource: stateOf([run, revision]),
              merchantId: 'acme',
              batchId,
              revision,
              recordedAt: recordedAt(run, revision),
            });
          if (serverRow) {
            await upsertPaymentRecord(records.db, {
              resource: { ...states[0]!, status: 'initiating', events: [] },
              merchantId: 'acme',
              revision: 0,
              recordedAt: '-infinity',
            });
          }
          let latest: [number, number] = [0, 0];
          for (let at = 0; at < writes.length; at += together) {
            const group = writes.slice(at, at + together);
            await Promise.all(group.map(write));
            for (const w of group) if (w[0] > latest[0] || (w[0] === latest[0] && w[1] > latest[1])) latest = w;
            const stored = await storedPayment(id);
            assert.equal(stored.revision, latest[1], 'the record holds the latest change written, never an older one');
            assert.deepEqual(stored.resource, stateOf(latest), 'and exactly that change’s state, of the latest run');
            assert.equal(stored.status, stateOf(latest).status);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a batch record never regresses either', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 15 }), async (writes) => {
        const reference = uniqueReference('batch-model');
        const start = newBatchProgress(
          {
            batchId: `batch-acme-${reference}`,
            merchantId: 'acme',
            reference,
            itemCount: 6,
            totalMinor: 600,
            concurrency: 1,
            createdAt: '2025-01-01T00:00:00.000Z',
          } as Parameters<typeof newBatchProgress>[0],
          new Date('2025-01-01T00:00:00.000Z'),
        );
        const progressAt = (revision: number): BatchProgress => ({
          ...start,
          status: revision === 6 ? 'completed' : 'running',
          items: { ...start.items, succeeded: { count: revision, amount: revision } },
        });
        let highest = 0;
        for (const revision of writes) {
          await upsertBatchRecord(records.db, {
            resource: progressAt(revision),
            merchantId: 'acme',
            reference,
            revision,
            recordedAt: recordedAt(1, revision),
          });
          highest = Math.max(highest, revision);
          const { rows } = await records.db.query<{ revision: number; resource: BatchProgress }>(
            'SELECT revision, resource FROM batches WHERE id = $1',
            [start.id],
          );
          assert.equal(rows[0]?.revision, highest);
          assert.deepEqual(rows[0]?.resource, progressAt(highest));
        }
      }),
      { numRuns: 60 },
    );
  });

  it('a write with events records both in one statement, keeps an event queued before, and wakes the relays', async () => {
    const [first, second] = revisionsOf(uniqueReference('outbox'), 2) as [PaymentResource, PaymentResource];
    const event = (id: string, object: PaymentResource) => ({
      id,
      type: 'payment.succeeded' as const,
      created_at: object.updated_at,
      merchant_id: 'acme',
      data: { object },
    });
    const listener = await records.db.connect();
    const woken: string[] = [];
    listener.on('notification', (message) => woken.push(message.channel));
    try {
      await listener.query(`LISTEN ${OUTBOX_CHANNEL}`);
      const queued = event(`evt_${randomUUID().replaceAll('-', '')}`, first);
      const write = (resource: PaymentResource, revision: number, events: ReturnType<typeof event>[]) =>
        upsertPaymentRecord(records.db, {
          resource,
          merchantId: 'acme',
          revision,
          recordedAt: resource.updated_at,
          events,
        });
      await write(first, 1, [queued]);
      // The same event again (a write tried again) with a newer record and one more event.
      await write(second, 2, [{ ...queued, created_at: second.updated_at }, event(`evt_${randomUUID()}`, second)]);
      const { rows } = await records.db.query<{ id: string; created_at: Date }>(
        'SELECT id, created_at FROM notification_events WHERE subject = $1 ORDER BY seq',
        [first.id],
      );
      assert.equal(rows.length, 2, 'each event once');
      assert.equal(rows[0]?.id, queued.id);
      assert.equal(rows[0]?.created_at.toISOString(), first.updated_at, 'the event queued first stays as it was');
      const record = await records.db.query<{ revision: number }>('SELECT revision FROM payments WHERE id = $1', [
        first.id,
      ]);
      assert.equal(record.rows[0]?.revision, 2);
      await eventually(() => assert.equal(woken.length, 2, 'a wake-up per write that queued events'), {
        timeoutMs: 5000,
        what: 'the outbox channel notified twice',
      });
      assert.deepEqual(new Set(woken), new Set([OUTBOX_CHANNEL]));
    } finally {
      listener.release();
    }
  });

  it('an initiation is claimed once: the same execution may claim it again, another execution or run never', async () => {
    const paymentId = `payment-acme-${uniqueReference('claim')}`;
    const first = { runId: 'run-1', execution: 'e-1' };
    const held = { held: true };
    assert.deepEqual(await claimInitiation(records.db, paymentId, first), held, 'the first claim');
    assert.deepEqual(
      await claimInitiation(records.db, paymentId, first),
      held,
      'a retried claim of the same execution',
    );
    const again = { runId: 'run-1', execution: 'e-2' };
    assert.deepEqual(
      await claimInitiation(records.db, paymentId, again),
      { held: false, earlierAnswer: undefined },
      'another execution of the same run (its workflow task tried again after a worker died mid-call)',
    );
    await keepInitiationAnswer(records.db, paymentId, 'run-1', { ack: 'kept' }, null);
    await keepInitiationAnswer(records.db, paymentId, 'run-1', { ack: 'a later one is not' }, null);
    assert.deepEqual(
      await claimInitiation(records.db, paymentId, again),
      { held: false, earlierAnswer: { ack: 'kept' } },
      'another execution of the same run, once the first kept its answer',
    );
    assert.deepEqual(
      await claimInitiation(records.db, paymentId, { runId: 'run-2', execution: 'e-1' }),
      { held: false, earlierAnswer: undefined },
      "another run (a Reset's) is never handed the answer",
    );
    const racing = `payment-acme-${uniqueReference('race')}`;
    const claims = await Promise.all(
      ['a', 'b', 'c', 'd'].map((run) => claimInitiation(records.db, racing, { runId: run, execution: run })),
    );
    const holders = claims.filter((claim) => claim.held).length;
    assert.equal(holders, 1, `one of four racing runs holds the claim (${JSON.stringify(claims)})`);
  });

  it("a provider transaction is bound once, with an initiation's answer or alone, whoever races for it", async () => {
    const payment = () => `payment-acme-${uniqueReference('bind')}`;
    const transactionId = `tx-${randomUUID()}`;
    const first = payment();
    assert.equal(await keepInitiationAnswer(records.db, first, 'run-1', { ack: 1 }, transactionId), first);
    assert.equal(
      await keepInitiationAnswer(records.db, payment(), 'run-1', { ack: 2 }, transactionId),
      first,
      "another payment's answer naming it is told whose it is",
    );
    assert.equal(await bindTransaction(records.db, transactionId, payment()), first, 'and so is a status answer');
    assert.equal(await keepInitiationAnswer(records.db, payment(), 'run-1', { ack: 3 }, null), null, 'none to bind');
    // The racers wait for the first binding; those whose snapshot began before it committed read it again.
    const racing = `tx-${randomUUID()}`;
    const payments = Array.from({ length: 8 }, payment);
    const bound = await Promise.all(
      payments.map((id, i) =>
        i % 2 === 0
          ? keepInitiationAnswer(records.db, id, 'run-1', { ack: i }, racing)
          : bindTransaction(records.db, racing, id),
      ),
    );
    assert.equal(new Set(bound).size, 1, `eight racers are told one payment (${bound.join(', ')})`);
    assert.ok(payments.includes(bound[0] ?? ''), 'one of theirs');
  });

  it("a run's first final answer about a transaction stands, whichever of its executions race to keep theirs", async () => {
    const key = { paymentId: `payment-acme-${uniqueReference('answer')}`, runId: 'run-1', transactionId: 'tx-1' };
    const kept = await Promise.all(
      Array.from({ length: 8 }, (_, i) => keepFirstAnswer(records.db, key, { answer: i })),
    );
    assert.equal(new Set(kept.map((answer) => answer.answer)).size, 1, `one answer (${JSON.stringify(kept)})`);
    assert.deepEqual(await keepFirstAnswer(records.db, key, { answer: 'later' }), kept[0], 'and later ones are not');
  });
});

describe('an initiation while PostgreSQL is down', () => {
  let own: RecordDatabase;
  before(async () => (own = await recordDatabase({ ownServer: true })));
  after(async () => own?.close());

  it('waits for it, sends once it is back, and gives up with nothing sent', async () => {
    const signingKeys = parseKeyring(`s1:${Buffer.alloc(32, 3).toString('base64')}`);
    let sent = 0;
    const provider: ProviderClient = {
      initiate: () => {
        sent += 1;
        return Promise.resolve({ transactionId: '1', statusCode: '2', message: 'pending', redirectUrl: null });
      },
      checkStatus: () => Promise.resolve(null),
      canCheckStatus: false,
      listBanks: () => Promise.resolve([]),
      close: () => Promise.resolve(),
    };
    const activities = createPaymentActivities({
      provider,
      cardVault: createMemoryVault(),
      database: own.db,
      signingKeys,
      callbackTokens: testCallbackTokens('https://pay.example'),
      vaultWaitMs: 4000,
    });
    const initiate = (reference: string) => {
      const paymentId = `payment-acme-${reference}`;
      const order = signMessage(
        signingKeys,
        'payment',
        paymentId,
        {
          paymentId,
          merchantId: 'acme',
          request: storedRequest('bank_credit', '00', reference),
          createdAt: new Date().toISOString(),
          timing: { callbackTimeoutMs: 1, reconcileForMs: 1, reconcileIntervalMs: 1 },
        },
        { namespace: 'default', taskQueue: 'test' },
      );
      return new MockActivityEnvironment({ workflowExecution: { workflowId: paymentId, runId: randomUUID() } }).run<
        [PaymentMessage],
        Signed<ProviderAck>,
        (what: PaymentMessage) => Promise<Signed<ProviderAck>>
      >((what) => activities.initiatePayment(what), order);
    };
    const postgres = own.postgres!;
    const dir = own.dataDir!;

    // PostgreSQL restarts within the wait: the claim is taken then, and the initiation goes out after it.
    await postgres.stop();
    const waiting = initiate(uniqueReference('pg-back'));
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(sent, 0, 'nothing sent while the claim cannot be taken');
    own.postgres = await startPostgres(dir, postgres.port, () => undefined);
    assert.equal((await waiting).body.transactionId, '1', 'sent once PostgreSQL was back');
    assert.equal(sent, 1);

    // PostgreSQL stays down: after the wait the payment fails cleanly, nothing sent.
    await own.postgres.stop();
    const started = Date.now();
    const failure = await initiate(uniqueReference('pg-down')).then(
      () => assert.fail('the initiation must fail'),
      (err: unknown) => err,
    );
    const elapsedMs = Date.now() - started;
    own.postgres = await startPostgres(dir, postgres.port, () => undefined);
    assert.ok(failure instanceof ApplicationFailure, String(failure));
    assert.equal(failure.type, FailureTypes.rejected, 'a definite failure: the payment fails, no review');
    assert.equal(failure.nonRetryable, true);
    // The verdict travels signed for the activity that failed.
    assert.deepEqual((failure.details?.[0] as Signed<InitiationVerdict>).body.failure, {
      code: 'initiation_unrecorded',
      message:
        'the initiation could not be recorded (the record database is unreachable); nothing was sent to the provider',
    });
    assert.equal(sent, 1, 'nothing more sent to the provider');
    assert.ok(elapsedMs >= 3000 && elapsedMs <= 8000, `gave up after ${elapsedMs} ms (the wait is 4 s)`);
  });
});

describe('a payment while PostgreSQL is down', () => {
  it('keeps moving, and its record catches up once PostgreSQL is back', async () => {
    const own = await recordDatabase({ ownServer: true });
    const stack = await startStack({
      env: { DATABASE_URL: own.url, LATE_CALLBACK_WINDOW: '1s' },
      sandbox: { callbackDelayMs: 1500 },
    });
    const temporal = await connectTestClient();
    try {
      const created = await stack.api('POST', '/v1/payments', paymentRequest('bank_credit', '00'));
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const id = created.body.id;
      const recorded = async () =>
        (await own.db.query<{ resource: PaymentResource }>('SELECT resource FROM payments WHERE id = $1', [id])).rows[0]
          ?.resource;
      assert.equal((await recorded())?.status, 'pending', 'the initiation answered once its record was written');
      const postgres = own.postgres!;
      await postgres.stop();
      // The callback settles it in Temporal while nothing can be recorded.
      const handle = temporal.workflow.getHandle<typeof paymentWorkflow>(id);
      await eventually(async () => assert.equal((await handle.query(paymentQuery)).status, 'succeeded'), {
        timeoutMs: 20_000,
        intervalMs: 200,
        what: `${id} succeeding while PostgreSQL is down`,
      });
      await new Promise((r) => setTimeout(r, 2000));
      own.postgres = await startPostgres(own.dataDir!, postgres.port, () => undefined);
      const final = returnedPayment(await handle.result());
      assert.equal(final.status, 'succeeded');
      assert.deepEqual(await recorded(), final, 'the record is the final state: no write was lost');
    } finally {
      await temporal.connection.close();
      await stack.close();
      await own.close();
    }
  });
});
