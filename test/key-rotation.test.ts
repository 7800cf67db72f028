import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { request } from 'undici';
import { parseKeyring } from '../src/crypto/keyring';
import { EncryptionCodec, KEY_ID_METADATA } from '../src/temporal/codec';
import { paymentRequest } from './support/request-builders';
import {
  ROTATION_NEW_KEY,
  ROTATION_OLD_KEY,
  startStack,
  testCallbackTokens,
  testEnvironment,
} from './support/test-stack';
import type { Stack } from './support/test-stack';

const OLD = ROTATION_OLD_KEY;
const NEW = ROTATION_NEW_KEY;
const CALLBACK_SECRET = 'test-callback-secret-0123456789abcdef';

describe('encryption keys rotate', () => {
  it('the first key encrypts, every key decrypts; an unknown key or altered data is refused', async () => {
    const payload = defaultPayloadConverter.toPayload({ phone_number: '233241234567' });
    const oldCodec = new EncryptionCodec(parseKeyring(OLD));
    const rotated = new EncryptionCodec(parseKeyring(`${NEW},${OLD}`));
    const [sealed] = await oldCodec.encode([payload]);
    assert.ok(sealed?.data && !Buffer.from(sealed.data).toString('latin1').includes('233241234567'));
    assert.equal(Buffer.from(sealed.metadata?.[KEY_ID_METADATA] ?? []).toString(), 'old');
    const [opened] = await rotated.decode([sealed]);
    assert.deepEqual(defaultPayloadConverter.fromPayload(opened!), { phone_number: '233241234567' });
    const [resealed] = await rotated.encode([payload]);
    assert.equal(Buffer.from(resealed?.metadata?.[KEY_ID_METADATA] ?? []).toString(), 'new');
    await assert.rejects(oldCodec.decode([resealed!]), /no encryption key with id "new"/);
    const altered = { ...sealed, data: Buffer.from(sealed.data) };
    altered.data[20] = (altered.data[20] ?? 0) ^ 1;
    await assert.rejects(rotated.decode([altered]));
  });

  const stacks: Stack[] = [];
  after(async () => {
    for (const stack of stacks) await stack.close().catch(() => undefined);
  });

  it('a payment started under the old key completes after the worker and server move to a new one', async () => {
    const env = { CALLBACK_TIMEOUT_MOBILE_MONEY: '1h', LATE_CALLBACK_WINDOW: '1s', CALLBACK_SECRET };
    // One provider ledger across both stacks: the new one's status query must know the transaction.
    const sandbox = { dataFile: join(mkdtempSync(join(tmpdir(), 'rotation-')), 'sandbox.json') };
    const before = await startStack({ env: { ...env, ENCRYPTION_KEYS: OLD }, sandbox });
    stacks.push(before);
    // Scenario 33 never calls back: the payment waits while the keys change.
    const created = await before.api('POST', '/v1/payments', paymentRequest('mobile_money_debit', '33'));
    assert.equal(created.status, 201);
    await before.waitForStatus(created.body.id, ['pending']);
    await before.close();
    stacks.pop();

    const afterRotation = await startStack({
      taskQueue: before.taskQueue,
      sandbox,
      env: { ...env, ENCRYPTION_KEYS: `${NEW},${OLD}` },
    });
    stacks.push(afterRotation);
    const id = created.body.id;
    const pending = await afterRotation.waitForStatus(id, ['pending']);
    const transactionId = pending.provider.transaction_id;
    const token = testCallbackTokens().tokenFor(id);
    // A callback is a hint: the provider's status query says succeeded too.
    assert.ok(afterRotation.sandbox.succeedSilently(Number(transactionId)));
    const callback = await request(`${afterRotation.baseUrl}/v1/callbacks/${encodeURIComponent(id)}/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: '1', message: 'paid', amount: 12.5, transaction_id: transactionId }),
    });
    assert.equal(callback.statusCode, 200);
    await callback.body.dump();
    await afterRotation.waitForStatus(id, ['succeeded']);

    const raw = new Client({ connection: await Connection.connect({ address: testEnvironment().address }) });
    try {
      const history = await raw.workflow.getHandle(id).fetchHistory();
      const keyIds = (history.events ?? []).flatMap((event) => {
        const payloads =
          event.workflowExecutionStartedEventAttributes?.input?.payloads ??
          event.workflowExecutionSignaledEventAttributes?.input?.payloads ??
          [];
        return payloads.map((p) => Buffer.from(p.metadata?.[KEY_ID_METADATA] ?? []).toString());
      });
      assert.deepEqual(keyIds, ['old', 'new'], 'the input under the old key, the later signal under the new one');
    } finally {
      await raw.connection.close();
    }
  });
});
