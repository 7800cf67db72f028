import type { NotificationEvent, NotificationType } from './notification';

// Workflows build their notifications here. This module imports types only, so no schema library enters the workflow
// sandbox: zod there (pulled in once through notification.ts) cost every workflow task a third more worker CPU and
// the worker 100 MB more memory. `npm run build` refuses a workflow bundle that contains zod.

/**
 * A notification event about `object` as it stands now (copied), with an id from `uuid` (a workflow's or a random one).
 */
export function newNotificationEvent(
  uuid: string,
  type: NotificationType,
  merchantId: string,
  object: NotificationEvent['data']['object'],
  now: Date,
): NotificationEvent {
  return {
    id: `evt_${uuid.replace(/-/g, '')}`,
    type,
    created_at: now.toISOString(),
    merchant_id: merchantId,
    data: { object: JSON.parse(JSON.stringify(object)) as typeof object },
  };
}
