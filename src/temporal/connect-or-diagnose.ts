import { isIP } from 'node:net';
import { connect } from 'node:tls';
import type { ConnectionOptions } from 'node:tls';
import { hostOf, securityOf, temporalConnection } from './connection-settings';
import type { TemporalConnectionOptions, TemporalEndpoint, TemporalSettings } from './connection-settings';

// The SDKs report a refused TLS handshake as "Failed to connect before the deadline" (client) or "transport error"
// (worker). One handshake of our own tells which setting is wrong.

type Outcome = { ok: true } | { ok: false; code: string };

const NOT_TLS = ['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG', 'ECONNRESET', 'CLOSED'];
const CLIENT_CERT_REFUSED = [
  'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
  'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED',
  'ERR_SSL_TLSV1_ALERT_DECRYPT_ERROR',
];
const SERVER_UNTRUSTED = [
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
];

const pem = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes) : undefined);

function handshake(address: string, options: ConnectionOptions): Promise<Outcome> {
  const port = Number(address.slice(address.lastIndexOf(':') + 1));
  return new Promise((resolve) => {
    let settled = false;
    const socket = connect({ ...options, host: hostOf(address), port, ALPNProtocols: ['h2'] });
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    // TLS 1.3 servers refuse a missing client certificate only after the client's handshake completed.
    socket.once('secureConnect', () => setTimeout(() => finish({ ok: true }), 500));
    socket.once('error', (err: NodeJS.ErrnoException) => finish({ ok: false, code: err.code ?? 'ERROR' }));
    socket.once('close', () => finish({ ok: false, code: 'CLOSED' }));
    const timer = setTimeout(() => finish({ ok: false, code: 'TIMEOUT' }), 5000);
  });
}

/** Which setting to change when Temporal refused the connection's TLS (or lack of it); undefined when TLS is not why. */
export async function diagnoseTls(options: TemporalConnectionOptions): Promise<string | undefined> {
  if (!options.tls) {
    const outcome = await handshake(options.address, { rejectUnauthorized: false });
    // A certificate or an alert from the server: it speaks TLS.
    const speaksTls = outcome.ok || (outcome.code.startsWith('ERR_SSL_') && !NOT_TLS.includes(outcome.code));
    return speaksTls
      ? 'the server requires TLS and this connection is plaintext: set TEMPORAL_TLS=true (with TEMPORAL_TLS_* certificates or TEMPORAL_API_KEY)'
      : undefined;
  }
  const tls = options.tls === true ? {} : options.tls;
  const host = hostOf(options.address);
  const outcome = await handshake(options.address, {
    ca: pem(tls.serverRootCACertificate),
    cert: pem(tls.clientCertPair?.crt),
    key: pem(tls.clientCertPair?.key),
    servername: tls.serverNameOverride ?? (isIP(host) ? undefined : host),
  });
  if (outcome.ok) return undefined;
  if (NOT_TLS.includes(outcome.code))
    return 'the server does not answer TLS: set TEMPORAL_TLS=false or use its TLS port';
  const mtls = 'set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH';
  if (outcome.code === 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED' && !tls.clientCertPair) {
    return `the server requires a client certificate (mTLS): ${mtls}`;
  }
  if (outcome.code === 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE' && !tls.clientCertPair) {
    return `the server refused the TLS handshake (${outcome.code}); if it requires a client certificate: ${mtls}`;
  }
  if (CLIENT_CERT_REFUSED.includes(outcome.code)) {
    return `the server refused the client certificate (${outcome.code}): check TEMPORAL_TLS_CLIENT_CERT_PATH`;
  }
  if (SERVER_UNTRUSTED.includes(outcome.code)) {
    return `the server's certificate is not signed by a trusted CA (${outcome.code}): set TEMPORAL_TLS_SERVER_CA_CERT_PATH`;
  }
  if (outcome.code === 'CERT_HAS_EXPIRED') return "the server's certificate has expired";
  if (outcome.code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return "the server's certificate is for another name: set TEMPORAL_TLS_SERVER_NAME to the name it holds";
  }
  return undefined;
}

/** A connection to Temporal that failed; `reason` says why, naming the setting to change where one is to blame. */
export class TemporalConnectError extends Error {
  constructor(
    endpoint: TemporalEndpoint,
    readonly reason: string,
  ) {
    super(`cannot connect to Temporal at ${endpoint.address} (${securityOf(endpoint)}): ${reason}`);
  }
}

/** Opens a connection through the SDK's `connect` with the options the settings give; a failure is explained. */
export async function connectTemporal<C>(
  settings: TemporalSettings,
  connect: (options: TemporalConnectionOptions) => Promise<C>,
): Promise<{ connection: C; endpoint: TemporalEndpoint }> {
  const { options, ...endpoint } = temporalConnection(settings);
  try {
    return { connection: await connect(options), endpoint };
  } catch (err) {
    const reason = (await diagnoseTls(options)) ?? (err instanceof Error ? err.message : String(err));
    throw new TemporalConnectError(endpoint, reason);
  }
}
