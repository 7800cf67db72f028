import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { ApplicationFailure } from '@temporalio/common';
import { createClient } from 'redis';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createPaymentActivities } from '../src/activities/payment-activities';
import type { PaymentMessage } from '../src/domain/payment-model';
import { signMessage } from '../src/crypto/signing';
import { open, parseKeyring } from '../src/crypto/keyring';
import { FailureTypes } from '../src/domain/payment-model';
import type { InitiationVerdict, PaymentInput, ProviderAck } from '../src/domain/payment-model';
import type { Signed } from '../src/domain/signed';
import { createProviderClient } from '../src/provider/provider-client';
import type { ProviderClient } from '../src/provider/provider-client';
import { EncryptionCodec } from '../src/temporal/codec';
import { createPaymentWorker } from '../src/temporal/payment-worker';
import { vaultKey } from '../src/vault/card-vault';
import { detachCard } from '../src/vault/card-vault';
import { startRedisServer } from '../src/local/redis-server';
import type { RedisServer } from '../src/local/redis-server';
import { createRedisVault } from '../src/vault/redis-vault';
import { freePort } from '../src/local/free-port';
import { paymentRequest } from './support/request-builders';
import { recordDatabase } from './support/record-database';
import {
  OPERATOR_KEY,
  SANDBOX_TOKEN,
  startStack,
  testCallbackTokens,
  TEST_ENCRYPTION_KEYS,
  TEST_SIGNING_KEYS,
  TEST_VAULT_KEYS,
  testDatabaseUrl,
  testEnvironment,
  workerDeps,
} from './support/test-stack';
import { openDatabase } from '../src/records/database';
import { parseConfig } from '../src/config/config-loading';
import { workerSchema } from '../src/config/process-settings';
import type { Stack } from './support/test-stack';

// A card payment whose vault entry is gone before the initiation fails cleanly, and nothing reaches the provider.

