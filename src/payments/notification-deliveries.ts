import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { Keyring } from '../crypto/keyring';
import { requireSigningKeys, signMessage } from '../crypto/signing';
import { NOTIFICATION_DISPATCHER_WORKFLOW, notificationDispatcherId } from '../domain/ids';
import type { DeliveryRecord, DeliveryStatus, NotificationReplay } from '../domain/notification-delivery';
import { notificationsQuery, replayNotificationUpdate } from '../workflows/definitions';
import { AppError, temporalCall } from './app-errors';
import { executeUpdate } from './workflow-calls';

/** A delivery as operators see it: the dispatcher's record, and while it retries, where its attempts stand. */
export interface DeliveryView extends DeliveryRecord {
  /** The running delivery's attempt (Temporal's retries of the activity), null when none runs. */
  current_attempt: number | null;
  /** Why its last attempt failed (`http_500`, `timeout`, `network`…), while it retries. */
  last_attempt_error: string | null;
  next_attempt_at: string | null;
}

/** Deliveries, and which merchants' dispatchers did not answer (no worker polls their task queue right now). */
export interface DeliveryList {
  deliveries: DeliveryView[];
  unanswered: string[];
}

const QUERY_TIMEOUT_MS = 5000;

/** Merchant notifications in terms of their dispatcher workflows: list deliveries, replay a failed one. */
export class Notifications {
  constructor(
    private readonly client: Client,
    private readonly options: { signingKeys?: Keyring } = {},
  ) {}

  /** Deliveries of one merchant or of all, oldest first, optionally of some statuses only. */
  async list(filter: { merchantId?: string; status?: readonly DeliveryStatus[] } = {}): Promise<DeliveryList> {
    const ids = filter.merchantId ? [notificationDispatcherId(filter.merchantId)] : await this.dispatchers();
    const deliveries: DeliveryView[] = [];
    const unanswered: string[] = [];
    for (const id of ids) {
      const found = await this.deliveriesOf(id).catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError) return [];
        if (filter.merchantId) {
          throw new AppError('unavailable', `the notification dispatcher ${id} cannot be read right now`);
        }
        unanswered.push(id);
        return [];
      });
      deliveries.push(...found.filter((d) => !filter.status || filter.status.includes(d.status)));
    }
    return { deliveries, unanswered };
  }

  /** Queues a failed or stopped event again (signed, as an operator's action); `conflict` for any other event. */
  async replay(eventId: string, replay: { merchantId?: string; operator?: string } = {}): Promise<DeliveryRecord> {
    const keys = requireSigningKeys(this.options.signingKeys);
    const { deliveries } = await this.list({ merchantId: replay.merchantId });
    const found = deliveries.find((d) => d.event_id === eventId);
    if (!found) throw new AppError('not_found', `no notification ${eventId} is kept by a running dispatcher`);
    const id = notificationDispatcherId(found.merchant_id);
    const body: NotificationReplay = { eventId, ...(replay.operator ? { operator: replay.operator } : {}) };
    return executeUpdate(
      this.client,
      id,
      replayNotificationUpdate,
      signMessage(keys, 'notification-replay', id, body),
      'the dispatcher has ended',
    );
  }

  private async dispatchers(): Promise<string[]> {
    const ids: string[] = [];
    const query = `WorkflowType = '${NOTIFICATION_DISPATCHER_WORKFLOW}' AND ExecutionStatus = 'Running'`;
    await temporalCall(async () => {
      for await (const execution of this.client.workflow.list({ query })) ids.push(execution.workflowId);
    });
    return ids.sort();
  }

  private async deliveriesOf(dispatcherId: string): Promise<DeliveryView[]> {
    const handle = this.client.workflow.getHandle(dispatcherId);
    const records = await this.client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () =>
      handle.query(notificationsQuery),
    );
    const description = await temporalCall(() => handle.describe());
    // The activity id starts with the event id (see the dispatcher): Temporal's view of the retries in progress.
    const running = new Map(
      (description.raw.pendingActivities ?? []).map((activity) => [
        (activity.activityId ?? '').split('/')[0],
        activity,
      ]),
    );
    return records.map((record) => {
      const activity = running.get(record.event_id);
      const failure = activity?.lastFailure;
      return {
        ...record,
        current_attempt: activity?.attempt ?? null,
        last_attempt_error:
          failure?.applicationFailureInfo?.type || (failure?.timeoutFailureInfo ? 'attempt timed out' : null),
        next_attempt_at: timestamp(activity?.nextAttemptScheduleTime),
      };
    });
  }
}

function timestamp(ts: { seconds?: unknown; nanos?: number | null } | null | undefined): string | null {
  if (!ts || ts.seconds === undefined || ts.seconds === null) return null;
  // Protobuf's int64 seconds arrive as a Long object or a number.
  const { seconds } = ts;
  const whole =
    typeof seconds === 'object' && 'toNumber' in seconds
      ? (seconds as { toNumber(): number }).toNumber()
      : Number(seconds);
  return new Date(whole * 1000 + Math.floor((ts.nanos ?? 0) / 1e6)).toISOString();
}
