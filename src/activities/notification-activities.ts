import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { request } from 'undici';
import type { Dispatcher } from 'undici';
import { SIGNATURE_HEADER, signNotification } from '../client/notification-signature';
import type { Keyring } from '../crypto/keyring';
import { signMessage } from '../crypto/signing';
import { notificationDispatcherId } from '../domain/ids';
import { sdkCounterName, WorkerMetrics } from '../domain/metric-names';
import type { NotificationEvent } from '../domain/notification';
import { DeliveryFailureTypes, httpFailureType } from '../domain/notification-delivery';
import type {
  AttemptFailure,
  DeliveryOrder,
  DeliveryReceipt,
  NotificationOrder,
  RetrySchedule,
} from '../domain/notification-delivery';
import type { Signed } from '../domain/signed';

/** Where a merchant's notifications go and the secrets that sign them (more than one while a secret rotates). */
export interface MerchantWebhook {
  url: string;
  secrets: string[];
}

export interface NotificationActivityDeps {
  /** MERCHANT_WEBHOOKS, by merchant id; a merchant without an entry gets no notifications. */
  webhooks: ReadonlyMap<string, MerchantWebhook>;
  /** Signs what is handed to a dispatcher (SIGNING_KEYS): its workflow acts only on signed events. */
  signingKeys: Keyring;
  /** The retry schedule handed with each event (NOTIFICATION_RETRY_*), and each attempt's request timeout. */
  retry: Omit<RetrySchedule, 'attemptTimeoutMs'>;
  requestTimeoutMs: number;
  /**
   * Signals the merchant's dispatcher workflow, starting it when it does not run (signalWithStart); gives up when
   * `signal` aborts (the hand-off timed out or the worker is shutting down).
   */
  handToDispatcher: (
    dispatcherId: string,
    merchantId: string,
    message: Signed<NotificationOrder>,
    signal: AbortSignal,
  ) => Promise<void>;
  /** The undici dispatcher the notifications are sent through (a keep-alive Agent in the worker). */
  http?: Dispatcher;
  clock?: () => Date;
}

/** What a payment or batch workflow hands off: the event and what it is about. */
export interface NotificationHandOff {
  merchantId: string;
  subject: string;
  event: NotificationEvent;
}

/** Builds the notification activities around their dependencies, so tests hand in fakes. */
export function createNotificationActivities(deps: NotificationActivityDeps) {
  const clock = deps.clock ?? (() => new Date());
  const attemptTimeoutMs = deps.requestTimeoutMs + 2000;
  return {
    /**
     * Hands an event to the merchant's dispatcher, signed for it; `queued: false` when the merchant has no
     * notification URL. Safe to retry: the dispatcher drops an event id it has seen.
     */
    async queueNotification(handOff: NotificationHandOff): Promise<{ queued: boolean }> {
      if (!deps.webhooks.has(handOff.merchantId)) return { queued: false };
      const dispatcherId = notificationDispatcherId(handOff.merchantId);
      const order: NotificationOrder = {
        event: handOff.event,
        subject: handOff.subject,
        retry: { ...deps.retry, attemptTimeoutMs },
      };
      await deps.handToDispatcher(
        dispatcherId,
        handOff.merchantId,
        signMessage(deps.signingKeys, 'notification', dispatcherId, order),
        Context.current().cancellationSignal,
      );
      return { queued: true };
    },

    /**
     * POSTs one event to the merchant's URL, signed with its current secrets: 2xx is delivered, 410 stops for good,
     * anything else (another status, a timeout, a network error) fails this attempt for Temporal to retry.
     */
    async deliverNotification(order: DeliveryOrder): Promise<DeliveryReceipt> {
      const { attempt } = Context.current().info;
      const webhook = deps.webhooks.get(order.merchantId);
      if (!webhook) {
        throw failure(DeliveryFailureTypes.unconfigured, `no notification URL for merchant ${order.merchantId}`, {
          attempt,
          nonRetryable: true,
        });
      }
      const body = JSON.stringify(order.event);
      const outcome = await post(webhook, body, order.event.id, clock(), deps.requestTimeoutMs, deps.http);
      count(outcome.kind);
      const where = `${order.event.type} ${order.event.id} to merchant ${order.merchantId}`;
      if (outcome.kind === '2xx') {
        Context.current().log.info('notification delivered', { eventId: order.event.id, attempt });
        return { attempt, httpStatus: outcome.status ?? 200 };
      }
      if (outcome.kind === '410') {
        throw failure(DeliveryFailureTypes.gone, `${where}: the merchant answered 410 Gone; not sent again`, {
          attempt,
          nonRetryable: true,
        });
      }
      const type = outcome.status ? httpFailureType(outcome.status) : outcome.kind;
      Context.current().log.warn('notification attempt failed', { eventId: order.event.id, attempt, error: type });
      throw failure(type, `${where}: ${outcome.detail} (attempt ${attempt})`, { attempt });
    },
  };
}

export type NotificationActivities = ReturnType<typeof createNotificationActivities>;

interface PostOutcome {
  kind: '2xx' | '410' | 'http' | 'timeout' | 'network';
  status?: number;
  detail: string;
}

async function post(
  webhook: MerchantWebhook,
  body: string,
  eventId: string,
  now: Date,
  timeoutMs: number,
  dispatcher: Dispatcher | undefined,
): Promise<PostOutcome> {
  try {
    const response = await request(webhook.url, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        [SIGNATURE_HEADER]: signNotification(body, webhook.secrets, now),
        'idempotency-key': eventId,
        'user-agent': 'payment-orchestrator-notifications',
      },
      signal: AbortSignal.timeout(timeoutMs),
      ...(dispatcher ? { dispatcher } : {}),
    });
    await response.body.dump();
    const status = response.statusCode;
    if (status >= 200 && status < 300) return { kind: '2xx', status, detail: `HTTP ${status}` };
    if (status === 410) return { kind: '410', status, detail: 'HTTP 410' };
    return { kind: 'http', status, detail: `answered HTTP ${status}` };
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    // The error's message names the host at most, never a secret (none is in the URL or the request line).
    return timedOut
      ? { kind: 'timeout', detail: `no answer within ${timeoutMs} ms` }
      : { kind: 'network', detail: `could not be sent: ${err instanceof Error ? err.message : String(err)}` };
  }
}

function failure(
  type: string,
  message: string,
  { attempt, nonRetryable = false }: { attempt: number; nonRetryable?: boolean },
): ApplicationFailure {
  const details: AttemptFailure = { attempt, error: type };
  // The merchant's endpoint failing is not the worker's error: the SDK logs it at debug (our own line says it once).
  const category = ApplicationFailureCategory.BENIGN;
  return ApplicationFailure.create({ type, message, nonRetryable, details: [details], category });
}

function count(outcome: PostOutcome['kind']): void {
  Context.current()
    .metricMeter.createCounter(
      sdkCounterName(WorkerMetrics.notificationAttempts),
      '',
      'notification delivery attempts by outcome',
    )
    .add(1, { outcome });
}
