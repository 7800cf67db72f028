import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { createClient } from 'redis';
import { parseKeyring } from '../src/crypto/keyring';
import type { PaymentInput } from '../src/domain/payment';
import type { Signed } from '../src/domain/signed';
import { createProviderClient } from '../src/provider';
import { EncryptionCodec } from '../src/temporal/codec';
import { createPaymentWorker } from '../src/temporal/worker';
import { vaultKey } from '../src/vault/card-vault';
import { createRedisVault } from '../src/vault/redis-vault';
import { paymentRequest } from './support/requests';
import { SANDBOX_TOKEN, startStack, TEST_ENCRYPTION_KEYS, testEnvironment, workerDeps } from './support/stack';
import { parseConfig, workerSchema } from '../src/config';
import type { Stack } from './support/stack';

// A card payment whose vault entry is gone before the initiation fails cleanly, and nothing reaches the provider.

describe('card vault', () => {
  let stack: Stack | undefined;
  after(() => stack?.close());

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
    const cardVault = await createRedisVault({ url: vaultUrl, keyring });
    const worker = await createPaymentWorker({
      temporal: { TEMPORAL_ADDRESS: address },
      taskQueue: stack.taskQueue,
      keyring,
      workflowBundlePath: bundlePath,
      deps: workerDeps(parseConfig(workerSchema, stack.workerEnv), provider, cardVault),
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
    }
  });
});
