import { request } from 'undici';
import type { Dispatcher } from 'undici';
import { SIGNATURE_HEADER, signNotification, standardWebhookHeaders } from '@payments/client';
import type { NotificationEvent } from '../domain/notification';
import { DeliveryErrors, httpError } from '../domain/notification-delivery';

/** Where a merchant's notifications go and the secrets that sign them (more than one while a secret rotates). */
export interface MerchantWebhook {
  url: string;
  secrets: string[];
}

/** What one attempt came to: the endpoint's status, if it answered, and the error recorded when it was not a 2xx. */
export interface PostOutcome {
  statusCode: number | null;
  /** null: delivered (2xx); else `http_<status>`, `timeout` or `network`. */
  error: string | null;
  /** A line for the log: what happened, naming the host at most (never a secret). */
  detail: string;
}

/** POSTs one event to the merchant's URL, signed with its current secrets in both schemes; never throws. */
export async function postEvent(
  webhook: MerchantWebhook,
  event: NotificationEvent,
  options: { timeoutMs: number; now: Date; http?: Dispatcher },
): Promise<PostOutcome> {
  const body = JSON.stringify(event);
  try {
    const response = await request(webhook.url, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        // Standard Webhooks (webhook-id is the event id) and, for receivers written before them, Stripe's scheme.
        ...standardWebhookHeaders(event.id, body, webhook.secrets, options.now),
        [SIGNATURE_HEADER]: signNotification(body, webhook.secrets, options.now),
        'idempotency-key': event.id,
        'user-agent': 'payment-orchestrator-notifications',
      },
      signal: AbortSignal.timeout(options.timeoutMs),
      ...(options.http ? { dispatcher: options.http } : {}),
    });
    await response.body.dump();
    const status = response.statusCode;
    const ok = status >= 200 && status < 300;
    return { statusCode: status, error: ok ? null : httpError(status), detail: `HTTP ${status}` };
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    return timedOut
      ? { statusCode: null, error: DeliveryErrors.timeout, detail: `no answer within ${options.timeoutMs} ms` }
      : {
          statusCode: null,
          error: DeliveryErrors.network,
          detail: `could not be sent: ${err instanceof Error ? err.message : String(err)}`,
        };
  }
}
