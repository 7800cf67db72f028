import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { verifyNotification } from '@payments/client';
import type { EventResource } from '../src/domain/notification-delivery';
import type { PaymentResource } from '../src/domain/payment-model';
import type { MerchantResource, WebhookEndpointResource } from '../src/domain/merchant-resources';
import { eventually } from '../src/local/eventually';
import { ops } from './support/ops-cli-runner';
import { paymentRequest } from './support/request-builders';
import { OPERATOR_KEY, startStack } from './support/test-stack';
import type { Stack } from './support/test-stack';

// Merchants, their API keys and their webhook endpoints are data in PostgreSQL: every change applies at once, on
// the running server and relay, whether made over HTTP or with the CLI (another process: heard through NOTIFY).

interface Issued {
  merchant: MerchantResource;
  api_key: string;
  previous_keys_expire_at: string | null;
}
interface EndpointSecret {
  endpoint: WebhookEndpointResource;
  secret: string;
}
interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

let stack: Stack;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];

/** A merchant id no earlier run used (the record database outlives a run). */
const newMerchantId = () => `m${randomBytes(5).toString('hex')}`;

/** The status a key gets on a merchant route that reads only the records. */
async function keyStatus(key: string): Promise<number> {
  return (await stack.api('GET', '/v1/webhook-endpoints', undefined, key)).status;
}

async function createMerchant(id = newMerchantId()): Promise<Issued> {
  const created = await stack.api<Issued>('POST', '/v1/merchants', { id, name: 'Test Ltd' }, OPERATOR_KEY);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body;
}

