import { setTimeout as sleep } from 'node:timers/promises';
import type { Answer, ProxyExchange } from './fault-proxy';
import { paymentIdOfCallbackUrl } from './provider-faults';
import { pick } from './random';

/** A callback fault: lost, sent twice, held back a few seconds, or overtaken by the payment's next callback. */
export type CallbackFault = 'drop' | 'duplicate' | 'delay' | 'reorder';
export const CALLBACK_FAULTS: readonly CallbackFault[] = ['drop', 'duplicate', 'delay', 'reorder'];

/** One callback the API server took (answered 2xx). */
export interface Delivery {
  at: number;
  /** The provider's status field: '1' success, '0' failure. */
  status: string;
}

/** What happened to one payment's callbacks. */
export interface CallbackHistory {
  faults: CallbackFault[];
  /** In the order the server took them. */
  delivered: Delivery[];
}

const REORDER_HOLD_MS = 3000;
const HELD_RETRY_FOR_MS = 60_000;
const OK: Answer = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"received":true}' };

/** Injects faults into a share of the provider's callbacks to the API server, and records what the server took. */
export function callbackFaults(random: () => number, rate: number) {
  const byPayment = new Map<string, CallbackHistory>();
  const held = new Map<string, () => void>();
  const pending = new Set<Promise<void>>();

  const historyOf = (paymentId: string): CallbackHistory => {
    let history = byPayment.get(paymentId);
    if (!history) byPayment.set(paymentId, (history = { faults: [], delivered: [] }));
    return history;
  };
  const statusOf = (body: string): string => {
    try {
      return String((JSON.parse(body) as { status?: unknown }).status);
    } catch {
      return '?';
    }
  };
  /** Forwards once; records it when the server took it. */
  const forward = async (exchange: ProxyExchange, history: CallbackHistory): Promise<Answer> => {
    const answer = await exchange.forward();
    if (answer.status >= 200 && answer.status < 300) {
      history.delivered.push({ at: Date.now(), status: statusOf(exchange.request.body) });
    }
    return answer;
  };
  /** A callback the proxy took over from the provider: it keeps trying until the server takes it. */
  const forwardHeld = async (exchange: ProxyExchange, history: CallbackHistory): Promise<void> => {
    const until = Date.now() + HELD_RETRY_FOR_MS;
    while (Date.now() < until) {
      const answer = await forward(exchange, history).catch(() => undefined);
      if (answer && answer.status < 500) return;
      await sleep(1000);
    }
  };
  const track = (work: Promise<void>) => {
    pending.add(work);
    void work.finally(() => pending.delete(work));
  };

  const handle = async (exchange: ProxyExchange): Promise<void> => {
    const url = new URL(exchange.request.url, 'http://proxy');
    const paymentId = paymentIdOfCallbackUrl(url.href) ?? '?';
    const history = historyOf(paymentId);
    const fault = random() < rate ? pick(random, CALLBACK_FAULTS) : undefined;
    if (fault) history.faults.push(fault);
    const releaseHeld = held.get(url.pathname);
    if (releaseHeld) held.delete(url.pathname);
    try {
      if (fault === 'drop') return exchange.reply(OK);
      if (fault === 'reorder' && !releaseHeld) {
        exchange.reply(OK);
        let release: () => void = () => undefined;
        const released = new Promise<void>((resolve) => (release = resolve));
        held.set(url.pathname, release);
        const timer = setTimeout(() => {
          if (held.get(url.pathname) === release) held.delete(url.pathname);
          release();
        }, REORDER_HOLD_MS);
        track(released.then(() => (clearTimeout(timer), forwardHeld(exchange, history))));
        return;
      }
      if (fault === 'delay') await sleep(1000 + Math.floor(random() * 3000));
      const answer = await forward(exchange, history);
      exchange.reply(answer);
      if (fault === 'duplicate') track(sleep(200).then(() => forwardHeld(exchange, history)));
    } catch {
      // The server is down: the provider is told so, and retries.
      exchange.reply({ status: 502, headers: {}, body: '' });
    } finally {
      releaseHeld?.();
    }
  };
  /** Waits for callbacks the proxy still holds or re-sends. */
  const settle = async () => {
    for (const release of held.values()) release();
    held.clear();
    await Promise.all([...pending]);
  };
  return { byPayment, handle, settle };
}
