import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { BatchAction, BatchControl, BatchInput, BatchItem, BatchProgress } from '../domain/batch-model';
import { isBatchClosed } from '../domain/batch-model';
import type { PayoutBatchRequest } from '../domain/batch-request';
import { toMinorUnits } from '../domain/money';
import type { PaymentTiming } from '../domain/payment-model';
import type { payoutBatchWorkflow } from '../workflows';
import { batchProgress, newBatchProgress, startingCarry } from '../domain/batch-progress';
import type { BatchCarry } from '../domain/batch-progress';
import type { HaltRules } from '../domain/halt-watch';
import { messageBody } from '../domain/signed';
import type { Signed } from '../domain/signed';
import {
  SearchAttributes,
  batchApprovalUpdate,
  batchControlUpdate,
  batchProgressQuery,
} from '../workflows/definitions';
import { DEFAULT_APPROVAL_WINDOW_MS, batchApprovalsRequired } from '../domain/approval-rules';
import type { ApprovalDecision, ApprovalInput, ApprovalThresholds } from '../domain/approval-rules';
import { PAYOUT_BATCH_WORKFLOW, batchItemPaymentId, batchWorkflowId } from '../domain/ids';
import { AppError, purgedReference, recordCall, temporalCall } from './app-errors';
import type { Database } from '../records/database';
import { takeKey } from '../records/idempotency-keys';
import { insertBatchItems } from '../records/batch-items';
import { readBatch } from '../records/record-reads';
import { readBatchFigures, withPace } from './batch-figures';
import { boundAnswer } from './bound-answers';
import { requestFingerprint } from './fingerprint';
import { recordAppliedAction, recordAppliedDecision } from './operator-action-log';
import { endedWithoutResult, executeUpdate, queryOrResult } from './workflow-calls';
import type { Keyring } from '../crypto/keyring';
import { requireSigningKeys, signMessage } from '../crypto/signing';
import type { MessageScope } from '../domain/signed';

/** How long a batch item's signed order may wait to start: a batch starts its items over days, only it may start them. */
const BATCH_ITEM_TTL_MS = 90 * 24 * 3600_000;

/** What creating batches needs; reading and controlling them (the CLI) does without. */
export interface BatchCreation {
  taskQueue: string;
  fingerprintSecret: string;
  bankCreditTiming: PaymentTiming;
  concurrency: number;
  /** Items a batch reads from the records at a time (BATCH_PAGE_SIZE). */
  pageSize: number;
  maxRunEvents: number;
  itemCheckMs: number;
  /** When a batch halts itself (BATCH_HALT_*). */
  halt: HaltRules;
  /** The records: the batch's idempotency key is taken there before anything starts. */
  records: Database;
  /** Each merchant's approval thresholds (APPROVAL_THRESHOLDS); undefined: its batches need no approval. */
  approvalThresholds?: (merchantId: string) => ApprovalThresholds | undefined;
  /** How long a batch waits for its approvals (APPROVAL_WINDOW). */
  approvalWindowMs?: number;
}

export interface BatchesOptions {
  /** The payments' task queue (TASK_QUEUE), which signed messages name; `creation`'s when absent. */
  taskQueue?: string;
  /** Signs what starts or controls a batch and each of its items (SIGNING_KEYS); reading does without. */
  signingKeys?: Keyring;
  creation?: BatchCreation;
  /** The records: with them, `read` answers from PostgreSQL (the merchant API); without them (the CLI), Temporal. */
  records?: Database;
  /** Where operator actions are recorded (`operator_actions`): an operator's control needs it. */
  actions?: Database;
  /** The task queue a batch runs on, asked of Temporal (the operator CLI): controls are signed for that. */
  taskQueueOf?: (workflowId: string) => Promise<string | undefined>;
}

const QUERY_TIMEOUT_MS = 5000;

/** Payout batches in terms of Temporal workflows: a batch workflow, its items in the records, one payment per item. */
export class Batches {
  constructor(
    private readonly client: Client,
    private readonly options: BatchesOptions = {},
  ) {}

  /** Where what it signs may act: this client's namespace and the payments' task queue (or `taskQueue`). */
  private scope(given?: string): MessageScope {
    const taskQueue = given ?? this.options.taskQueue ?? this.options.creation?.taskQueue;
    if (!taskQueue) throw new Error('this Batches instance was made without a task queue to sign for');
    return { namespace: this.client.options.namespace, taskQueue };
  }

