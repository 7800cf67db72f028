import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { AppError, recordCall } from '../src/payments/app-errors';
import { openDatabase } from '../src/records/database';
import type { Database } from '../src/records/database';
import { takeKey, takePaymentKey } from '../src/records/idempotency-keys';
import type { PaymentResource } from '../src/domain/payment-model';
import type { IdempotencyKey } from '../src/records/idempotency-keys';
import { testDatabaseUrl } from './support/test-stack';

describe('idempotency keys', () => {
  let db: Database;
  const merchant = `m${randomBytes(6).toString('hex')}`;
  const key = (reference: string, fingerprint = 'fp-1'): IdempotencyKey => ({
    merchantId: merchant,
    scope: 'payment',
    reference,
    fingerprint,
    resourceId: `payment-${merchant}-${reference}`,
  });

  before(() => {
    db = openDatabase(testDatabaseUrl());
  });
  after(async () => {
    await db.end();
  });

  it('takes a new reference once; later takes answer the first fingerprint and resource', async () => {
    let alongside = 0;
    const first = await takeKey(db, key('a'), () => Promise.resolve(void (alongside += 1)));
    assert.deepEqual(first, { taken: true });
    const again = await takeKey(db, key('a', 'fp-2'), () => Promise.resolve(void (alongside += 1)));
    assert.deepEqual(again, {
      taken: false,
      fingerprint: 'fp-1',
      resourceId: `payment-${merchant}-a`,
      purged: false,
    });
    assert.equal(alongside, 1, 'what goes with the key is written only with a new key');
    // The same reference for a batch is another key.
    assert.deepEqual(await takeKey(db, { ...key('a'), scope: 'batch' }), { taken: true });
  });

  it('lets exactly one of many concurrent requests take a reference', async () => {
    const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => takeKey(db, key('race', `fp-${i}`))));
    const taken = claims.filter((c) => c.taken);
    assert.equal(taken.length, 1);
    const kept = claims.filter((c) => !c.taken).map((c) => (c.taken ? '' : c.fingerprint));
    assert.equal(new Set(kept).size, 1, 'every other request reads the winner’s fingerprint');
  });

  it('takes nothing when what goes with the key fails: both are written or neither', async () => {
    await assert.rejects(
      takeKey(db, key('rolled-back'), () => Promise.reject(new Error('record refused'))),
      /record refused/,
    );
    assert.deepEqual(await takeKey(db, key('rolled-back')), { taken: true });
  });

  describe("a payment's, in one statement with its first record", () => {
    const firstRecord = (reference: string, amount = 12.5): PaymentResource => ({
      id: `payment-${merchant}-${reference}`,
      type: 'mobile_money_debit',
      reference,
      status: 'initiating',
      amount,
      created_at: '2026-11-29T10:00:00.000Z',
      updated_at: '2026-11-29T10:00:00.000Z',
      provider: { transaction_id: null, status_code: null, message: null },
      next_action: null,
      failure: null,
      events: [],
    });
    const stored = async (reference: string) =>
      (
        await db.query<{ amount: string; revision: number; status: string; merchant_id: string; reference: string }>(
          'SELECT amount, revision, status, merchant_id, reference FROM payments WHERE id = $1',
          [`payment-${merchant}-${reference}`],
        )
      ).rows;

    it('takes a new reference with its record; a later take answers the first key and writes nothing', async () => {
      assert.deepEqual(await takePaymentKey(db, key('p'), firstRecord('p')), { taken: true });
      assert.deepEqual(await stored('p'), [
        { amount: '12.50', revision: 0, status: 'initiating', merchant_id: merchant, reference: 'p' },
      ]);
      const again = await takePaymentKey(db, key('p', 'fp-2'), firstRecord('p', 99));
      assert.deepEqual(again, {
        taken: false,
        fingerprint: 'fp-1',
        resourceId: `payment-${merchant}-p`,
        purged: false,
      });
      assert.equal((await stored('p'))[0]?.amount, '12.50', "the record is the first request's");
      // The key taken by takeKey (a batch's way) is the same key.
      assert.equal((await takeKey(db, key('p', 'fp-3'))).taken, false);
    });

    it('lets exactly one of many concurrent requests take a reference; the others read its key', async () => {
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) => takePaymentKey(db, key('p-race', `fp-${i}`), firstRecord('p-race', i + 1))),
      );
      const winners = claims.flatMap((claim, i) => (claim.taken ? [i] : []));
      assert.equal(winners.length, 1);
      const kept = claims.map((c) => (c.taken ? `fp-${winners[0]}` : c.fingerprint));
      assert.deepEqual(new Set(kept), new Set([`fp-${winners[0]}`]), 'every other request reads the winner’s key');
      assert.equal(Number((await stored('p-race'))[0]?.amount), (winners[0] ?? -1) + 1, "the record is the winner's");
    });

    it('writes no record when the key was taken, even without one', async () => {
      assert.equal((await takeKey(db, key('p-batch'))).taken, true);
      assert.equal((await takePaymentKey(db, key('p-batch'), firstRecord('p-batch'))).taken, false);
      assert.deepEqual(await stored('p-batch'), []);
    });
  });

  it('answers `unavailable` within 2 s when PostgreSQL does not answer', async () => {
    // A port that accepts connections and never speaks: the pool's connection time-out decides.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    const unreachable = openDatabase(`postgres://u:p@127.0.0.1:${port}/records`);
    const started = Date.now();
    try {
      await assert.rejects(
        recordCall(() => takeKey(unreachable, key('down'))),
        (err: unknown) => err instanceof AppError && err.kind === 'unavailable',
      );
      assert.ok(Date.now() - started < 2000, `answered after ${Date.now() - started} ms`);
    } finally {
      await unreachable.end();
      silent.close();
    }
    // A refused connection answers the same, at once.
    const refused = openDatabase('postgres://u:p@127.0.0.1:1/records');
    await assert.rejects(
      recordCall(() => takeKey(refused, key('down'))),
      (err: unknown) => err instanceof AppError && err.kind === 'unavailable',
    );
    await refused.end();
  });

  it('lets an error of the query itself through', async () => {
    await assert.rejects(
      recordCall(() => db.query('SELECT no_such_column FROM idempotency_keys')),
      (err: unknown) => !(err instanceof AppError) && err instanceof Error && /no_such_column/.test(err.message),
    );
  });
});
