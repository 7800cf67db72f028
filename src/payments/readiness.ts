import type { Client } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Database } from '../records/database';

export interface ReadinessOptions {
  namespace: string;
  taskQueue: string;
  /** Reads the provider's bank list (cached by the server); rejects when it cannot be fetched. */
  providerCheck: () => Promise<unknown>;
  /** The records (PostgreSQL): the server reads and writes every payment there. */
  records: Database;
  /** A poller seen longer ago than this no longer counts as a worker. */
  pollerMaxAgeMs?: number;
  timeoutMs?: number;
}

export interface ReadinessReport {
  ready: boolean;
  checks: { temporal: boolean; worker: boolean; provider: boolean; postgres: boolean };
  /** Why it is not ready, one fixed phrase per failed check: safe to show to anyone. */
  reasons: string[];
  /** What the failed checks ran into (upstream error texts), for the log only. */
  details: string[];
}

const { TaskQueueType } = temporal.api.enums.v1;

/**
 * Checks what the server needs to take payments: Temporal reachable, a worker polling, the provider answering,
 * PostgreSQL (the records) answering.
 */
export class Readiness {
  constructor(
    private readonly client: Client,
    private readonly options: ReadinessOptions,
  ) {}

  async check(): Promise<ReadinessReport> {
    const reasons: string[] = [];
    const details: string[] = [];
    const failed = (reason: string, err: unknown) => {
      reasons.push(reason);
      details.push(`${reason}: ${err instanceof Error ? err.message : String(err)}`);
    };
    let temporalOk = false;
    let workerOk = false;
    try {
      await this.withDeadline(() => this.client.workflowService.getSystemInfo({}));
      temporalOk = true;
    } catch (err) {
      failed('temporal: unreachable', err);
    }
    if (temporalOk) {
      try {
        const missing = await this.typesWithoutPollers();
        workerOk = missing.length === 0;
        if (!workerOk) {
          reasons.push(`worker: no ${missing.join(' or ')} poller on the task queue`);
          details.push(`worker: task queue ${this.options.taskQueue}`);
        }
      } catch (err) {
        failed('worker: the task queue cannot be described', err);
      }
    } else {
      reasons.push('worker: unknown while Temporal is unreachable');
    }
    let providerOk = true;
    await this.options.providerCheck().catch((err: unknown) => {
      providerOk = false;
      failed('provider: its bank list cannot be fetched', err);
    });
    let postgresOk = true;
    await this.recordsAnswer().catch((err: unknown) => {
      postgresOk = false;
      failed('postgres: unreachable', err);
    });
    const checks = { temporal: temporalOk, worker: workerOk, provider: providerOk, postgres: postgresOk };
    return { ready: reasons.length === 0, checks, reasons, details };
  }

  /** The task queue types (workflow, activity) no worker polled within pollerMaxAgeMs. */
  private async typesWithoutPollers(): Promise<string[]> {
    const maxAge = this.options.pollerMaxAgeMs ?? 2 * 60_000;
    const types = [
      ['workflow', TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW],
      ['activity', TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY],
    ] as const;
    const missing: string[] = [];
    for (const [name, taskQueueType] of types) {
      const { pollers } = await this.withDeadline(() =>
        this.client.workflowService.describeTaskQueue({
          namespace: this.options.namespace,
          taskQueue: { name: this.options.taskQueue },
          taskQueueType,
        }),
      );
      const recent = pollers.some((p) => Date.now() - (optionalTsToMs(p.lastAccessTime) ?? 0) <= maxAge);
      if (!recent) missing.push(name);
    }
    return missing;
  }

  /** One round trip to PostgreSQL, within the same deadline as Temporal's checks. */
  private async recordsAnswer(): Promise<void> {
    const timeoutMs = this.options.timeoutMs ?? 3000;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.options.records.query('SELECT 1'), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  private withDeadline<T>(call: () => Promise<T>): Promise<T> {
    return this.client.withDeadline(Date.now() + (this.options.timeoutMs ?? 3000), call);
  }
}