  /**
   * Starts the batch once per reference, forever: the reference and the batch's items are taken in the records first,
   * in one transaction; the same body again returns the existing batch, another body is a conflict.
   */
  async create(merchantId: string, batch: PayoutBatchRequest): Promise<{ created: boolean; batch: BatchProgress }> {
    const options = this.options.creation;
    if (!options) throw new Error('this Batches instance was made without creation settings');
    const keys = requireSigningKeys(this.options.signingKeys);
    const batchId = batchWorkflowId(merchantId, batch.reference);
    const fingerprint = requestFingerprint(options.fingerprintSecret, `batch:${merchantId}`, batch);
    const key = { merchantId, scope: 'batch' as const, reference: batch.reference, fingerprint, resourceId: batchId };
    // Each item is signed for its own payment workflow, which only this batch may start.
    const items: BatchItem[] = batch.items.map((request) => {
      const paymentId = batchItemPaymentId(merchantId, batch.reference, request.reference);
      const order = { paymentId, merchantId, batchId, request, timing: options.bankCreditTiming };
      return signMessage(keys, 'batch-item', paymentId, order, { ...this.scope(), ttlMs: BATCH_ITEM_TTL_MS });
    });
    // Only the first request with this reference stores items: a retry of the same body starts the items stored.
    const claim = await recordCall(() =>
      takeKey(options.records, key, (client) => insertBatchItems(client, batchId, items)),
    );
    if (!claim.taken && claim.fingerprint !== fingerprint) throw batchConflict(batchId);
    if (!claim.taken && claim.purged) throw purgedReference(`batch reference ${batch.reference}`, batchId);
    const existing = await this.existing(batchId, fingerprint);
    if (existing) return { created: false, batch: existing };
    if (!claim.taken) {
      // Its workflow is gone (past Temporal's retention): the record answers. With no record either, it never
      // started (a crash between the key and the start): this attempt starts it, on the items stored with the key.
      const recorded = await recordCall(() => readBatch(options.records, batchId));
      if (recorded) return { created: false, batch: boundAnswer(batchId, recorded.batch, recorded.merchantId) };
    }

    const totalMinor = batch.items.reduce((sum, item) => sum + toMinorUnits(item.amount), 0);
    const input: BatchInput = {
      batchId,
      merchantId,
      reference: batch.reference,
      createdAt: new Date().toISOString(),
      itemCount: items.length,
      totalMinor,
      pageSize: options.pageSize,
      concurrency: options.concurrency,
      timing: options.bankCreditTiming,
      maxRunEvents: options.maxRunEvents,
      itemCheckMs: options.itemCheckMs,
      halt: options.halt,
      ...waitingFields(options, merchantId, totalMinor, batch.scheduled_at),
      ...(batch.metadata ? { metadata: batch.metadata } : {}),
    };
    const created = newBatchProgress(input, new Date());
    try {
      await temporalCall(() =>
        this.client.workflow.start<typeof payoutBatchWorkflow>(PAYOUT_BATCH_WORKFLOW, {
          workflowId: batchId,
          taskQueue: options.taskQueue,
          args: [signMessage(keys, 'batch', batchId, input, this.scope())],
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          memo: { fingerprint },
          staticSummary: batchSummary(input),
          typedSearchAttributes: [
            { key: SearchAttributes.batch, value: batchId },
            { key: SearchAttributes.batchStatus, value: created.status },
            { key: SearchAttributes.reference, value: batch.reference },
            { key: SearchAttributes.merchant, value: merchantId },
            { key: SearchAttributes.amount, value: input.totalMinor / 100 },
          ],
        }),
      );
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      // Another request with this reference won the race; it is either this very batch or a conflict.
      const winner = await this.existing(batchId, fingerprint);
      if (winner) return { created: false, batch: winner };
    }
    return { created: true, batch: created };
  }

  /**
   * The batch's progress: its record once it has finished (kept whatever Temporal has kept; no query, no worker
   * needed). A running batch's record is written at each change of status and every tenth of its items, so while it
   * runs its workflow answers, item by item; when Temporal cannot (no worker, a query past its deadline, history
   * gone), the record does, its items counted from their own records.
   */
  async read(batchId: string): Promise<BatchProgress> {
    const records = this.options.records;
    const record = records && (await recordCall(() => readBatch(records, batchId)));
    if (!record) return this.get(batchId);
    const recorded = boundAnswer(batchId, record.batch, record.merchantId);
    if (isBatchClosed(recorded.status)) return recorded;
    let progress: BatchProgress;
    try {
      progress = await this.get(batchId);
    } catch (err) {
      if (!(err instanceof AppError) || err.kind === 'conflict') throw err;
      // The batch's record alone would step back to its last tenth after the workflow's item-by-item count.
      const { batch, pace } = await readBatchFigures(records, batchId);
      return { ...batch, pace };
    }
    return withPace(records, progress);
  }

