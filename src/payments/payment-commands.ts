import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
} from '@temporalio/client';
import type { Client, UpdateDefinition } from '@temporalio/client';
import type {
  PaymentInput,
  PaymentResource,
  PaymentTiming,
  ProviderCallback,
  ResolveInput,
} from '../domain/payment-model';
import { PAYMENT_TASK_TIMEOUT, newPaymentResource } from '../domain/payment-model';
import type { PaymentRequest, PaymentType } from '../domain/requests';
import {
  callbackSignal,
  initiationUpdate,
  paymentApprovalUpdate,
  paymentSearchAttributes,
  resolveUpdate,
} from '../workflows/definitions';
import { PAYMENT_WORKFLOW, paymentWorkflowId } from '../domain/ids';
import { paymentStaticDetails, paymentSummary } from '../domain/web-ui-text';
import type { paymentWorkflow } from '../workflows';
import { AppError, purgedReference, recordCall, temporalCall } from './app-errors';
import { boundAnswer } from './bound-answers';
import { paymentFingerprint } from './fingerprint';
import type { PaymentReads } from './payment-reads';
import { executeUpdate } from './workflow-calls';
import { cardToken, detachCard } from '../vault/card-vault';
import type { Keyring } from '../crypto/keyring';
import { requireSigningKeys, signMessage } from '../crypto/signing';
import type { CardVault } from '../vault/card-vault';
import type { MessageKind, Signed } from '../domain/signed';
import type { Database } from '../records/database';
import { recordLateCallback } from '../records/late-callback-records';
import { takePaymentKey } from '../records/idempotency-keys';
import { readPayment } from '../records/record-reads';
import { recordAppliedAction, recordAppliedDecision } from './operator-action-log';
import { DEFAULT_APPROVAL_WINDOW_MS, creditApprovalsRequired } from '../domain/approval-rules';
import type { ApprovalDecision, ApprovalInput, ApprovalThresholds } from '../domain/approval-rules';
import { toMinorUnits } from '../domain/money';

export interface PaymentCommandsOptions {
  taskQueue: string;
  /** Signs what starts, settles or resolves a payment (SIGNING_KEYS). */
  signingKeys?: Keyring;
  /** What creating payments needs; resolving them (the operator CLI) does without. */
  creation?: PaymentCreation;
  /** Where operator actions are recorded (`operator_actions`): resolving needs it. */
  actions?: Database;
  /**
   * The task queue a workflow runs on, asked of Temporal (the operator CLI): an operator's resolution is signed for
   * that, whatever TASK_QUEUE the CLI was given. Without it, `taskQueue`.
   */
  taskQueueOf?: (workflowId: string) => Promise<string | undefined>;
  /**
   * How long after a payment's workflow closed its callbacks are still recorded, on its record (LATE_CALLBACK_WINDOW),
   * and where: the server's. Without it a closed payment takes no callback.
   */
  lateCallbacks?: { records: Database; windowMs: number };
}

export interface PaymentCreation {
  /** Secret that keys the request fingerprints kept to detect a reused reference with another body. */
  fingerprintSecret: string;
  timingFor(type: PaymentType): PaymentTiming;
  initiationWaitMs: number;
  /** Holds card data outside Temporal until the initiation activity takes it. */
  cardVault: CardVault;
  /** The records: the idempotency key and the payment's first record are written there before anything starts. */
  records: Database;
  /** Each merchant's approval thresholds (APPROVAL_THRESHOLDS): a bank credit above `credit` waits for an operator. */
  approvalThresholds?: (merchantId: string) => ApprovalThresholds | undefined;
  /** How long such a payment waits for its approval (APPROVAL_WINDOW). */
  approvalWindowMs?: number;
}

/**
 * The answer to a create whose start Temporal did not confirm: it may still carry the start out, and the same request
 * sent again settles it either way.
 */
function startNotConfirmed(): AppError {
  return new AppError(
    'unavailable',
    'Temporal did not confirm the start; send the same request again: it answers the payment if it started, ' +
      'and starts it once if not',
  );
}

/** What changes payments: create one, hand it a provider callback, resolve it; each a signed Temporal call. */
export class PaymentCommands {
  constructor(
    private readonly client: Client,
    private readonly reads: PaymentReads,
    private readonly options: PaymentCommandsOptions,
  ) {}

  /** Signs a message for a payment's workflow, in this client's namespace and the payments' task queue. */
  private sign<T>(kind: MessageKind, paymentId: string, body: T, taskQueue = this.options.taskQueue): Signed<T> {
    const scope = { namespace: this.client.options.namespace, taskQueue };
    return signMessage(requireSigningKeys(this.options.signingKeys), kind, paymentId, body, scope);
  }

