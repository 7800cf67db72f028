import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
} from '@temporalio/client';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type {
  PaymentInput,
  PaymentMessage,
  PaymentResource,
  PaymentStatus,
  PaymentTiming,
  ProviderCallback,
  ResolveInput,
} from '../domain/payment-model';
import { PAYMENT_STATUSES, isTerminal, newPaymentResource, startedPaymentInput } from '../domain/payment-model';
import type { PaymentSummary } from '../domain/api-resources';
import { PAYMENT_TYPES } from '../domain/requests';
import type { PaymentRequest, PaymentType } from '../domain/requests';
import {
  SearchAttributes,
  callbackSignal,
  initiationUpdate,
  paymentQuery,
  paymentSearchAttributes,
  resolveUpdate,
} from '../workflows/definitions';
import { PAYMENT_WORKFLOW, paymentWorkflowId } from '../domain/ids';
import { paymentStaticDetails, paymentSummary } from '../domain/web-ui-text';
import type { paymentWorkflow } from '../workflows';
import { AppError, temporalCall } from './app-errors';
import { paymentFingerprint } from './fingerprint';
import { ENDED_WITHOUT_RESULT, endedWithoutResult, executeUpdate, queryOrResult } from './workflow-calls';
import { readableHistory } from './workflow-history';
import type { HistoryStep } from './workflow-history';
import { cardToken, detachCard } from '../vault/card-data';
import type { Keyring } from '../crypto/keyring';
import { requireSigningKeys, signMessage } from '../crypto/signing';
import type { CardVault } from '../vault/card-vault';

export interface PaymentsOptions {
  taskQueue: string;
  queryTimeoutMs?: number;
  /** Signs what starts, settles or resolves a payment (SIGNING_KEYS); reading and listing do without. */
  signingKeys?: Keyring;
  /** What creating payments needs; reading, listing and resolving them (the operator CLI) does without. */
  creation?: PaymentCreation;
}

export interface PaymentCreation {
  /** Secret that keys the request fingerprints kept to detect a reused reference with another body. */
  fingerprintSecret: string;
  timingFor(type: PaymentType): PaymentTiming;
  initiationWaitMs: number;
  /** Holds card data outside Temporal until the initiation activity takes it. */
  cardVault: CardVault;
}

export type { PaymentSummary } from '../domain/api-resources';

/** A payment as the operator's `show` presents it: the resource, its workflow, and its history when asked. */
export interface PaymentInspection {
  payment: PaymentResource;
  workflow: { status: string; summary: string | null; started_at: string; closed_at: string | null };
  history: HistoryStep[] | undefined;
}

export interface ListFilter {
  merchantId?: string;
  /** One status, or any of several. */
  status?: PaymentStatus | readonly PaymentStatus[];
  type?: PaymentType;
  reference?: string;
  createdBefore?: Date;
  createdAfter?: Date;
  /** Only payments whose workflow ended (terminated, cancelled…) before they had an outcome. */
  endedWithoutOutcome?: boolean;
  /** The payments of one payout batch (its items). */
  batchId?: string;
  limit: number;
}

/** A list filter with a cursor: the page starts after this payment id (its start time, then its id). */
export interface PageFilter extends ListFilter {
  startingAfter?: string;
}

/** One page of a list, newest first; `hasMore` when a page after its last payment exists. */
export interface PaymentPage {
  data: PaymentSummary[];
  hasMore: boolean;
}

/** The payment operations of the merchant API and operator tools, in terms of Temporal workflows. */
export class Payments {
  constructor(
    private readonly client: Client,
    private readonly options: PaymentsOptions,
  ) {}

