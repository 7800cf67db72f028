import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../src/local/eventually';
import {
  NotificationSignatureError,
  PaymentsApiError,
  PaymentsClient,
  PaymentsTimeoutError,
  SIGNATURE_HEADER,
  signNotification,
  verifyNotification,
} from '@payments/client';
import type { PaymentResource, PaymentStatus, PaymentSummary } from '@payments/client';
import { PAYMENT_TYPES } from '../src/domain/requests';
import { batchBody } from './support/batch-helpers';
import { packedConsumer, readmeExample } from './support/client-package';
import { startFaultyProxy } from './support/faulty-proxy';
import { runNode } from './support/process';
import type { FaultyProxy } from './support/faulty-proxy';
import { paymentRequest, uniqueReference } from './support/request-builders';
import { MERCHANT_KEY, OPERATOR_KEY, startStack } from './support/test-stack';
import type { Stack } from './support/test-stack';

// The typed client (@payments/client, its source) against the running stack: every sandbox scenario of every payment type, an
// operator's resolution, a batch, paging past a page, and the faults a merchant's service meets (a 503 with
// Retry-After, a dropped connection, a 4xx, a timeout) through a proxy that injects them.

const SCENARIOS: Record<string, { status: PaymentStatus; events?: string[]; failure?: string }> = {
  '00': { status: 'succeeded', events: ['callback_confirmed'] },
  '11': { status: 'failed', failure: 'provider_declined' },
  '22': { status: 'succeeded', events: ['timed_out', 'status_checked'] },
  '33': { status: 'needs_review', events: ['status_checked'] },
  '44': { status: 'needs_review', events: ['initiation_unknown'] },
  '55': { status: 'succeeded' },
  '66': { status: 'succeeded' },
  '77': { status: 'succeeded' },
  '88': { status: 'failed', events: ['initiation_rejected'] },
  '99': { status: 'succeeded', events: ['initiated'] },
};
const NEVER_SENT_BANK_CREDIT = { status: 'failed' as const, events: ['initiation_unknown'], failure: 'not_sent' };
const FINAL: PaymentStatus[] = ['succeeded', 'failed', 'needs_review'];
const CLIENT_KEY = 'mk_client_0123456789abcdef';
const NOTIFICATION_SECRET = 'whsec_test_0123456789abcdef';
const fast = { pollIntervalMs: 200, maxPollIntervalMs: 1000, timeoutMs: 60_000 };