  /**
   * Starts the payment's workflow once per reference, forever: the reference is taken in the records first, with the
   * payment's first record; the same body again answers the recorded payment, another body is a conflict.
   */
  async create(merchantId: string, request: PaymentRequest): Promise<{ created: boolean; payment: PaymentResource }> {
    const creation = this.options.creation;
    if (!creation) throw new Error('these PaymentCommands were made without creation settings');
    const paymentId = paymentWorkflowId(merchantId, request.reference);
    const fingerprint = paymentFingerprint(creation.fingerprintSecret, merchantId, request);
    const stored = await detachCard(request, creation.cardVault).catch(() => {
      throw new AppError('unavailable', 'the card vault is unreachable right now');
    });
    const discardCard = async () => {
      const token = cardToken(stored);
      // Unused card data goes now; should that fail, it expires on its own.
      if (token) await creation.cardVault.discard(token).catch(() => undefined);
    };
    let input: PaymentInput = {
      paymentId,
      merchantId,
      request: stored,
      createdAt: new Date().toISOString(),
      timing: creation.timingFor(request.type),
      ...approvalFields(creation, merchantId, request),
    };
    const key = {
      merchantId,
      scope: 'payment' as const,
      reference: request.reference,
      fingerprint,
      resourceId: paymentId,
    };
    const firstRecord = newPaymentResource(input);
    const claim = await recordCall(() => takePaymentKey(creation.records, key, firstRecord)).catch(
      async (err: unknown) => {
        await discardCard();
        throw err;
      },
    );
    if (!claim.taken) {
      if (claim.fingerprint !== fingerprint) {
        await discardCard();
        throw new AppError('conflict', `reference ${request.reference} was already used with a different request`);
      }
      if (claim.purged) {
        await discardCard();
        throw purgedReference(`reference ${request.reference}`, paymentId);
      }
      const record = await recordCall(() => readPayment(creation.records, paymentId));
      // Recorded past its creation: its workflow ran, and the record answers whatever Temporal has kept of it.
      if (record && record.revision > 0) {
        await discardCard();
        return { created: false, payment: boundAnswer(paymentId, record.payment, record.merchantId) };
      }
      // Only created so far: its workflow may never have started (a crash between the key and the start), so this
      // attempt starts it as recorded; should it have started, Temporal refuses the duplicate and it is read instead.
      if (record) input = { ...input, createdAt: record.payment.created_at };
    }
    return this.start(input, request, fingerprint, discardCard);
  }

