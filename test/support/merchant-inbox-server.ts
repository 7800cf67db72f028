import assert from 'node:assert/strict';
import { request } from 'undici';
import type { ReceiverMode } from '../../src/sandbox/merchant-inbox';
import { SANDBOX_TOKEN } from './test-stack';
import type { Stack } from './test-stack';

/** Tells the stack's sandbox merchant side how to answer the next notifications (ok, fail, timeout, gone). */
export async function setReceiverMode(stack: Stack, mode: ReceiverMode): Promise<void> {
  const response = await request(`${stack.sandbox.url}/merchant/notifications/mode`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${SANDBOX_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(mode),
  });
  assert.equal(response.statusCode, 200);
  await response.body.dump();
}