  /** Starts the payment's workflow once per reference; the same body again returns the existing payment. */
  async create(merchantId: string, request: PaymentRequest): Promise<{ created: boolean; payment: PaymentResource }> {
    const creation = this.options.creation;
    if (!creation) throw new Error('this Payments instance was made without creation settings');
    const paymentId = paymentWorkflowId(merchantId, request.reference);
    const fingerprint = paymentFingerprint(creation.fingerprintSecret, merchantId, request);
    const stored = await detachCard(request, creation.cardVault).catch(() => {
      throw new AppError('unavailable', 'the card vault is unreachable right now');
    });
    const input: PaymentInput = {
      paymentId,
      merchantId,
      request: stored,
      createdAt: new Date().toISOString(),
      timing: creation.timingFor(request.type),
    };
    const start = new WithStartWorkflowOperation<typeof paymentWorkflow>(PAYMENT_WORKFLOW, {
      workflowId: paymentId,
      taskQueue: this.options.taskQueue,
      args: [signMessage(requireSigningKeys(this.options.signingKeys), 'payment', paymentId, input)],
      workflowIdConflictPolicy: 'FAIL',
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      memo: { fingerprint },
      staticSummary: paymentSummary(request),
      staticDetails: paymentStaticDetails(merchantId, request, input.createdAt),
      typedSearchAttributes: paymentSearchAttributes(input),
    });
    const deadline = Date.now() + creation.initiationWaitMs;
    const discardCard = async () => {
      const token = cardToken(stored);
      // Unused card data goes now; should that fail, it expires on its own.
      if (token) await creation.cardVault.discard(token).catch(() => undefined);
    };
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
      const payment = await this.afterWait(paymentId, fallback);
      if (payment) return { created: true, payment };
      await discardCard();
      throw new AppError('unavailable', 'the payment could not be started right now; retry with the same reference');
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
    if (existing.status.name !== 'RUNNING') return this.get(paymentId);
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
    return description.status.name === 'RUNNING' ? fallback : this.get(paymentId);
  }

  /** The payment resource, from the running workflow, the closed one's result, or the start of one that never ran. */
  async get(paymentId: string): Promise<PaymentResource> {
    const payment = await queryOrResult(
      this.client,
      paymentId,
      paymentQuery,
      this.options.queryTimeoutMs ?? 5000,
      ([message], startTime) => newPaymentResource(startedPaymentInput(message as PaymentMessage, startTime)),
    );
    if (isTerminal(payment.status)) return payment;
    // Terminated (or otherwise ended) before its outcome: nothing will settle it now, so an operator must.
    const ended = await endedWithoutResult(this.client, paymentId);
    if (!ended) return payment;
    const message =
      `its workflow was ${ended.how} before the payment had an outcome: nothing settles it any more; ` +
      'check it with the provider and tell the merchant';
    return {
      ...payment,
      status: 'needs_review',
      events: [...payment.events, { at: ended.at, type: 'needs_review', message }],
    };
  }

  /** The payment with its workflow's state and, when asked, its Temporal history in readable steps (`ops show`). */
  async inspect(paymentId: string, withHistory: boolean): Promise<PaymentInspection> {
    const payment = await this.get(paymentId);
    const description = await this.client.workflow.getHandle(paymentId).describe();
    const workflow = {
      status: description.status.name,
      summary: (await description.staticSummary()) ?? null,
      started_at: description.startTime.toISOString(),
      closed_at: description.closeTime?.toISOString() ?? null,
    };
    const history = withHistory ? await readableHistory(this.client, paymentId) : undefined;
    return { payment, workflow, history };
  }

  /** Payments matching the filter, newest first, from Temporal's visibility store. */
  async list(filter: ListFilter): Promise<PaymentSummary[]> {
    return (await this.page(filter)).data;
  }