  /** Starts the payment's workflow and waits for its initiation (one round trip), or reads the one already started. */
  private async start(
    input: PaymentInput,
    request: PaymentRequest,
    fingerprint: string,
    discardCard: () => Promise<void>,
  ): Promise<{ created: boolean; payment: PaymentResource }> {
    const creation = this.options.creation;
    if (!creation) throw new Error('these PaymentCommands were made without creation settings');
    const { paymentId, merchantId } = input;
    const start = new WithStartWorkflowOperation<typeof paymentWorkflow>(PAYMENT_WORKFLOW, {
      workflowId: paymentId,
      taskQueue: this.options.taskQueue,
      args: [this.sign('payment', paymentId, input)],
      workflowIdConflictPolicy: 'FAIL',
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      workflowTaskTimeout: PAYMENT_TASK_TIMEOUT,
      memo: { fingerprint },
      staticSummary: paymentSummary(request),
      staticDetails: paymentStaticDetails(merchantId, request, input.createdAt),
      typedSearchAttributes: paymentSearchAttributes(input),
    });
    const deadline = Date.now() + creation.initiationWaitMs;
    try {
      // One round trip: the start, and a wait the workflow answers as soon as its initiation step is over.
      const payment = await this.client.withDeadline(deadline, () =>
        this.client.workflow.executeUpdateWithStart(initiationUpdate, { startWorkflowOperation: start }),
      );
      return { created: true, payment };
    } catch (err) {
      const fallback = newPaymentResource(input);
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        await discardCard();
        return {
          created: false,
          payment: await this.existing(paymentId, fingerprint, request.reference, fallback, deadline),
        };
      }
      // The wait ran out, the workflow closed before answering, or Temporal failed: whether it started decides.
      const payment = await this.afterWait(paymentId, fallback).catch((waitErr: unknown) => {
        throw waitErr instanceof AppError && waitErr.kind === 'unavailable' ? startNotConfirmed() : waitErr;
      });
      if (payment) return { created: true, payment };
      await discardCard();
      throw startNotConfirmed();
    }
  }

  /** The payment a reference already started, once its body matches (`409` otherwise), past its initiation step. */
  private async existing(
    paymentId: string,
    fingerprint: string,
    reference: string,
    fallback: PaymentResource,
    deadline: number,
  ): Promise<PaymentResource> {
    const handle = this.client.workflow.getHandle<typeof paymentWorkflow>(paymentId);
    const existing = await temporalCall(() => handle.describe());
    if (existing.memo?.fingerprint !== fingerprint) {
      throw new AppError('conflict', `reference ${reference} was already used with a different request`);
    }
    if (existing.status.name !== 'RUNNING') return this.closedPayment(paymentId);
    try {
      return await this.client.withDeadline(deadline, () => handle.executeUpdate(initiationUpdate));
    } catch {
      return (await this.afterWait(paymentId, fallback)) ?? fallback;
    }
  }

  /** The payment once the wait for its initiation failed: its latest state, or undefined when it never started. */
  private async afterWait(paymentId: string, fallback: PaymentResource): Promise<PaymentResource | undefined> {
    const description = await temporalCall(() => this.client.workflow.getHandle(paymentId).describe()).catch(
      (err: unknown) => {
        if (err instanceof WorkflowNotFoundError) return undefined;
        throw err;
      },
    );
    if (!description) return undefined;
    // Still running after the wait: its initiation step is not over (no worker has taken it yet, or it is slow).
    return description.status.name === 'RUNNING' ? fallback : this.closedPayment(paymentId);
  }

  /**
   * A payment whose workflow has closed (it closes with its outcome, often within the wait), as its record shows it;
   * while PostgreSQL does not answer, as its workflow returned it once that record was written.
   */
  private async closedPayment(paymentId: string): Promise<PaymentResource> {
    try {
      return await this.reads.get(paymentId);
    } catch (err) {
      if (!(err instanceof AppError && err.kind === 'unavailable')) throw err;
      return this.reads.live(paymentId);
    }
  }

  /** Where operator actions are recorded; an operator's command needs it. */
  private operatorActions(): Database {
    const actions = this.options.actions;
    if (!actions) throw new Error('these PaymentCommands were made without a record of operator actions');
    return actions;
  }

  /** An operator's Update, signed for the task queue the payment runs on; a conflict once the payment has closed. */
  private async operatorUpdate<A>(
    paymentId: string,
    update: UpdateDefinition<PaymentResource, [Signed<A>]>,
    kind: MessageKind,
    body: A,
  ): Promise<PaymentResource> {
    const taskQueue = await temporalCall(
      async () => (await this.options.taskQueueOf?.(paymentId)) ?? this.options.taskQueue,
    );
    const message = this.sign(kind, paymentId, body, taskQueue);
    return executeUpdate(this.client, paymentId, update, message, 'the payment is already settled');
  }

  /** An operator's decision on a payment in review, recorded as their action; refused unless it is `needs_review`. */
  async resolve(paymentId: string, resolution: ResolveInput & { operator: string }): Promise<PaymentResource> {
    const actions = this.operatorActions();
    const payment = await this.operatorUpdate(paymentId, resolveUpdate, 'resolution', resolution);
    await recordAppliedAction(actions, {
      operator: resolution.operator,
      action: 'payment.resolve',
      subjectId: paymentId,
      detail: { outcome: resolution.outcome, note: resolution.note },
      outcome: payment.status,
    });
    return payment;
  }

  /**
   * An operator's approval or rejection of a bank credit waiting for one, counted by its workflow, then recorded (an
   * approval row and its operator action). Refused (conflict) when no decision is due or this operator may not decide.
   */
  async decide(paymentId: string, decision: ApprovalDecision, operator: string): Promise<PaymentResource> {
    const actions = this.operatorActions();
    const body: ApprovalInput = { decision, operator };
    const payment = await this.operatorUpdate(paymentId, paymentApprovalUpdate, 'approval', body);
    await recordAppliedDecision(actions, {
      subject: 'payment',
      subjectId: paymentId,
      operator,
      decision,
      outcome: payment.status,
    });
    return payment;
  }

  /**
   * Hands a provider callback to the payment's workflow, signed for it. Once its workflow has closed (it does as soon as
   * the payment is settled), the callback is recorded on the payment's record for LATE_CALLBACK_WINDOW; `closed`
   * after that, or when the record has no outcome to add it to.
   */
  async deliverCallback(paymentId: string, callback: ProviderCallback): Promise<'accepted' | 'closed' | 'unknown'> {
    const handle = this.client.workflow.getHandle(paymentId);
    const message = this.sign('callback', paymentId, callback);
    try {
      await temporalCall(() => handle.signal(callbackSignal, message));
      return 'accepted';
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      const description = await temporalCall(() => handle.describe()).catch((e: unknown) => {
        if (e instanceof WorkflowNotFoundError) return undefined;
        throw e;
      });
      if (!description) return 'unknown';
      const late = this.options.lateCallbacks;
      const closedAt = description.closeTime?.getTime();
      if (!late || closedAt === undefined || Date.now() - closedAt > late.windowMs) return 'closed';
      return (await recordLateCallback(late.records, paymentId, callback)) ? 'accepted' : 'closed';
    }
  }
}

/** Whether a payment waits for an operator before it is sent, from its merchant's thresholds, its type and amount. */
function approvalFields(
  creation: PaymentCreation,
  merchantId: string,
  request: PaymentRequest,
): Pick<PaymentInput, 'approvalsRequired' | 'approvalWindowMs'> {
  const thresholds = creation.approvalThresholds?.(merchantId);
  const required = creditApprovalsRequired(thresholds, request.type, toMinorUnits(request.amount));
  return required > 0
    ? { approvalsRequired: required, approvalWindowMs: creation.approvalWindowMs ?? DEFAULT_APPROVAL_WINDOW_MS }
    : {};
}