describe('the typed client against the running stack', () => {
  // A merchant of its own, so its lists hold only this file's payments.
  const merchant = `c${Date.now().toString(36)}`;
  let stack: Stack;
  let proxy: FaultyProxy;
  let client: PaymentsClient;
  let operator: PaymentsClient;
  const settled = new Map<string, PaymentResource>();
  const created = new Map<string, PaymentResource>();

  before(async () => {
    stack = await startStack({ env: { MERCHANT_API_KEYS: `acme:${MERCHANT_KEY},${merchant}:${CLIENT_KEY}` } });
    proxy = await startFaultyProxy(stack.baseUrl);
    client = new PaymentsClient({ baseUrl: stack.baseUrl, apiKey: CLIENT_KEY, timeoutMs: 15_000 });
    operator = new PaymentsClient({ baseUrl: stack.baseUrl, apiKey: OPERATOR_KEY });
    await Promise.all(
      PAYMENT_TYPES.flatMap((type) =>
        Object.keys(SCENARIOS).map(async (scenario) => {
          const payment = await client.createPayment(paymentRequest(type, scenario));
          created.set(`${type}/${scenario}`, payment);
          settled.set(`${type}/${scenario}`, await client.waitForOutcome(payment.id, { ...fast, until: FINAL }));
        }),
      ),
    );
  });
  after(async () => {
    await proxy?.close();
    await stack?.close();
  });

  for (const type of PAYMENT_TYPES) {
    it(`${type}: every sandbox scenario reaches its final status`, () => {
      for (const [scenario, shared] of Object.entries(SCENARIOS)) {
        // A bank credit carries a reference the provider is asked about: one it never had fails as not_sent.
        const expected = type === 'bank_credit' && scenario === '44' ? NEVER_SENT_BANK_CREDIT : shared;
        const payment = settled.get(`${type}/${scenario}`);
        assert.ok(payment, `${type}/${scenario}`);
        const events: string[] = payment.events.map((e) => e.type);
        assert.equal(payment.status, expected.status, `${type}/${scenario}: ${events.join()}`);
        for (const event of expected.events ?? []) assert.ok(events.includes(event), `${type}/${scenario}: ${event}`);
        if (expected.failure) assert.equal(payment.failure?.code, expected.failure);
      }
    });
  }

  it('shows a card payment with the 3-D Secure redirect, card data only as last4', () => {
    const card = settled.get('card_payment/00');
    // The redirect comes with the acknowledgement; a callback that raced ahead of it (a loaded machine) settles the
    // payment first, and then there is nothing left to redirect to.
    const early = card?.events.some((e) => e.type === 'callback_unconfirmed');
    if (!early) assert.equal(created.get('card_payment/00')?.next_action?.type, 'redirect');
    assert.equal(card?.card?.last4, '1111');
  });

  it('resolves payments in review with an operator key; typed 403 and 409 otherwise', async () => {
    const inReview = settled.get('mobile_money_debit/33');
    assert.equal(inReview?.status, 'needs_review');
    const byMerchant = await client
      .resolvePayment(inReview.id, { outcome: 'failed', note: 'x' })
      .catch((e: unknown) => e);
    assert.ok(byMerchant instanceof PaymentsApiError);
    assert.deepEqual([byMerchant.status, byMerchant.code], [403, 'forbidden']);
    const resolved = await operator.resolvePayment(inReview.id, { outcome: 'failed', note: 'customer confirmed' });
    assert.equal(resolved.status, 'failed');
    assert.equal(resolved.failure?.code, 'operator_resolved');
    const again = await operator
      .resolvePayment(inReview.id, { outcome: 'succeeded', note: 'no' })
      .catch((e: unknown) => e);
    assert.ok(again instanceof PaymentsApiError);
    assert.deepEqual([again.status, again.code], [409, 'conflict']);
    assert.equal((await client.waitForOutcome(inReview.id, fast)).status, 'failed');
  });

  it('pages past a page: every payment of the merchant, newest first, none twice', async () => {
    const ids = new Set([...created.values()].map((p) => p.id));
    // Visibility is eventually consistent: wait until it lists all of them.
    const summaries = await eventually(
      async () => {
        const all: PaymentSummary[] = [];
        for await (const summary of client.allPayments({ limit: 7 })) all.push(summary);
        const missing = [...ids].filter((id) => !all.some((p) => p.id === id));
        assert.deepEqual(missing, [], 'not listed yet');
        return all;
      },
      { timeoutMs: 10_000, what: 'every payment of the merchant listed' },
    );
    const listed = summaries.map((p) => p.id);
    assert.equal(new Set(listed).size, listed.length, 'no payment twice');
    assert.deepEqual(new Set(listed), ids);
    const first = await client.listPayments({ limit: 7 });
    assert.equal(first.data.length, 7);
    assert.equal(first.has_more, true);
    const second = await client.listPayments({ limit: 7, starting_after: first.data.at(-1)?.id });
    assert.equal(second.data[0]?.id, listed[7], 'the second page starts where the first ended');
    const order = summaries.map((p) => `${p.created_at} ${p.id}`);
    assert.deepEqual(order, [...order].sort().reverse(), 'newest first, then by id');
    const failed = [];
    for await (const summary of client.allPayments({ status: 'failed', type: 'bank_credit', limit: 1 })) {
      failed.push(summary);
    }
    assert.ok(failed.every((p) => p.status === 'failed' && p.type === 'bank_credit'));
    const bad = await client.listPayments({ starting_after: 'payment-acme-not-mine' }).catch((e: unknown) => e);
    assert.ok(bad instanceof PaymentsApiError);
    assert.deepEqual([bad.status, bad.code, bad.fields[0]?.path], [400, 'invalid_request', 'starting_after']);
  });

  it('submits a batch, follows it to completion and pages through its items', async () => {
    const body = batchBody(uniqueReference('client'), 5, ['00', '11']);
    const batch = await client.createBatch(body);
    assert.equal(batch.total.count, 5);
    assert.equal((await client.createBatch(body)).id, batch.id, 'the same batch again');
    const progress = await eventually(
      async () => {
        const now = await client.getBatch(batch.id);
        assert.equal(now.status, 'completed');
        return now;
      },
      { timeoutMs: 30_000, what: `batch ${batch.id} completed` },
    );
    assert.deepEqual([progress.items.succeeded.count, progress.items.failed.count], [3, 2]);
    const items = await eventually(
      async () => {
        const references: string[] = [];
        for await (const item of client.allBatchItems(batch.id, { limit: 2 })) references.push(item.reference ?? '');
        assert.ok(references.length >= 5, `${references.length} items`);
        return references;
      },
      { timeoutMs: 10_000, what: `the 5 items of batch ${batch.id} paged through` },
    );
    assert.deepEqual(items.sort(), body.items.map((item) => item.reference).sort());
    const late = await client.pauseBatch(batch.id).catch((e: unknown) => e);
    assert.ok(late instanceof PaymentsApiError);
    assert.equal(late.code, 'conflict');
  });

  it('retries a 503 after its Retry-After with the same request: one payment, one upstream call', async () => {
    const viaProxy = new PaymentsClient({ baseUrl: proxy.url, apiKey: CLIENT_KEY, retryDelayMs: 50 });
    const body = paymentRequest('mobile_money_debit', '00', uniqueReference('retry'));
    proxy.seen.length = 0;
    proxy.faults.push('forward-then-503');
    const started = Date.now();
    const payment = await viaProxy.createPayment(body);
    assert.ok(Date.now() - started >= 900, 'waited for Retry-After: 1');
    assert.equal(payment.reference, body.reference);
    assert.equal(proxy.seen.length, 2);
    assert.equal(proxy.seen[0]?.body, proxy.seen[1]?.body, 'the same request twice');
    assert.equal(proxy.seen[0]?.requestId, proxy.seen[1]?.requestId, 'one request id for both attempts');
    assert.equal((await viaProxy.waitForOutcome(payment.id, fast)).status, 'succeeded');
    assert.equal((await stack.upstreamRequests(payment.id)).length, 1);
  });

  it('retries a dropped connection; never retries a 4xx, which comes back typed', async () => {
    const viaProxy = new PaymentsClient({ baseUrl: proxy.url, apiKey: CLIENT_KEY, retryDelayMs: 50 });
    proxy.seen.length = 0;
    proxy.faults.push('forward-then-drop');
    const payment = await viaProxy.createPayment(paymentRequest('bank_credit', '00', uniqueReference('drop')));
    assert.equal(proxy.seen.length, 2);
    assert.equal((await stack.upstreamRequests(payment.id)).length <= 1, true);

    proxy.seen.length = 0;
    const invalid = { ...paymentRequest('mobile_money_debit', '00'), amount: -1 };
    const error = await viaProxy.createPayment(invalid).catch((e: unknown) => e);
    assert.ok(error instanceof PaymentsApiError);
    assert.deepEqual([error.status, error.code], [400, 'invalid_request']);
    assert.deepEqual(
      error.fields.map((f) => f.path),
      ['amount'],
    );
    assert.ok(error.requestId);
    assert.equal(proxy.seen.length, 1, 'a 4xx is not retried');
  });

  it('gives up after its timeout on every attempt', async () => {
    const viaProxy = new PaymentsClient({ baseUrl: proxy.url, apiKey: CLIENT_KEY, timeoutMs: 300, retries: 1 });
    proxy.seen.length = 0;
    proxy.faults.push('hang', 'hang');
    const started = Date.now();
    const error = await viaProxy.getPayment('payment-x-y').catch((e: unknown) => e);
    assert.ok(error instanceof PaymentsTimeoutError, String(error));
    assert.equal(proxy.seen.length, 2, 'one retry');
    assert.ok(Date.now() - started < 5000);
    const wait = await client
      .waitForOutcome(settled.get('mobile_money_debit/44')?.id ?? '', { ...fast, timeoutMs: 300 })
      .catch((e: unknown) => e);
    assert.ok(wait instanceof PaymentsTimeoutError, 'a payment in review is no outcome');
  });

  it('verifies notifications, and a verified one ends a wait at once', async () => {
    const pending = await client.createPayment(paymentRequest('mobile_money_debit', '33', uniqueReference('notify')));
    const waiting = client.waitForOutcome(pending.id, { pollIntervalMs: 60_000, timeoutMs: 30_000 });
    const object = { ...(await client.getPayment(pending.id)), status: 'succeeded' as const };
    const raw = JSON.stringify({
      id: 'evt_0123456789abcdef',
      type: 'payment.succeeded',
      created_at: new Date().toISOString(),
      merchant_id: merchant,
      data: { object },
    });
    const header = signNotification(raw, [NOTIFICATION_SECRET]);
    const event = verifyNotification(raw, header, ['whsec_old_secret_0123456789', NOTIFICATION_SECRET]);
    assert.equal(event.type, 'payment.succeeded');
    const started = Date.now();
    client.notificationReceived(event);
    assert.equal((await waiting).status, 'succeeded');
    assert.ok(Date.now() - started < 1000, 'no poll needed');
    assert.equal(SIGNATURE_HEADER, 'payments-signature');
    assert.throws(
      () => verifyNotification(raw.replace('succeeded', 'failed'), header, NOTIFICATION_SECRET),
      (err) => {
        return err instanceof NotificationSignatureError;
      },
    );
    const notAnEvent = JSON.stringify({ hello: 'world' });
    assert.throws(
      () => verifyNotification(notAnEvent, signNotification(notAnEvent, [NOTIFICATION_SECRET]), NOTIFICATION_SECRET),
      /not a notification event/,
    );
  });

  it("runs the README's example as written, from the package as a merchant installs it (ES module and CommonJS)", async () => {
    const code = readmeExample();
    assert.ok(code.includes("from '@payments/client'"), code);
    assert.ok(code.includes('waitForOutcome') && code.trim().split('\n').length <= 10, code);
    const consumer = packedConsumer();
    try {
      const example = code
        .replace('http://localhost:3000', stack.baseUrl)
        .replace("'order-1002'", 'process.env.REFERENCE');
      // The example is TypeScript that is JavaScript too: plain node runs it, with no tsx and no build of its own.
      writeFileSync(join(consumer.dir, 'example.mjs'), example);
      const required = example.replace(
        "import { PaymentsClient } from '@payments/client';",
        "const { PaymentsClient } = require('@payments/client');",
      );
      assert.notEqual(required, example);
      writeFileSync(join(consumer.dir, 'example.cjs'), `(async () => {\n${required}\n})();\n`);
      for (const file of ['example.mjs', 'example.cjs']) {
        const { code: exit, output } = await runNode([join(consumer.dir, file)], {
          KEY: CLIENT_KEY,
          REFERENCE: uniqueReference('readme'),
        });
        assert.equal(exit, 0, `${file}: ${output}`);
        assert.match(output, /^succeeded/, file);
      }
    } finally {
      consumer.remove();
    }
  });
});
