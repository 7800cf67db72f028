import assert from 'node:assert/strict';
import { it } from 'node:test';
import { internalUrlProblem } from '../src/domain/merchant-resources';

// In production a merchant's endpoint URL must be https to a public host: the relay must not be made to post inside
// the deployment (src/server.ts passes internalUrlProblem to the webhook endpoint routes when NODE_ENV=production).

it('refuses plain http, internal names, private, loopback and link-local addresses and IPv6 literals', () => {
  for (const url of [
    'http://acme.example/hooks',
    'https://localhost/hooks',
    'https://api.localhost/hooks',
    'https://vault.internal/hooks',
    'https://printer.local/hooks',
    'https://127.0.0.1/hooks',
    'https://10.1.2.3/hooks',
    'https://172.20.0.5/hooks',
    'https://192.168.1.10/hooks',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.0.1/hooks',
    'https://0.0.0.0/hooks',
    'https://[::1]/hooks',
    'not a url',
  ]) {
    assert.ok(internalUrlProblem(url), `${url} is refused`);
  }
});

it('allows https to a public name or address', () => {
  for (const url of ['https://acme.example/hooks', 'https://8.8.8.8/hooks', 'https://172.32.0.1:8443/x']) {
    assert.equal(internalUrlProblem(url), undefined, url);
  }
});
