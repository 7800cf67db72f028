import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { NotificationSignatureError, verifyNotification, webhookKey } from '@payments/client';
import { newWebhookSecret } from '../src/crypto/webhook-secrets';
import { NOTIFICATION_TYPES, notificationEventSchema } from '../src/domain/notification';
import type { NotificationEvent } from '../src/domain/notification';
import { batchExample } from '../src/http/batch-routes';
import { postEvent } from '../src/notifications/webhook-post';
import { apiDocument, compileDocumented } from './support/openapi-checks';

// Deliveries as a receiver sees them: postEvent sends to a local HTTP server, which keeps the exact bytes and
// headers; the Standard Webhooks reference library (npm `standardwebhooks`) and our client then verify them.

type Json = Record<string, unknown>;

interface Received {
  body: string;
  /** As Node hands them to a handler. */
  raw: IncomingHttpHeaders;
  headers: Record<string, string>;
}

const event = (id: string): NotificationEvent =>
  notificationEventSchema.parse({
    id,
    type: 'batch.completed',
    created_at: '2026-05-01T12:00:00.000Z',
    merchant_id: 'acme',
    data: { object: { ...batchExample, status: 'completed' } },
  });

/** Header values as a plain object of strings, as the reference library takes them. */
function plain(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).flatMap(([name, value]) => (typeof value === 'string' ? [[name, value]] : [])),
  );
}

