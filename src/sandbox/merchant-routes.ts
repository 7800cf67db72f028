import type { FastifyInstance } from 'fastify';
import {
  NotificationSignatureError,
  SIGNATURE_HEADER,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  verifySignature,
  verifyStandardWebhook,
} from '@payments/client';
import { errorBody } from './sandbox-errors';
import { MerchantInbox, receiverModeSchema } from './merchant-inbox';
import type { ReceivedNotification } from './merchant-inbox';
import type { Timers } from './timers';

/** Where the sandbox's merchant receives notifications (the URL `npm start` configures for the demo merchant). */
export const MERCHANT_NOTIFICATIONS_PATH = '/merchant/notifications';

/** How long `timeout` mode holds a notification unanswered: longer than any sender waits. */
const HOLD_MS = 120_000;

/**
 * The merchant's side of notifications, as a merchant would write it with the client package: verify the signature
 * on the raw body, record, answer. `PUT …/mode` makes it fail (500, timeout, 410) for tests; `GET` lists what came.
 */
export function registerMerchantRoutes(
  app: FastifyInstance,
  inbox: MerchantInbox,
  secrets: readonly string[],
  timers: Timers,
): void {
  void app.register((scope, _options, done) => {
    // The signature covers the exact bytes: keep the body as received.
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, parsed) =>
      parsed(null, body),
    );
    scope.post(MERCHANT_NOTIFICATIONS_PATH, async (request, reply) => {
      const raw = typeof request.body === 'string' ? request.body : '';
      const header = (name: string) => {
        const value = request.headers[name];
        return typeof value === 'string' ? value : undefined;
      };
      let verification_error: string | null = null;
      try {
        // Unlike a merchant, who needs one, the sandbox checks each scheme a delivery carries: tests rely on both.
        const standard = header(WEBHOOK_SIGNATURE_HEADER) !== undefined;
        if (standard) {
          const signed = {
            id: header(WEBHOOK_ID_HEADER),
            timestamp: header(WEBHOOK_TIMESTAMP_HEADER),
            signature: header(WEBHOOK_SIGNATURE_HEADER),
          };
          verifyStandardWebhook(raw, signed, secrets);
        }
        if (!standard || header(SIGNATURE_HEADER) !== undefined)
          verifySignature(raw, header(SIGNATURE_HEADER), secrets);
      } catch (err) {
        verification_error = err instanceof NotificationSignatureError ? err.message : 'verification failed';
      }
      const event = parseEvent(raw);
      const answer = verification_error ? undefined : inbox.nextAnswer();
      const status = !answer
        ? 400
        : answer.mode === 'ok'
          ? 200
          : answer.mode === 'gone'
            ? 410
            : answer.mode === 'fail'
              ? (answer.status ?? 500)
              : 'timeout';
      const idempotency = request.headers['idempotency-key'];
      const entry: ReceivedNotification = {
        received_at: new Date().toISOString(),
        verified: verification_error === null,
        verification_error,
        event_id: typeof event?.id === 'string' ? event.id : null,
        type: typeof event?.type === 'string' ? event.type : null,
        answered: status,
        idempotency_key: typeof idempotency === 'string' ? idempotency : null,
        webhook_id: header(WEBHOOK_ID_HEADER) ?? null,
        event: event ?? raw,
      };
      inbox.record(entry);
      if (status === 'timeout') {
        await timers.sleep(HOLD_MS);
        return reply.code(503).send(errorBody('unavailable', 'held past the sender timeout'));
      }
      if (status === 400) return reply.code(400).send(errorBody('bad_signature', verification_error ?? ''));
      return reply
        .code(status)
        .send(status < 300 ? { received: true } : errorBody('merchant_error', `mode ${answer?.mode}`));
    });
    done();
  });

  app.get(MERCHANT_NOTIFICATIONS_PATH, (_request, reply) => reply.send(inbox.list()));
  app.delete(MERCHANT_NOTIFICATIONS_PATH, (_request, reply) => {
    inbox.clear();
    return reply.code(204).send();
  });
  app.get(`${MERCHANT_NOTIFICATIONS_PATH}/mode`, (_request, reply) => reply.send(inbox.currentMode()));
  app.put(`${MERCHANT_NOTIFICATIONS_PATH}/mode`, (request, reply) => {
    const parsed = receiverModeSchema.safeParse(request.body);
    if (!parsed.success) {
      return reply
        .code(422)
        .send(errorBody('invalid_mode', 'send {"mode": "ok"|"fail"|"timeout"|"gone", "status"?: 500, "times"?: 3}'));
    }
    inbox.setMode(parsed.data);
    return reply.send(inbox.currentMode());
  });
}

function parseEvent(raw: string): { id?: unknown; type?: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}
