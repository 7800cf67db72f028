import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';

/** One request as the proxy received it, with its body read. */
export interface ProxiedRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** An answer from the proxied server. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What a handler does with a request: forwards it (as often as it likes), answers it itself, or drops it. */
export interface ProxyExchange {
  request: ProxiedRequest;
  /** Sends the request on to the target; throws when the target cannot be reached. */
  forward(): Promise<Answer>;
  /** Answers the caller. */
  reply(answer: Answer): void;
  /** Closes the caller's connection without an answer. */
  reset(): void;
}

export interface FaultProxy {
  url: string;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

function endToEnd(headers: IncomingMessage['headers'] | Record<string, string | string[] | undefined>) {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!HOP_BY_HOP.has(name) && value !== undefined) kept[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return kept;
}

/** An HTTP proxy in front of `target` whose handler decides, request by request, which fault to inject. */
export async function startFaultProxy(
  target: string,
  handle: (exchange: ProxyExchange) => Promise<void>,
): Promise<FaultProxy> {
  const agent = new Agent({ connections: 64, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const open = new Set<ServerResponse>();
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      open.add(outgoing);
      outgoing.once('close', () => open.delete(outgoing));
      const proxied: ProxiedRequest = {
        method: incoming.method ?? 'GET',
        url: incoming.url ?? '/',
        headers: endToEnd(incoming.headers),
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const exchange: ProxyExchange = {
        request: proxied,
        forward: async () => {
          const response = await request(`${target}${proxied.url}`, {
            method: proxied.method as 'GET',
            headers: proxied.headers,
            body: proxied.body === '' ? undefined : proxied.body,
            dispatcher: agent,
          });
          return { status: response.statusCode, headers: endToEnd(response.headers), body: await response.body.text() };
        },
        reply: (answer) => {
          if (outgoing.writableEnded || outgoing.destroyed) return;
          outgoing.writeHead(answer.status, answer.headers);
          outgoing.end(answer.body);
        },
        reset: () => outgoing.destroy(),
      };
      handle(exchange).catch(() => exchange.reset());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const outgoing of open) outgoing.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await agent.close();
    },
  };
}
