import type { ProxyExchange } from './fault-proxy';
import { pick } from './random';

/** A provider fault: a 500 or a reset connection (the provider never sees the request), or no answer after it did. */
export type ProviderFault = '500' | 'reset' | 'timeout';
export const PROVIDER_FAULTS: readonly ProviderFault[] = ['500', 'reset', 'timeout'];

/** One request to the provider as the proxy handled it. */
export interface ProviderRequestRecord {
  at: number;
  kind: 'initiation' | 'status';
  /** The payment an initiation is for (from its callback URL); undefined for status queries. */
  paymentId: string | undefined;
  fault: ProviderFault | 'none';
}

/** The payment id in a callback URL (`…/callbacks/{payment id}/{token}`); undefined when it is not one. */
export function paymentIdOfCallbackUrl(url: string): string | undefined {
  try {
    const encoded = new URL(url).pathname.split('/').at(-2);
    return encoded ? decodeURIComponent(encoded) : undefined;
  } catch {
    return undefined;
  }
}

function callbackUrlOf(body: string, contentType: string | undefined): string | undefined {
  try {
    if (contentType?.includes('json')) {
      const value = (JSON.parse(body) as { callback_url?: unknown }).callback_url;
      return typeof value === 'string' ? value : undefined;
    }
    return new URLSearchParams(body).get('callback_url') ?? undefined;
  } catch {
    return undefined;
  }
}

/** Injects faults into a share of the provider requests, and records every request with its fault. */
export function providerFaults(random: () => number, rate: number) {
  const records: ProviderRequestRecord[] = [];
  const handle = async (exchange: ProxyExchange): Promise<void> => {
    const { method, body, headers } = exchange.request;
    const kind = method === 'POST' ? 'initiation' : 'status';
    const callbackUrl = kind === 'initiation' ? callbackUrlOf(body, headers['content-type']) : undefined;
    const fault = random() < rate ? pick(random, PROVIDER_FAULTS) : 'none';
    records.push({
      at: Date.now(),
      kind,
      paymentId: callbackUrl ? paymentIdOfCallbackUrl(callbackUrl) : undefined,
      fault,
    });
    if (fault === '500') {
      return exchange.reply({
        status: 500,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ error: 'internal error (chaos)' }),
      });
    }
    if (fault === 'reset') return exchange.reset();
    const answer = await exchange.forward();
    // A time-out: the provider has the request, its answer never comes back (the caller gives up and closes).
    if (fault === 'timeout') return;
    exchange.reply(answer);
  };
  return { records, handle };
}
