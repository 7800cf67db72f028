import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../src/config/config-loading';
import { workerSchema } from '../src/config/process-settings';
import { isLoopback, temporalConnection, temporalEndpoint } from '../src/temporal/connection-settings';
import type { TemporalConnectionOptions } from '../src/temporal/connection-settings';
import { generateCertificates } from './support/tls-temporal';

// Temporal's connection settings as Temporal's CLI and SDKs read them (@temporalio/envconfig): variables over a
// TOML profile, the options every connection gets from them, and each bad setting named.

const certificates = generateCertificates();
const dir = mkdtempSync(join(tmpdir(), 'temporal-profile-'));
after(() => {
  rmSync(certificates.dir, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

const PROFILE_API_KEY = 'profile-api-key-0123456789';
const profileFile = join(dir, 'temporal.toml');
writeFileSync(
  profileFile,
  `[profile.default]
address = "temporal.internal:7233"
namespace = "payments"

[profile.default.tls]
server_name = "temporal.test"
server_ca_cert_path = "${certificates.ca}"
client_cert_path = "${certificates.clientCert}"
client_key_path = "${certificates.clientKey}"

[profile.cloud]
address = "payments.a1b2c.tmprl.cloud:7233"
namespace = "payments.a1b2c"
api_key = "${PROFILE_API_KEY}"
`,
);

const worker = {
  PROVIDER_BASE_URL: 'https://provider.example',
  PROVIDER_TOKEN: 'real-provider-token',
  ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
  VAULT_URL: 'redis://127.0.0.1:6379',
  DATABASE_URL: 'postgres://payments:db-password@127.0.0.1:5432/payments',
};

function configError(env: Record<string, string>): string {
  try {
    parseConfig(workerSchema, { ...worker, ...env });
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.message;
  }
  assert.fail('expected a ConfigError');
}

function tlsOf(options: TemporalConnectionOptions) {
  assert.ok(typeof options.tls === 'object', 'TLS on, with settings');
  return options.tls;
}

describe('Temporal connection settings', () => {
  it('default to a plaintext localhost:7233, namespace default; TLS or an API key turn TLS on', () => {
    assert.deepEqual(temporalConnection({}), {
      address: 'localhost:7233',
      namespace: 'default',
      addressConfigured: false,
      tls: false,
      clientCertificate: false,
      apiKey: false,
      options: { address: 'localhost:7233', tls: undefined, apiKey: undefined, metadata: undefined },
    });
    const cloud = temporalConnection({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_API_KEY: 'k-123' });
    assert.equal(cloud.tls, true);
    assert.deepEqual(cloud.options, {
      address: 'ns.acct.tmprl.cloud:7233',
      tls: true,
      apiKey: 'k-123',
      metadata: undefined,
    });
    assert.equal(temporalEndpoint({ TEMPORAL_TLS: 'true' }).tls, true);
    assert.equal(temporalEndpoint({ TEMPORAL_TLS_SERVER_NAME: 'temporal.test' }).tls, true);
    assert.equal(temporalEndpoint({ TEMPORAL_API_KEY: 'k-123', TEMPORAL_TLS: 'false' }).tls, false);
  });

  it('mTLS from the variables: the certificates, the CA and the server name reach the connection options', () => {
    const mtls = temporalConnection({
      TEMPORAL_ADDRESS: '10.0.0.7:7233',
      TEMPORAL_TLS_CLIENT_CERT_PATH: certificates.clientCert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: certificates.clientKey,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: certificates.ca,
      TEMPORAL_TLS_SERVER_NAME: 'temporal.test',
    });
    assert.equal(mtls.clientCertificate, true);
    const tls = tlsOf(mtls.options);
    assert.equal(tls.serverNameOverride, 'temporal.test');
    assert.match(Buffer.from(tls.serverRootCACertificate ?? []).toString(), /BEGIN CERTIFICATE/);
    assert.match(Buffer.from(tls.clientCertPair?.crt ?? []).toString(), /BEGIN CERTIFICATE/);
    assert.match(Buffer.from(tls.clientCertPair?.key ?? []).toString(), /BEGIN PRIVATE KEY/);
  });

  it('a TOML profile named by TEMPORAL_CONFIG_FILE or TEMPORAL_PROFILE, the variables over it', () => {
    const fromFile = temporalConnection({ TEMPORAL_CONFIG_FILE: profileFile });
    assert.equal(fromFile.address, 'temporal.internal:7233');
    assert.equal(fromFile.namespace, 'payments');
    assert.equal(fromFile.addressConfigured, true);
    assert.equal(tlsOf(fromFile.options).serverNameOverride, 'temporal.test');
    assert.ok(tlsOf(fromFile.options).clientCertPair);

    const cloud = temporalConnection({ TEMPORAL_CONFIG_FILE: profileFile, TEMPORAL_PROFILE: 'cloud' });
    assert.deepEqual(
      { address: cloud.address, namespace: cloud.namespace, tls: cloud.options.tls, apiKey: cloud.options.apiKey },
      { address: 'payments.a1b2c.tmprl.cloud:7233', namespace: 'payments.a1b2c', tls: true, apiKey: PROFILE_API_KEY },
    );
    const overridden = temporalEndpoint({
      TEMPORAL_CONFIG_FILE: profileFile,
      TEMPORAL_ADDRESS: 'other:7233',
      TEMPORAL_NAMESPACE: 'other',
    });
    assert.deepEqual([overridden.address, overridden.namespace, overridden.tls], ['other:7233', 'other', true]);
  });

  it("reads Temporal's default file (~/.config/temporalio/temporal.toml) only when TEMPORAL_PROFILE asks for a profile", () => {
    const home = join(dir, 'home');
    mkdirSync(join(home, 'temporalio'), { recursive: true });
    writeFileSync(join(home, 'temporalio', 'temporal.toml'), `[profile.dev]\naddress = "from-default-file:7233"\n`);
    const previous = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = home;
    try {
      assert.equal(temporalEndpoint({}).address, 'localhost:7233');
      assert.equal(temporalEndpoint({ TEMPORAL_PROFILE: 'dev' }).address, 'from-default-file:7233');
    } finally {
      if (previous === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = previous;
    }
  });

  it('names each bad setting and never prints a key or the file', () => {
    assert.match(configError({ TEMPORAL_TLS: 'yes' }), /TEMPORAL_TLS: must be true or false/);
    assert.match(
      configError({ TEMPORAL_TLS_CLIENT_CERT_PATH: certificates.clientCert }),
      /TEMPORAL_TLS_CLIENT_KEY_PATH: is required with TEMPORAL_TLS_CLIENT_CERT_\*/,
    );
    assert.match(
      configError({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: join(dir, 'no-ca.pem') }),
      /TEMPORAL_TLS_SERVER_CA_CERT_PATH: .*no-ca\.pem cannot be read \(ENOENT\)/,
    );
    assert.match(
      configError({ TEMPORAL_TLS: 'false', TEMPORAL_TLS_SERVER_CA_CERT_PATH: certificates.ca }),
      /TEMPORAL_TLS: is false, so the TEMPORAL_TLS_\* certificates would be ignored/,
    );
    assert.match(
      configError({ TEMPORAL_TLS_CLIENT_CERT_PATH: certificates.clientCert, TEMPORAL_TLS_CLIENT_CERT_DATA: 'x' }),
      /TEMPORAL_TLS_CLIENT_CERT_PATH: and its _DATA are both set/,
    );
    assert.match(
      configError({ TEMPORAL_CONFIG_FILE: join(dir, 'none.toml') }),
      /TEMPORAL_CONFIG_FILE: .*none\.toml does not exist/,
    );
    assert.match(
      configError({ TEMPORAL_CONFIG_FILE: profileFile, TEMPORAL_PROFILE: 'staging' }),
      /TEMPORAL_PROFILE: names no profile in the configuration file/,
    );
    const broken = join(dir, 'broken.toml');
    writeFileSync(broken, `[profile.default]\napi_key = "${PROFILE_API_KEY}\n`);
    const message = configError({ TEMPORAL_CONFIG_FILE: broken, TEMPORAL_API_KEY: 'env-api-key-0123456789' });
    assert.match(message, /TEMPORAL_CONFIG_FILE: is not valid TOML \(line 2\)/);
    assert.ok(!message.includes(PROFILE_API_KEY) && !message.includes('env-api-key'), 'no key printed');
  });

  it('knows a loopback address: 127.0.0.0/8, ::1 and localhost, nothing else', () => {
    for (const address of ['127.0.0.1:7233', '127.9.8.7:7233', 'localhost:7233', 'LOCALHOST:7233', '[::1]:7233']) {
      assert.equal(isLoopback(address), true, address);
    }
    for (const address of [
      '10.0.0.1:7233',
      'temporal:7233',
      '[::2]:7233',
      '128.0.0.1:7233',
      '127.0.0.1.nip.io:7233',
      'localhost.example.com:7233',
    ]) {
      assert.equal(isLoopback(address), false, address);
    }
  });
});