describe('card vault', () => {
  let stack: Stack | undefined;
  const stacks: Stack[] = [];
  const servers: RedisServer[] = [];
  after(async () => {
    await stack?.close();
    for (const each of stacks) await each.close();
    for (const server of servers) {
      if (server.process.exitCode === null && server.process.signalCode === null) server.process.kill('SIGCONT');
      await server.stop();
    }
  });

  it('Redis hung or down: a card payment is a 503 within 2 s and nothing is started', async () => {
    const redis = await startRedisServer(await freePort());
    servers.push(redis);
    const own = await startStack({ withoutWorker: true, env: { VAULT_URL: redis.url } });
    stacks.push(own);
    const attempt = async () => {
      const body = paymentRequest('card_payment', '00');
      const started = Date.now();
      const answer = await own.api<{ error: { code: string } }>('POST', '/v1/payments', body);
      const elapsedMs = Date.now() - started;
      const id = `payment-acme-${body.reference}`;
      const lookup = await own.api('GET', `/v1/payments/${id}`, undefined, OPERATOR_KEY);
      return { status: answer.status, code: answer.body.error?.code, elapsedMs, lookup: lookup.status };
    };
    assert.equal((await attempt()).status, 201, 'the vault works while Redis does');
    // Hung: the connection stays open and nothing answers (commands time out).
    redis.process.kill('SIGSTOP');
    const hung = await attempt();
    redis.process.kill('SIGCONT');
    // Down: the connection is gone (commands are refused at once, not queued until it comes back).
    await redis.stop();
    const down = await attempt();
    for (const [name, result] of Object.entries({ hung, down })) {
      assert.equal(result.status, 503, name);
      assert.equal(result.code, 'unavailable', name);
      assert.ok(result.elapsedMs <= 2000, `${name}: answered in ${result.elapsedMs} ms`);
      assert.equal(result.lookup, 404, `${name}: no workflow was started`);
    }
  });

  it('Redis down at initiation: the activity waits for it, sends once it is back, and gives up with nothing sent', async () => {
    const port = await freePort();
    const password = 'vault-wait-test-password';
    const dataDir = mkdtempSync(join(tmpdir(), 'vault-wait-'));
    let redis = await startRedisServer(port, { password, dataDir });
    servers.push(redis);
    const keyring = parseKeyring(TEST_ENCRYPTION_KEYS);
    const cardVault = await createRedisVault({ url: redis.url, keyring });
    const records = await recordDatabase();
    let sent = 0;
    const provider: ProviderClient = {
      initiate: () => {
        sent += 1;
        return Promise.resolve({ transactionId: '1', statusCode: '411', message: 'pending', redirectUrl: null });
      },
      checkStatus: () => Promise.resolve(null),
      canCheckStatus: false,
      listBanks: () => Promise.resolve([]),
      close: () => Promise.resolve(),
    };
    const deps = {
      provider,
      cardVault,
      database: records.db,
      signingKeys: parseKeyring(TEST_SIGNING_KEYS),
      callbackTokens: testCallbackTokens('https://pay.example'),
      vaultWaitMs: 3000,
    };
    const activities = createPaymentActivities(deps);
    /** The signed start message of a card payment, its card data in the vault (while Redis runs). */
    const orderFor = async (reference: string) => {
      const request = await detachCard(paymentRequest('card_payment', '00', reference), cardVault);
      const paymentId = `payment-acme-${reference}`;
      return signMessage(
        deps.signingKeys,
        'payment',
        paymentId,
        {
          paymentId,
          merchantId: 'acme',
          request,
          createdAt: new Date().toISOString(),
          timing: { callbackTimeoutMs: 1, reconcileForMs: 1, reconcileIntervalMs: 1 },
        },
        { namespace: 'default', taskQueue: 'test' },
      );
    };
    const initiate = (order: Awaited<ReturnType<typeof orderFor>>) => {
      const workflowExecution = { workflowId: order.body.paymentId, runId: 'run-1' };
      return new MockActivityEnvironment({ workflowExecution }).run<
        [PaymentMessage],
        Signed<ProviderAck>,
        (what: PaymentMessage) => Promise<Signed<ProviderAck>>
      >((what) => activities.initiatePayment(what), order);
    };
    const [back, down] = [await orderFor('vault-back'), await orderFor('vault-down')];

    // Redis restarts within the wait (keeping its data, as a persisted Redis does): the initiation goes out after.
    await redis.stop();
    const waiting = initiate(back);
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(sent, 0, 'nothing sent while the vault is down');
    redis = await startRedisServer(port, { password, dataDir });
    servers.push(redis);
    assert.equal((await waiting).body.transactionId, '1', 'sent once Redis was back');
    assert.equal(sent, 1);

    // Redis stays down: after the wait the payment fails cleanly, nothing sent.
    await redis.stop();
    const started = Date.now();
    const failure = await initiate(down).then(
      () => assert.fail('the initiation must fail'),
      (err: unknown) => err,
    );
    const elapsedMs = Date.now() - started;
    await cardVault.close();
    await records.close();
    assert.ok(failure instanceof ApplicationFailure, String(failure));
    assert.equal(failure.type, FailureTypes.rejected, 'a definite failure: the payment fails, no review');
    assert.equal(failure.nonRetryable, true);
    // The verdict travels signed for the activity that failed (docs/security.md, "Signed and bound messages").
    assert.deepEqual((failure.details?.[0] as Signed<InitiationVerdict>).body, {
      verdict: 'rejected',
      failure: {
        code: 'card_data_unavailable',
        message: 'the card vault could not be read; nothing was sent to the provider',
      },
    });
    assert.equal(sent, 1, 'nothing more sent to the provider');
    assert.ok(elapsedMs >= 2000 && elapsedMs <= 6000, `gave up after ${elapsedMs} ms (the wait is 3 s)`);
  });

  it('a card payment whose card data expired fails with card_data_unavailable, nothing sent upstream', async () => {
    stack = await startStack({ withoutWorker: true });
    const created = await stack.api('POST', '/v1/payments', paymentRequest('card_payment', '00'));
    assert.equal(created.status, 201);
    assert.equal(created.body.status, 'initiating', 'no worker yet');
    const { address, bundlePath, vaultUrl } = testEnvironment();
    const keyring = parseKeyring(TEST_ENCRYPTION_KEYS);

    // The token, from the workflow's (encrypted) input; then the entry disappears as if it had expired.
    const raw = new Client({ connection: await Connection.connect({ address }) });
    const history = await raw.workflow.getHandle(created.body.id).fetchHistory();
    await raw.connection.close();
    const sealed = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    assert.ok(sealed);
    const [payload] = await new EncryptionCodec(keyring).decode([sealed]);
    const input = defaultPayloadConverter.fromPayload<Signed<PaymentInput>>(payload!).body;
    assert.ok(input.request.type === 'card_payment');
    const redis = createClient({ url: vaultUrl });
    await redis.connect();
    const stored = await redis.get(vaultKey(input.request.card.token));
    assert.ok(stored && !stored.includes('4111111111111111') && !stored.includes('"123"'), 'encrypted at rest');
    assert.ok((await redis.pTTL(vaultKey(input.request.card.token))) <= 15 * 60_000, 'expires within 15 minutes');
    // Sealed with VAULT_KEYS: whoever decodes Temporal's payloads (ENCRYPTION_KEYS, the Web UI's codec) cannot open it.
    const dot = stored.indexOf('.');
    const entry = { keyId: stored.slice(0, dot), data: Buffer.from(stored.slice(dot + 1), 'base64') };
    const aad = Buffer.from(vaultKey(input.request.card.token));
    const vaultKeys = parseKeyring(TEST_VAULT_KEYS);
    assert.equal(entry.keyId, vaultKeys.primary.id);
    assert.match(open(vaultKeys, entry, aad).toString('utf8'), /4111111111111111/);
    for (const { key } of keyring.byId.values()) {
      const posing = { primary: { id: entry.keyId, key }, byId: new Map([[entry.keyId, { id: entry.keyId, key }]]) };
      assert.throws(() => open(posing, entry, aad), 'an encryption key does not open the vault');
    }
    assert.equal(await redis.del(vaultKey(input.request.card.token)), 1, 'the entry was there');
    await redis.quit();

    const provider = createProviderClient({
      baseUrl: stack.sandbox.url,
      mobileMoneyBaseUrl: stack.sandbox.url,
      token: SANDBOX_TOKEN,
      connectTimeoutMs: 1000,
      requestTimeoutMs: 3000,
      safeRetries: 0,
    });
    const cardVault = await createRedisVault({ url: vaultUrl, keyring: parseKeyring(TEST_VAULT_KEYS) });
    const database = openDatabase(testDatabaseUrl(stack.workerEnv));
    const worker = await createPaymentWorker({
      temporal: { TEMPORAL_ADDRESS: address },
      taskQueue: stack.taskQueue,
      keyring,
      workflowBundlePath: bundlePath,
      deps: workerDeps(parseConfig(workerSchema, stack.workerEnv), provider, cardVault, database),
    });
    const running = worker.run();
    try {
      const payment = await stack.waitForStatus(created.body.id, ['failed']);
      assert.equal(payment.failure?.code, 'card_data_unavailable');
      assert.match(payment.failure?.message ?? '', /card data expired or was already used/);
      assert.equal((await stack.upstreamRequests(created.body.id)).length, 0);
    } finally {
      worker.worker.shutdown();
      await running;
      await provider.close();
      await cardVault.close();
      await database.end();
    }
  });
});
