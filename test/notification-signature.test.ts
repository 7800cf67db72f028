import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import {
  NotificationSignatureError,
  SIGNATURE_HEADER,
  signNotification,
  standardWebhookHeaders,
  verifySignature,
} from '@payments/client';
import { createSandbox } from '../src/sandbox/sandbox-app';
import type { Sandbox } from '../src/sandbox/sandbox-app';
import type { ReceivedNotification } from '../src/sandbox/merchant-inbox';

const SECRET = 'whsec_unit_0123456789abcdef0123456789';
const NEW_SECRET = 'whsec_unit_new_abcdef0123456789abcdef';
const BODY = JSON.stringify({
  id: 'evt_0123456789abcdef',
  type: 'payment.succeeded',
  data: { object: { amount: 12.5 } },
});
const NOW = new Date('2026-05-01T12:00:00Z');

describe('the notification signature (Payments-Signature: t=…,v1=…)', () => {
  it('verifies the exact body it signed, within 300 s either way', () => {
    const header = signNotification(BODY, [SECRET], NOW);
    assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
    verifySignature(BODY, header, SECRET, { now: new Date(NOW.getTime() + 299_000) });
    verifySignature(BODY, header, [SECRET], { now: new Date(NOW.getTime() - 299_000) });
  });

  it('refuses a tampered body: one changed amount, or whitespace added', () => {
    const header = signNotification(BODY, [SECRET], NOW);
    for (const tampered of [BODY.replace('12.5', '125'), `${BODY} `, JSON.stringify(JSON.parse(BODY), null, 2)]) {
      assert.throws(
        () => verifySignature(tampered, header, SECRET, { now: NOW }),
        (err) => err instanceof NotificationSignatureError && /no signature matches/.test(err.message),
      );
    }
  });

  it('refuses a stale timestamp (a replayed notification), and a tolerance can be set', () => {
    const header = signNotification(BODY, [SECRET], NOW);
    const later = new Date(NOW.getTime() + 301_000);
    assert.throws(() => verifySignature(BODY, header, SECRET, { now: later }), /more than 300 s from now/);
    verifySignature(BODY, header, SECRET, { now: later, toleranceSeconds: 600 });
    // A fresh timestamp on an old signature is a forgery, not a fresh notification.
    const moved = header.replace(/^t=\d+/, `t=${Math.floor(later.getTime() / 1000)}`);
    assert.throws(() => verifySignature(BODY, moved, SECRET, { now: later }), /no signature matches/);
  });

  it('while a secret rotates, signs with both, and a receiver holding either verifies', () => {
    const header = signNotification(BODY, [SECRET, NEW_SECRET], NOW);
    assert.equal(header.match(/v1=/g)?.length, 2);
    verifySignature(BODY, header, SECRET, { now: NOW });
    verifySignature(BODY, header, [NEW_SECRET], { now: NOW });
    assert.throws(() => verifySignature(BODY, header, 'whsec_someone_else_0123456789', { now: NOW }), /no signature/);
    // After the overlap, only the new secret signs: the old one no longer verifies.
    const after = signNotification(BODY, [NEW_SECRET], NOW);
    assert.throws(() => verifySignature(BODY, after, SECRET, { now: NOW }), NotificationSignatureError);
  });

  it('refuses a missing or malformed header', () => {
    const t = Math.floor(NOW.getTime() / 1000);
    for (const header of [undefined, '', 'v1=abc', `t=${t}`, `t=${t},t=${t},v1=00`, `t=soon,v1=00`, 'garbage']) {
      assert.throws(() => verifySignature(BODY, header, SECRET, { now: NOW }), NotificationSignatureError, header);
    }
    assert.throws(() => verifySignature(BODY, `t=${t},v1=zz`, SECRET, { now: NOW }), /no signature matches/);
    assert.throws(() => signNotification(BODY, [], NOW), /no notification signing secret/);
  });
});

