import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { PaymentMessage, PaymentResource, PaymentStatus } from '../domain/payment-model';
import { PAYMENT_STATUSES, isTerminal, newPaymentResource, startedPaymentInput } from '../domain/payment-model';
import type { PaymentSummary } from '../domain/api-resources';
import { PAYMENT_TYPES } from '../domain/requests';
import type { PaymentType } from '../domain/requests';
import { SearchAttributes, paymentQuery } from '../workflows/definitions';
import { PAYMENT_WORKFLOW } from '../domain/ids';
import { isSigned } from '../domain/signed';
import { AppError, recordCall, temporalCall } from './app-errors';
import { boundAnswer } from './bound-answers';
import type { Database } from '../records/database';
import { listPayments, paymentExists, readPayment } from '../records/record-reads';
import { recordEndedWithoutOutcome } from '../records/record-writes';
import { ENDED_WITHOUT_RESULT, endedWithoutResult, queryOrResult } from './workflow-calls';
import { readableHistory } from './workflow-history';
import type { HistoryStep } from './workflow-history';

export interface PaymentReadsOptions {
  /** The payments' task queue: `countInReview` counts only its payments. */
  taskQueue: string;
  queryTimeoutMs?: number;
  /**
   * The payment records: with them, `get` and `page` read PostgreSQL (the merchant API); without them (the operator
   * CLI), Temporal.
   */
  records?: Database;
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
  /** Created after this time (exclusive). */
  createdAfter?: Date;
  /** Created at or after this time. */
  createdFrom?: Date;
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

/**
 * What reads payments for the merchant API and operator tools: one payment and lists from the records (or Temporal,
 * for the CLI), the live view of a workflow and counts from Temporal.
 */
export class PaymentReads {
  constructor(
    private readonly client: Client,
    private readonly options: PaymentReadsOptions,
  ) {}

  /**
   * The payment resource: its record when there is one (no workflow query, no worker needed; kept whatever Temporal
   * has kept), else the live view of its workflow (a payment from before the records).
   */
  async get(paymentId: string): Promise<PaymentResource> {
    const records = this.options.records;
    if (!records) return this.live(paymentId);
    const record = await recordCall(() => readPayment(records, paymentId));
    if (!record) return this.live(paymentId);
    boundAnswer(paymentId, record.payment, record.merchantId);
    if (isTerminal(record.payment.status)) return record.payment;
    // Open in its record: a workflow ended without an outcome (terminated…) never writes again, so it shows as the
    // live view shows it. One describe, no query; without Temporal the record answers as it is.
    const ended = await endedWithoutResult(this.client, paymentId).catch(() => undefined);
    // Its record already says so (an earlier read wrote it).
    const last = record.payment.events.at(-1);
    if (!ended || (last?.type === 'needs_review' && last.at === ended.at)) return record.payment;
    const shown = inReviewAfterEnd(record.payment, ended);
    // From now on the record says so too: lists and filters find it in review.
    await recordCall(() => recordEndedWithoutOutcome(records, shown));
    return shown;
  }

  /** The payment resource, from the running workflow, the closed one's result, or the start of one that never ran. */
  async live(paymentId: string): Promise<PaymentResource> {
    const payment = await queryOrResult(
      this.client,
      paymentId,
      paymentQuery,
      this.options.queryTimeoutMs ?? 5000,
      ([message], startTime) => newPaymentResource(startedPaymentInput(message as PaymentMessage, startTime)),
    );
    // A closed batch item that returned its outcome to its batch (ItemReporting), and no worker to replay it for the
    // query: its record holds the payment.
    if (isSigned(payment)) return this.itemRecord(paymentId);
    boundAnswer(paymentId, payment);
    if (isTerminal(payment.status)) return payment;
    const ended = await endedWithoutResult(this.client, paymentId);
    return ended ? inReviewAfterEnd(payment, ended) : payment;
  }

  private async itemRecord(paymentId: string): Promise<PaymentResource> {
    const records = this.options.records;
    const record = records && (await recordCall(() => readPayment(records, paymentId)));
    if (!record) throw new AppError('unavailable', `${paymentId} cannot be read right now (no worker answered)`);
    boundAnswer(paymentId, record.payment, record.merchantId);
    return record.payment;
  }

  /** The payment with its workflow's state and, when asked, its Temporal history in readable steps (`ops show`). */
  async inspect(paymentId: string, withHistory: boolean): Promise<PaymentInspection> {
    const payment = await this.live(paymentId);
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

  /** Payments matching the filter, newest first (as `page` reads them). */
  async list(filter: ListFilter): Promise<PaymentSummary[]> {
    return (await this.page(filter)).data;
  }

  /**
   * One page of the payments matching the filter, newest first: by creation time, then by id, so a cursor
   * (`startingAfter`, a payment id) always finds the same next page. From the records when this has them.
   */
  async page(filter: PageFilter): Promise<PaymentPage> {
    const records = this.options.records;
    if (!records) return this.visibilityPage(filter);
    if (filter.endedWithoutOutcome || filter.createdAfter || Array.isArray(filter.status)) {
      throw new Error('the payment records are listed by one status and a creation range [from, before)');
    }
    const { startingAfter } = filter;
    if (startingAfter !== undefined && !(await recordCall(() => paymentExists(records, startingAfter)))) {
      throw new AppError('not_found', `no payment ${startingAfter}`);
    }
    return recordCall(() => listPayments(records, { ...filter, status: filter.status as PaymentStatus | undefined }));
  }

  /**
   * A page from Temporal's visibility store, in the same order (start time, then id). Temporal's SQL visibility lists in its own
   * order, so the page is read from the smallest window of start times that holds it (counted first: one second
   * back from the cursor, growing fourfold), then sorted.
   */
  private async visibilityPage(filter: PageFilter): Promise<PaymentPage> {
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
    if (filter.createdFrom) clauses.push(`StartTime >= ${JSON.stringify(filter.createdFrom.toISOString())}`);
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
}

/** A payment whose workflow ended (terminated…) before its outcome: nothing will settle it now, so an operator must. */
function inReviewAfterEnd(payment: PaymentResource, ended: { how: string; at: string }): PaymentResource {
  const message =
    `its workflow was ${ended.how} before the payment had an outcome: nothing settles it any more; ` +
    'check it with the provider and tell the merchant';
  return {
    ...payment,
    status: 'needs_review',
    events: [...payment.events, { at: ended.at, type: 'needs_review', message }],
  };
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