  /** The batch's progress, from the running workflow, the closed one's result, or the start of one that never ran. */
  async get(batchId: string): Promise<BatchProgress> {
    const progress = await queryOrResult(
      this.client,
      batchId,
      batchProgressQuery,
      QUERY_TIMEOUT_MS,
      ([message, carry], startTime) =>
        batchProgress(
          messageBody(message as Signed<BatchInput>),
          (carry as BatchCarry | undefined) ?? startingCarry(startTime, messageBody(message as Signed<BatchInput>)),
        ),
    );
    boundAnswer(batchId, progress);
    if (isBatchClosed(progress.status)) return progress;
    // Terminated (or otherwise ended) before it finished: its counts stop here, though started items run on.
    return (await endedWithoutResult(this.client, batchId)) ? { ...progress, status: 'needs_review' } : progress;
  }

  /**
   * Pauses, resumes or cancels a batch; refused (conflict) when the batch is past that point, or when a merchant
   * (no `operator`) would resume an operator's pause. An operator's (named) is recorded as their action.
   */
  async control(batchId: string, action: BatchAction, operator?: string): Promise<BatchProgress> {
    const actions = this.options.actions;
    if (operator !== undefined && !actions) throw new Error('this Batches instance has no record of operator actions');
    const control: BatchControl = operator === undefined ? { action } : { action, operator };
    const taskQueue = await temporalCall(async () => this.options.taskQueueOf?.(batchId));
    const message = signMessage(
      requireSigningKeys(this.options.signingKeys),
      'batch-control',
      batchId,
      control,
      this.scope(taskQueue),
    );
    const batch = await executeUpdate(
      this.client,
      batchId,
      batchControlUpdate,
      message,
      'the batch has already finished',
    );
    if (operator !== undefined && actions) {
      await recordAppliedAction(actions, {
        operator,
        action: `batch.${action}`,
        subjectId: batchId,
        outcome: batch.status,
      });
    }
    return batch;
  }

  /**
   * An operator's approval or rejection of a batch waiting for one, counted by its workflow, then recorded (an
   * approval row and its operator action). Refused (conflict) when no decision is due or this operator may not decide.
   */
  async decide(batchId: string, decision: ApprovalDecision, operator: string): Promise<BatchProgress> {
    const actions = this.options.actions;
    if (!actions) throw new Error('this Batches instance has no record of operator actions');
    const taskQueue = await temporalCall(async () => this.options.taskQueueOf?.(batchId));
    const body: ApprovalInput = { decision, operator };
    const keys = requireSigningKeys(this.options.signingKeys);
    const message = signMessage(keys, 'approval', batchId, body, this.scope(taskQueue));
    const batch = await executeUpdate(this.client, batchId, batchApprovalUpdate, message, 'the batch has finished');
    await recordAppliedDecision(actions, {
      subject: 'batch',
      subjectId: batchId,
      operator,
      decision,
      outcome: batch.status,
    });
    return batch;
  }

  private async existing(batchId: string, fingerprint: string): Promise<BatchProgress | undefined> {
    const description = await temporalCall(() => this.client.workflow.getHandle(batchId).describe()).catch(
      (err: unknown) => {
        if (err instanceof WorkflowNotFoundError) return undefined;
        throw err;
      },
    );
    if (!description) return undefined;
    if (description.memo?.fingerprint !== fingerprint) throw batchConflict(batchId);
    return this.get(batchId);
  }
}

/** When a batch starts and how many approvals it needs, from its merchant's thresholds and its total. */
function waitingFields(
  options: BatchCreation,
  merchantId: string,
  totalMinor: number,
  scheduledAt: string | undefined,
): Pick<BatchInput, 'startsAt' | 'approvalsRequired' | 'approvalWindowMs'> {
  const required = batchApprovalsRequired(options.approvalThresholds?.(merchantId), totalMinor);
  return {
    ...(scheduledAt ? { startsAt: new Date(scheduledAt).toISOString() } : {}),
    ...(required > 0
      ? { approvalsRequired: required, approvalWindowMs: options.approvalWindowMs ?? DEFAULT_APPROVAL_WINDOW_MS }
      : {}),
  };
}

/** The batch's Web UI summary: reference, size, total, and when it starts when not at once. */
function batchSummary(input: BatchInput): string {
  const starts = input.startsAt ? ` · starts ${input.startsAt}` : '';
  const approvals = input.approvalsRequired ? ` · ${input.approvalsRequired} approval(s) needed` : '';
  return `payout batch ${input.reference} · ${input.itemCount} bank credits · ${input.totalMinor / 100}${starts}${approvals}`;
}

function batchConflict(batchId: string): AppError {
  return new AppError('conflict', `batch reference ${batchId} was already used with a different request`);
}