describe("the sandbox's merchant side", () => {
  let sandbox: Sandbox;
  const token = 'sandbox-unit-token';
  before(async () => {
    sandbox = await createSandbox({
      token,
      callbackDelayMs: 100,
      slowResponseMs: 1000,
      port: 0,
      notificationSecrets: [SECRET],
    });
  });
  after(() => sandbox?.close());

  const send = (body: string, header: string | undefined) =>
    request(`${sandbox.url}/merchant/notifications`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...(header ? { [SIGNATURE_HEADER]: header } : {}) },
    });
  const call = async (method: 'GET' | 'PUT', path: string, body?: unknown, bearer = token) => {
    const response = await request(`${sandbox.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.statusCode, body: await response.body.json() };
  };

  it('accepts a signed notification, refuses a tampered or stale one, and lists what it received', async () => {
    assert.equal((await send(BODY, signNotification(BODY, [SECRET]))).statusCode, 200);
    const tampered = await send(BODY.replace('12.5', '125'), signNotification(BODY, [SECRET]));
    assert.equal(tampered.statusCode, 400);
    const stale = await send(BODY, signNotification(BODY, [SECRET], new Date(Date.now() - 600_000)));
    assert.equal(stale.statusCode, 400);
    assert.equal((await send(BODY, undefined)).statusCode, 400);

    const listed = (await call('GET', '/merchant/notifications')).body as ReceivedNotification[];
    assert.deepEqual(
      listed.map((n) => [n.verified, n.answered, n.event_id]),
      [
        [true, 200, 'evt_0123456789abcdef'],
        [false, 400, 'evt_0123456789abcdef'],
        [false, 400, 'evt_0123456789abcdef'],
        [false, 400, 'evt_0123456789abcdef'],
      ],
    );
    assert.match(listed[1]!.verification_error ?? '', /tampered/);
    assert.match(listed[2]!.verification_error ?? '', /300 s/);
    // Its inbox is the merchant's: the sandbox's token guards it.
    assert.equal((await call('GET', '/merchant/notifications', undefined, 'wrong')).status, 401);
  });

  it('fails as told: an error status for the next N, then 410, then answers 2xx again', async () => {
    const signed = () => signNotification(BODY, [SECRET]);
    assert.equal(
      (await call('PUT', '/merchant/notifications/mode', { mode: 'fail', status: 503, times: 2 })).status,
      200,
    );
    assert.equal((await send(BODY, signed())).statusCode, 503);
    assert.equal((await send(BODY, signed())).statusCode, 503);
    assert.equal((await send(BODY, signed())).statusCode, 200);
    await call('PUT', '/merchant/notifications/mode', { mode: 'gone' });
    assert.equal((await send(BODY, signed())).statusCode, 410);
    await call('PUT', '/merchant/notifications/mode', { mode: 'ok' });
    assert.equal((await send(BODY, signed())).statusCode, 200);
    assert.equal((await call('PUT', '/merchant/notifications/mode', { mode: 'sometimes' })).status, 422);
  });

  it('checks the Standard Webhooks signature too when a delivery carries one', async () => {
    const both = (standardBody: string) => ({
      ...standardWebhookHeaders('evt_0123456789abcdef', standardBody, [SECRET]),
      [SIGNATURE_HEADER]: signNotification(BODY, [SECRET]),
    });
    const post = (headers: Record<string, string>) =>
      request(`${sandbox.url}/merchant/notifications`, {
        method: 'POST',
        body: BODY,
        headers: { 'content-type': 'application/json', ...headers },
      });
    assert.equal((await post(both(BODY))).statusCode, 200);
    // Payments-Signature holds, the Standard Webhooks signature does not: refused.
    const forged = await post(both(BODY.replace('12.5', '125')));
    assert.equal(forged.statusCode, 400);
    const { [SIGNATURE_HEADER]: _legacy, ...standardOnly } = both(BODY);
    assert.equal((await post(standardOnly)).statusCode, 200);
    const listed = (await call('GET', '/merchant/notifications')).body as ReceivedNotification[];
    assert.deepEqual(
      listed.slice(-3).map((n) => n.verified),
      [true, false, true],
    );
  });
});