before(async () => {
  stack = await startStack();
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/notifications`;
});

after(async () => {
  await stack?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('merchants and their API keys', () => {
  it('an operator adds a merchant over HTTP: its key, shown once, works at once; only operators manage merchants', async () => {
    const issued = await createMerchant();
    assert.match(issued.api_key, /^mk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    assert.equal(issued.merchant.source, 'api');
    assert.equal(issued.merchant.keys.length, 1);
    assert.equal(issued.api_key.includes(issued.merchant.keys[0]!.id), true);
    assert.equal(await keyStatus(issued.api_key), 200);

    const listed = await stack.api<{ data: MerchantResource[] }>('GET', '/v1/merchants', undefined, OPERATOR_KEY);
    const shown = listed.body.data.find((m) => m.id === issued.merchant.id);
    assert.deepEqual(shown, issued.merchant);
    assert.doesNotMatch(JSON.stringify(listed.body), new RegExp(issued.api_key));

    const again = await stack.api('POST', '/v1/merchants', { id: issued.merchant.id }, OPERATOR_KEY);
    assert.equal(again.status, 409);
    const byMerchant = await stack.api('POST', '/v1/merchants', { id: newMerchantId() }, issued.api_key);
    assert.equal(byMerchant.status, 403);
    const bad = await stack.api('POST', '/v1/merchants', { id: 'Not An Id' }, OPERATOR_KEY);
    assert.equal(bad.status, 400);
    const unknown = await stack.api('POST', '/v1/merchants/nosuchmerchant0/keys/roll', {}, OPERATOR_KEY);
    assert.equal(unknown.status, 404);
  });

  it('a rolled key keeps working for the overlap and is refused after it; the new one works at once', async () => {
    const { merchant, api_key: oldKey } = await createMerchant();
    const rolled = await stack.api<Issued>(
      'POST',
      `/v1/merchants/${merchant.id}/keys/roll`,
      { overlap: '3s' },
      OPERATOR_KEY,
    );
    assert.equal(rolled.status, 201, JSON.stringify(rolled.body));
    const newKey = rolled.body.api_key;
    assert.notEqual(newKey, oldKey);
    assert.ok(rolled.body.previous_keys_expire_at);
    assert.equal(await keyStatus(newKey), 200);
    assert.equal(await keyStatus(oldKey), 200);
    await eventually(async () => assert.equal(await keyStatus(oldKey), 401), {
      timeoutMs: 10_000,
      intervalMs: 250,
      what: 'the old key refused once its overlap is over',
    });
    assert.ok(Date.now() >= Date.parse(rolled.body.previous_keys_expire_at));
    assert.equal(await keyStatus(newKey), 200);
  });

  it('revoked over HTTP, every key of the merchant is refused at once', async () => {
    const { merchant, api_key: key } = await createMerchant();
    assert.equal(await keyStatus(key), 200);
    const revoked = await stack.api<{ revoked: number }>(
      'POST',
      `/v1/merchants/${merchant.id}/keys/revoke`,
      undefined,
      OPERATOR_KEY,
    );
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    assert.equal(revoked.body.revoked, 1);
    assert.equal(await keyStatus(key), 401);
  });

  it('with the CLI: create prints the key once, list shows it, roll --overlap 0 and revoke apply on the running server', async () => {
    const id = newMerchantId();
    const created = await ops(['--json', 'merchants', 'create', id, '--name', 'Cli Ltd', '--by', 'ada.ops']);
    assert.equal(created.code, 0, created.stderr);
    const issued = JSON.parse(created.stdout) as Issued;
    assert.equal(issued.merchant.id, id);
    // Heard through PostgreSQL's NOTIFY, well before the server's own 5 s re-read.
    const heard = { timeoutMs: 3_000, intervalMs: 100 };
    await eventually(async () => assert.equal(await keyStatus(issued.api_key), 200), {
      ...heard,
      what: 'the key made by the CLI works on the server',
    });

    const listed = await ops(['merchants', 'list']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${id}\\s+Cli Ltd\\s+api\\s+1\\s`, 'm'));
    assert.doesNotMatch(listed.stdout, /mk_/);

    const rolled = await ops(['--json', 'keys', 'roll', id, '--overlap', '0', '--by', 'ada.ops']);
    assert.equal(rolled.code, 0, rolled.stderr);
    const newKey = (JSON.parse(rolled.stdout) as Issued).api_key;
    await eventually(async () => assert.equal(await keyStatus(issued.api_key), 401), {
      ...heard,
      what: 'the rolled key refused (no overlap)',
    });
    assert.equal(await keyStatus(newKey), 200);

    const revoked = await ops(['keys', 'revoke', id, '--by', 'ada.ops']);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, /revoked:\s+1/);
    await eventually(async () => assert.equal(await keyStatus(newKey), 401), {
      ...heard,
      what: 'the revoked key refused',
    });

    const actions = await ops(['--json', 'actions', '--subject', id]);
    assert.equal(actions.code, 0, actions.stderr);
    const recorded = (JSON.parse(actions.stdout) as { action: string }[]).map((a) => a.action).sort();
    assert.deepEqual(recorded, ['merchant.create', 'merchant.key_revoke', 'merchant.key_roll']);

    const bad = await ops(['keys', 'roll', id, '--overlap', '90d']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--overlap: must be 0 or a duration up to 30d/);
  });
});

