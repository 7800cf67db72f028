import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as connectTcp } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:tls';
import type { TLSSocket } from 'node:tls';
import { startDevServer } from '../../src/temporal/dev-server';
import { freePort } from './free-port';

/** The name in the server certificate: clients reach 127.0.0.1 and override the name, as behind a load balancer. */
export const SERVER_NAME = 'temporal.test';

export interface Certificates {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A throwaway CA (P-256, one day) and a server and a client certificate it signed, as PEM files in a fresh directory. */
export function generateCertificates(): Certificates {
  const dir = mkdtempSync(join(tmpdir(), 'temporal-tls-'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(dir, [
    'req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=throwaway test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]); // prettier-ignore
  const leaf = (name: string, san: string, usage: string) => {
    writeFileSync(
      join(dir, `${name}.ext`),
      `subjectAltName=${san}\nextendedKeyUsage=${usage}\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n`,
    );
    openssl(dir, ['req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
    openssl(dir, [
      'x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1',
      '-out', `${name}.pem`, '-extfile', `${name}.ext`,
    ]); // prettier-ignore
  };
  leaf('server', `DNS:${SERVER_NAME}`, 'serverAuth');
  leaf('payments', 'DNS:payments.test', 'clientAuth');
  return {
    dir,
    ca: join(dir, 'ca.pem'),
    serverCert: join(dir, 'server.pem'),
    serverKey: join(dir, 'server.key'),
    clientCert: join(dir, 'payments.pem'),
    clientKey: join(dir, 'payments.key'),
  };
}

export interface TlsTemporal {
  /** The TLS endpoint (`127.0.0.1:port`): TLS 1.2+, ALPN h2, a client certificate from the test CA required. */
  address: string;
  certificates: Certificates;
  /** The TEMPORAL_* settings of an mTLS connection to it. */
  mtlsEnv: Record<string, string>;
  /** The client certificates' common names, one per accepted TLS connection. */
  accepted: string[];
  /** Why the endpoint refused a connection, one line per refusal (OpenSSL's reason). */
  refused: string[];
  stop(): Promise<void>;
}

/**
 * Its own in-memory Temporal dev server, reachable only through a TLS endpoint that requires a client certificate
 * (the CLI's dev server serves no TLS itself): TLS ends in front of the frontend, as at a load balancer, and the
 * decrypted HTTP/2 goes on to the dev server's loopback port, which nothing else is told about.
 */
export async function startTlsTemporal(): Promise<TlsTemporal> {
  const certificates = generateCertificates();
  const devServer = await startDevServer({ port: await freePort(), namespace: 'default' });
  const devPort = Number(devServer.address.split(':')[1]);
  const accepted: string[] = [];
  const refused: string[] = [];
  const sockets = new Set<Socket>();
  const front = createServer(
    {
      key: readFileSync(certificates.serverKey),
      cert: readFileSync(certificates.serverCert),
      ca: readFileSync(certificates.ca),
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ['h2'],
    },
    (socket: TLSSocket) => {
      accepted.push(String(socket.getPeerCertificate().subject?.CN));
      const upstream = connectTcp(devPort, '127.0.0.1');
      for (const s of [socket, upstream]) {
        sockets.add(s);
        s.once('close', () => sockets.delete(s));
      }
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
      socket.pipe(upstream).pipe(socket);
    },
  );
  front.on('tlsClientError', (err: NodeJS.ErrnoException) => refused.push(err.code ?? err.message));
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const port = (front.address() as { port: number }).port;
  const address = `127.0.0.1:${port}`;
  return {
    address,
    certificates,
    mtlsEnv: {
      TEMPORAL_ADDRESS: address,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: certificates.ca,
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
      TEMPORAL_TLS_CLIENT_CERT_PATH: certificates.clientCert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: certificates.clientKey,
    },
    accepted,
    refused,
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => front.close(resolve));
      await devServer.stop();
      rmSync(certificates.dir, { recursive: true, force: true });
    },
  };
}
