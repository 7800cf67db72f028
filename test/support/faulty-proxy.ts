import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

/** What the proxy does with one request. */
export type Fault =
  /** Forwards it, then answers 503 with Retry-After instead of the server's answer (a lost answer). */
  | 'forward-then-503'
  /** Forwards it, then drops the connection without an answer. */
  | 'forward-then-drop'
  /** Never answers. */
  | 'hang';

export interface SeenRequest {
  method: string;
  url: string;
  body: string;
  requestId: string | undefined;
}

export interface FaultyProxy {
  url: string;
  /** Faults for the next requests, in order; requests beyond them are forwarded untouched. */
  faults: Fault[];
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** An HTTP proxy in front of the server that injects the faults a client must survive. */
export async function startFaultyProxy(target: string, retryAfterSeconds = 1): Promise<FaultyProxy> {
  const faults: Fault[] = [];
  const seen: SeenRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const forward = async (incoming: IncomingMessage, body: string) => {
    const headers = Object.fromEntries(
      Object.entries(incoming.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
    ) as Record<string, string>;
    const response = await request(`${target}${incoming.url ?? '/'}`, {
      method: incoming.method as 'GET',
      headers,
      body: body === '' ? undefined : body,
    });
    return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
  };
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const requestId = incoming.headers['x-request-id'];
      seen.push({
        method: incoming.method ?? '',
        url: incoming.url ?? '',
        body,
        requestId: typeof requestId === 'string' ? requestId : undefined,
      });
      const fault = faults.shift();
      if (fault === 'hang') {
        hanging.add(outgoing);
        return;
      }
      forward(incoming, body).then(
        (answer) => {
          if (fault === 'forward-then-drop') return outgoing.destroy();
          if (fault === 'forward-then-503') {
            outgoing.writeHead(503, { 'content-type': 'application/json', 'retry-after': String(retryAfterSeconds) });
            return outgoing.end(JSON.stringify({ error: { code: 'unavailable', message: 'try again', fields: [] } }));
          }
          const headers = Object.fromEntries(
            Object.entries(answer.headers).filter(([name]) => !['connection', 'transfer-encoding'].includes(name)),
          );
          outgoing.writeHead(answer.status, headers as Record<string, string>);
          outgoing.end(answer.text);
        },
        () => outgoing.destroy(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    faults,
    seen,
    close: async () => {
      for (const outgoing of hanging) outgoing.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