  /**
   * One page of the payments matching the filter, newest first: by start time, then by id, so a cursor
   * (`startingAfter`, a payment id) always finds the same next page. Temporal's SQL visibility lists in its own
   * order, so the page is read from the smallest window of start times that holds it (counted first: one second
   * back from the cursor, growing fourfold), then sorted.
   */
  async page(filter: PageFilter): Promise<PaymentPage> {
    const clauses = this.filterClauses(filter);
    const cursor = filter.startingAfter === undefined ? undefined : await this.cursorOf(filter.startingAfter);
    if (cursor) clauses.push(`StartTime < ${JSON.stringify(new Date(cursor.startMs + 1).toISOString())}`);
    const query = (extra: string[]) => [...clauses, ...extra].join(' AND ');
    const upperMs = cursor ? cursor.startMs + 1 : Date.now() + 1000;
    const total = await this.count(query([]));
    const wanted = filter.limit + 1;
    let kept: SortedSummary[] = [];
    for (let spanMs = 1000; ; spanMs *= 4) {
      const lower = new Date(upperMs - spanMs).toISOString();
      const whole = total <= filter.limit + 2 || upperMs - spanMs < EARLIEST_MS;
      const window = whole ? [] : [`StartTime >= ${JSON.stringify(lower)}`];
      if (!whole && (await this.count(query(window))) < wanted + 1) continue;
      kept = (await this.listAll(query(window))).filter((p) => !cursor || comesAfter(cursor, p)).sort(newestFirst);
      if (kept.length >= wanted || whole) break;
    }
    return { data: kept.slice(0, filter.limit).map((p) => p.summary), hasMore: kept.length > filter.limit };
  }

  private filterClauses(filter: ListFilter): string[] {
    const clauses = [`WorkflowType = '${PAYMENT_WORKFLOW}'`];
    const eq = (name: string, value: string | undefined) => {
      if (value !== undefined) clauses.push(`${name} = ${JSON.stringify(value)}`);
    };
    eq(SearchAttributes.merchant.name, filter.merchantId);
    const statuses = filter.status === undefined ? [] : [filter.status].flat();
    if (statuses.length > 0) clauses.push(`(${statuses.map(statusClause).join(' OR ')})`);
    if (filter.endedWithoutOutcome) clauses.push(endedWithoutOutcomeClause);
    eq(SearchAttributes.type.name, filter.type);
    eq(SearchAttributes.reference.name, filter.reference);
    eq(SearchAttributes.batch.name, filter.batchId);
    if (filter.createdBefore) clauses.push(`StartTime < ${JSON.stringify(filter.createdBefore.toISOString())}`);
    if (filter.createdAfter) clauses.push(`StartTime > ${JSON.stringify(filter.createdAfter.toISOString())}`);
    return clauses;
  }

  /** Where a cursor's payment stands in the order; a payment that does not exist is a bad cursor. */
  private async cursorOf(paymentId: string): Promise<Cursor> {
    const description = await temporalCall(() => this.client.workflow.getHandle(paymentId).describe()).catch(
      (err: unknown) => {
        if (err instanceof WorkflowNotFoundError) throw new AppError('not_found', `no payment ${paymentId}`);
        throw err;
      },
    );
    return { startMs: description.startTime.getTime(), id: paymentId };
  }

  private async count(query: string): Promise<number> {
    return (await temporalCall(() => this.client.workflow.count(query))).count;
  }

  private async listAll(query: string): Promise<SortedSummary[]> {
    const found: SortedSummary[] = [];
    await temporalCall(async () => {
      for await (const info of this.client.workflow.list({ query, pageSize: 1000 })) {
        found.push({ startMs: info.startTime.getTime(), id: info.workflowId, summary: summarize(info) });
      }
    });
    return found;
  }

  /**
   * How many payments of this task queue wait for an operator: in review, or ended without an outcome (their workflow
   * terminated or cancelled). From Temporal visibility, seconds behind.
   */
  async countInReview(): Promise<number> {
    const query = [
      `WorkflowType = '${PAYMENT_WORKFLOW}'`,
      `TaskQueue = ${JSON.stringify(this.options.taskQueue)}`,
      statusClause('needs_review'),
    ].join(' AND ');
    return (await temporalCall(() => this.client.workflow.count(query))).count;
  }