describe('webhook endpoints', () => {
  it('a merchant adds, lists, changes, rolls the secret of and disables its endpoints; never another merchant’s', async () => {
    const { api_key: key } = await createMerchant();
    const { api_key: otherKey } = await createMerchant();
    const created = await stack.api<EndpointSecret>(
      'POST',
      '/v1/webhook-endpoints',
      { url: 'https://example.com/hooks', event_types: ['payment.succeeded'] },
      key,
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { endpoint, secret } = created.body;
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(secret.slice('whsec_'.length), 'base64').length, 32);
    assert.deepEqual(endpoint.event_types, ['payment.succeeded']);
    assert.equal(endpoint.status, 'enabled');
    assert.equal(endpoint.secrets.length, 1);
    assert.equal(JSON.stringify(endpoint).includes(secret), false);

    const listed = await stack.api<{ data: WebhookEndpointResource[] }>('GET', '/v1/webhook-endpoints', undefined, key);
    assert.deepEqual(listed.body.data, [endpoint]);
    const othersList = await stack.api<{ data: unknown[] }>('GET', '/v1/webhook-endpoints', undefined, otherKey);
    assert.deepEqual(othersList.body.data, []);

    const changed = await stack.api<WebhookEndpointResource>(
      'POST',
      `/v1/webhook-endpoints/${endpoint.id}`,
      { event_types: ['payment.failed', 'payment.needs_review'] },
      key,
    );
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.deepEqual(changed.body.event_types, ['payment.failed', 'payment.needs_review']);
    assert.equal(changed.body.url, 'https://example.com/hooks');
    const everything = await stack.api<WebhookEndpointResource>(
      'POST',
      `/v1/webhook-endpoints/${endpoint.id}`,
      { event_types: null },
      key,
    );
    assert.equal(everything.body.event_types, null);

    const rolled = await stack.api<EndpointSecret>(
      'POST',
      `/v1/webhook-endpoints/${endpoint.id}/roll-secret`,
      { overlap: '1h' },
      key,
    );
    assert.equal(rolled.status, 201, JSON.stringify(rolled.body));
    assert.notEqual(rolled.body.secret, secret);
    const [newest, previous] = rolled.body.endpoint.secrets;
    assert.equal(rolled.body.endpoint.secrets.length, 2);
    assert.equal(newest!.expires_at, null);
    assert.ok(previous!.expires_at && Date.parse(previous!.expires_at) > Date.now() + 3_500_000);
    assert.equal(newest!.prefix, `${rolled.body.secret.slice(0, 10)}…`);

    const disabled = await stack.api<WebhookEndpointResource>(
      'POST',
      `/v1/webhook-endpoints/${endpoint.id}/disable`,
      undefined,
      key,
    );
    assert.equal(disabled.status, 200, JSON.stringify(disabled.body));
    assert.equal(disabled.body.status, 'disabled');

    const notTheirs = await stack.api('POST', `/v1/webhook-endpoints/${endpoint.id}/disable`, undefined, otherKey);
    assert.equal(notTheirs.status, 404);
    const badType = await stack.api('POST', '/v1/webhook-endpoints', { url: receiverUrl, event_types: ['x'] }, key);
    assert.equal(badType.status, 400);
    const byOperator = await stack.api('GET', '/v1/webhook-endpoints', undefined, OPERATOR_KEY);
    assert.equal(byOperator.status, 403);
  });

  it('deliveries go to an endpoint only for the event types it takes, signed with its secret', async () => {
    const { merchant, api_key: key } = await createMerchant();
    const created = await stack.api<EndpointSecret>(
      'POST',
      '/v1/webhook-endpoints',
      { url: receiverUrl, event_types: ['payment.succeeded'] },
      key,
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const secret = created.body.secret;
    // The relay hears of the endpoint through NOTIFY; give it a moment before the first event exists.
    await new Promise((resolve) => setTimeout(resolve, 500));

    const paid = await stack.api<PaymentResource>('POST', '/v1/payments', paymentRequest('card_payment', '00'), key);
    assert.equal(paid.status, 201, JSON.stringify(paid.body));
    await stack.waitForStatus(paid.body.id, ['succeeded']);
    const mine = () =>
      received.filter((r) => (JSON.parse(r.body) as { merchant_id: string }).merchant_id === merchant.id);
    const delivered = await eventually(
      () => {
        const list = mine();
        assert.equal(list.length, 1, `received ${list.length}`);
        return list[0]!;
      },
      { timeoutMs: 15_000, intervalMs: 200, what: 'payment.succeeded delivered to the endpoint' },
    );
    const event = verifyNotification(delivered.body, delivered.headers['payments-signature'] as string, secret);
    assert.equal(event.type, 'payment.succeeded');
    assert.equal(event.data.object.id, paid.body.id);

    // The action_required event was not the endpoint's: set aside, never sent.
    const events = await eventually(
      async () => {
        const list = await stack.api<{ data: EventResource[] }>(
          'GET',
          `/v1/events?payment=${paid.body.id}`,
          undefined,
          key,
        );
        const required = list.body.data.find((e) => e.type === 'payment.action_required');
        assert.equal(required?.delivery.status, 'stopped', JSON.stringify(list.body));
        return list.body.data;
      },
      { timeoutMs: 10_000, intervalMs: 200, what: 'payment.action_required set aside' },
    );
    const required = events.find((e) => e.type === 'payment.action_required')!;
    assert.equal(required.delivery.last_error, 'not_subscribed');
    assert.equal(required.delivery.attempts, 0);
    assert.equal(mine().length, 1);
  });
});