describe('Standard Webhooks on every delivery', () => {
  const received: Received[] = [];
  let server: Server;
  let url: string;
  // A new secret (whsec_ + base64: the key is the decoded bytes) and an existing plain one (the key is its bytes).
  const fresh = newWebhookSecret();
  const legacy = 'plain_merchant_secret_0123456789abcdef';

  before(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({
          body: Buffer.concat(chunks).toString('utf8'),
          raw: request.headers,
          headers: plain(request.headers),
        });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  });
  after(() => server?.close());

  async function deliver(id: string, now = new Date()): Promise<Received> {
    const outcome = await postEvent({ url, secrets: [fresh, legacy] }, event(id), { timeoutMs: 5000, now });
    assert.equal(outcome.statusCode, 204);
    const delivery = received.at(-1);
    assert.ok(delivery);
    return delivery;
  }

  it('carries webhook-id (the event id, also Idempotency-Key), webhook-timestamp and one v1 per secret', async () => {
    const before = Math.floor(Date.now() / 1000);
    const { headers } = await deliver('evt_headers_0123456789');
    assert.equal(headers['webhook-id'], 'evt_headers_0123456789');
    assert.equal(headers['idempotency-key'], 'evt_headers_0123456789');
    const timestamp = Number(headers['webhook-timestamp']);
    assert.ok(timestamp >= before && timestamp <= Math.floor(Date.now() / 1000), String(timestamp));
    assert.match(headers['webhook-signature'] ?? '', /^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    assert.match(headers['payments-signature'] ?? '', new RegExp(`^t=${timestamp},v1=[0-9a-f]{64},v1=[0-9a-f]{64}$`));
  });

  it('verifies with the standardwebhooks package: a whsec_ secret as given, a plain one as a raw secret', async () => {
    const { body, headers } = await deliver('evt_reference_0123456789');
    const parsed = new Webhook(fresh).verify(body, headers) as Json;
    assert.equal(parsed.id, 'evt_reference_0123456789');
    const alsoParsed = new Webhook(legacy, { format: 'raw' }).verify(body, headers) as Json;
    assert.equal(alsoParsed.type, 'batch.completed');
    assert.throws(() => new Webhook(newWebhookSecret()).verify(body, headers), /No matching signature/);
  });

  it('verifies with our client, from the headers (Node or Fetch) or from Payments-Signature alone', async () => {
    const { body, raw, headers } = await deliver('evt_client_0123456789');
    for (const secret of [fresh, legacy]) {
      assert.equal(verifyNotification(body, raw, secret).id, 'evt_client_0123456789');
      assert.equal(verifyNotification(Buffer.from(body), new Headers(headers), [secret]).type, 'batch.completed');
      assert.equal(verifyNotification(body, headers['payments-signature'], secret).id, 'evt_client_0123456789');
    }
    // A receiver behind a proxy that drops one scheme's headers still verifies with the other.
    const { 'payments-signature': _legacyHeader, ...standardOnly } = headers;
    assert.equal(verifyNotification(body, standardOnly, fresh).id, 'evt_client_0123456789');
    const { 'webhook-signature': _standardHeader, ...legacyOnly } = headers;
    assert.equal(verifyNotification(body, legacyOnly, legacy).id, 'evt_client_0123456789');
    assert.throws(() => verifyNotification(body, {}, fresh), /payments-signature header is missing/);
    assert.throws(() => verifyNotification(body, headers, newWebhookSecret()), NotificationSignatureError);
  });

  it('refuses a tampered body, timestamp or id, and a stale delivery, in both verifiers', async () => {
    const { body, headers } = await deliver('evt_tampered_0123456789');
    const timestamp = Number(headers['webhook-timestamp']);
    const richer = body.replace('"amount":250', '"amount":2500');
    assert.notEqual(richer, body);
    const tampered: [string, Record<string, string>][] = [
      [richer, headers],
      [`${body} `, headers],
      [body, { ...headers, 'webhook-timestamp': String(timestamp - 1) }],
      [body, { ...headers, 'webhook-id': 'evt_another_0123456789' }],
    ];
    for (const [tamperedBody, tamperedHeaders] of tampered) {
      assert.throws(() => new Webhook(fresh).verify(tamperedBody, tamperedHeaders), /No matching signature/);
      for (const secret of [fresh, legacy]) {
        assert.throws(
          () => verifyNotification(tamperedBody, tamperedHeaders, secret),
          (err) => err instanceof NotificationSignatureError && /no signature matches/.test(err.message),
        );
      }
    }
    const stale = await deliver('evt_stale_0123456789', new Date(Date.now() - 600_000));
    assert.throws(() => new Webhook(fresh).verify(stale.body, stale.headers), /too old/);
    assert.throws(() => verifyNotification(stale.body, stale.headers, fresh), /more than 300 s from now/);
    assert.throws(
      () => verifyNotification(stale.body, { ...stale.headers, 'webhook-timestamp': 'soon' }, fresh),
      /malformed/,
    );
  });

  it("refuses a body signed for one event presented with another's id, when both are signed together", () => {
    // Signed for evt_a, the body says evt_b: the signature holds (the id is what was signed) but the event is not it.
    const body = JSON.stringify(event('evt_b_0123456789'));
    const signed = new Webhook(fresh).sign('evt_a_0123456789', new Date(), body);
    const headers = {
      'webhook-id': 'evt_a_0123456789',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': signed,
    };
    assert.throws(() => verifyNotification(body, headers, fresh), /not the event's id/);
  });
});

describe('notification secrets', () => {
  it('are new as whsec_ + base64 of 32 random bytes, the key being the decoded bytes', () => {
    const secret = newWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(webhookKey(secret), Buffer.from(secret.slice(6), 'base64'));
    assert.notEqual(newWebhookSecret(), secret);
  });

  it('sign as the reference library signs: whsec_ secrets decoded, any other secret as raw bytes', () => {
    const now = new Date('2026-05-01T12:00:00Z');
    const body = '{"id":"evt_0123456789"}';
    const sign = (secret: string) => {
      const key = webhookKey(secret);
      return new Webhook(key, { format: 'raw' }).sign('evt_0123456789', now, body);
    };
    const fresh = newWebhookSecret();
    assert.equal(sign(fresh), new Webhook(fresh).sign('evt_0123456789', now, body));
    // Not standard base64 (an older whsec_ secret in base64url, or any plain secret): the whole text is the key.
    for (const raw of ['whsec_abc-def_ghi0123456789abcdefgh', 'whsec_YWI', 'plain_secret_0123456789']) {
      assert.deepEqual(webhookKey(raw), Buffer.from(raw, 'utf8'));
      assert.equal(sign(raw), new Webhook(raw, { format: 'raw' }).sign('evt_0123456789', now, body));
    }
  });
});

describe("the OpenAPI document's webhooks", () => {
  const webhooks = apiDocument.webhooks as Record<string, { post: Json }>;

  it('has one entry per notification event type, with the signature headers and a body schema', () => {
    assert.deepEqual(Object.keys(webhooks).sort(), [...NOTIFICATION_TYPES].sort());
    for (const [type, { post }] of Object.entries(webhooks)) {
      const headers = (post.parameters as { name: string; in: string; required: boolean }[])
        .filter((parameter) => parameter.in === 'header' && parameter.required)
        .map((parameter) => parameter.name);
      for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'payments-signature']) {
        assert.ok(headers.includes(name), `${type}: ${name}`);
      }
      const content = (post.requestBody as { content: Record<string, { schema: Json; example: Json }> }).content[
        'application/json'
      ];
      assert.ok(content);
      const validate = compileDocumented(content.schema);
      assert.ok(validate(content.example), `${type}: ${JSON.stringify(validate.errors)}`);
      assert.equal(
        validate({ ...content.example, type: type.startsWith('batch.') ? 'payment.failed' : 'batch.completed' }),
        false,
        type,
      );
      assert.equal(validate({ ...content.example, extra: true }), false, `${type}: strict`);
      assert.ok(verifyNotificationShape(content.example), type);
    }
  });
});

/** Whether an example is an event our client accepts (signed here with a throwaway secret). */
function verifyNotificationShape(example: Json): boolean {
  const secret = newWebhookSecret();
  const body = JSON.stringify(example);
  const id = String(example.id);
  // One instant for both: a second boundary between two clock reads made the signature another second's.
  const now = new Date();
  const headers = {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, now, body),
  };
  return verifyNotification(body, headers, secret).id === id;
}