  /** An operator's decision on a payment in review; refused unless it is `needs_review`. */
  async resolve(paymentId: string, resolution: ResolveInput): Promise<PaymentResource> {
    const message = signMessage(requireSigningKeys(this.options.signingKeys), 'resolution', paymentId, resolution);
    return executeUpdate(this.client, paymentId, resolveUpdate, message, 'the payment is already settled');
  }

  /** Hands a provider callback to the payment's workflow, signed for it; `closed` once its workflow has ended. */
  async deliverCallback(paymentId: string, callback: ProviderCallback): Promise<'accepted' | 'closed' | 'unknown'> {
    const handle = this.client.workflow.getHandle(paymentId);
    const message = signMessage(requireSigningKeys(this.options.signingKeys), 'callback', paymentId, callback);
    try {
      await temporalCall(() => handle.signal(callbackSignal, message));
      return 'accepted';
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      const description = await temporalCall(() => handle.describe()).catch((e: unknown) => {
        if (e instanceof WorkflowNotFoundError) return undefined;
        throw e;
      });
      return description ? 'closed' : 'unknown';
    }
  }
}

const OPEN_STATUSES: readonly PaymentStatus[] = ['initiating', 'pending', 'reconciling', 'needs_review'];
const quoted = (values: readonly string[]) => values.map((v) => JSON.stringify(v)).join(', ');
/** A payment whose workflow ended (terminated, cancelled…) while its status was still open: nothing settles it now. */
const endedWithoutOutcomeClause = `ExecutionStatus IN (${quoted(Object.values(ENDED_WITHOUT_RESULT))}) AND ${SearchAttributes.status.name} IN (${quoted(OPEN_STATUSES)})`;

/** Visibility clause for payments that show `status`: one that ended without an outcome shows `needs_review`. */
function statusClause(status: PaymentStatus): string {
  const recorded = `${SearchAttributes.status.name} = ${JSON.stringify(status)}`;
  if (isTerminal(status)) return recorded;
  if (status === 'needs_review')
    return `((${recorded} AND ExecutionStatus = 'Running') OR (${endedWithoutOutcomeClause}))`;
  return `(${recorded} AND ExecutionStatus = 'Running')`;
}

/** Start times before this are not searched for older pages (2000-01-01). */
const EARLIEST_MS = Date.UTC(2000, 0, 1);

interface Cursor {
  startMs: number;
  id: string;
}

interface SortedSummary extends Cursor {
  summary: PaymentSummary;
}

/** The list order: newest start first, then the greater id first (start times are kept to the millisecond). */
function newestFirst(a: Cursor, b: Cursor): number {
  return b.startMs - a.startMs || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/** True when `p` comes after the cursor in the list order. */
function comesAfter(cursor: Cursor, p: Cursor): boolean {
  return newestFirst(cursor, p) < 0;
}

/** The value when it is one of `values`, else null (a search attribute set by an older or newer version). */
function oneOf<T extends string>(values: readonly T[], value: string | undefined): T | null {
  return values.find((v) => v === value) ?? null;
}

function summarize(info: WorkflowExecutionInfo): PaymentSummary {
  const sa = info.typedSearchAttributes;
  const recorded = oneOf(PAYMENT_STATUSES, sa.get(SearchAttributes.status));
  const ended = info.status.name in ENDED_WITHOUT_RESULT;
  return {
    id: info.workflowId,
    type: oneOf(PAYMENT_TYPES, sa.get(SearchAttributes.type)),
    reference: sa.get(SearchAttributes.reference) ?? null,
    status: ended && recorded !== null && !isTerminal(recorded) ? 'needs_review' : recorded,
    amount: sa.get(SearchAttributes.amount) ?? null,
    created_at: info.startTime.toISOString(),
    closed_at: info.closeTime?.toISOString() ?? null,
  };
}
