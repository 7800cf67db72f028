import {
  batchProgressSchema,
  codecTokenAnswerSchema,
  paymentListSchema,
  paymentResourceSchema,
} from '../../../src/domain/api-resources';
import type { PaymentList, PaymentSummary } from '../../../src/domain/api-resources';
import type { BatchAction, BatchProgress } from '../../../src/domain/batch-model';
import type { NotificationEvent } from '../../../src/domain/notification';
import type { Outcome, PaymentResource, PaymentStatus } from '../../../src/domain/payment-model';
import type { BankCreditRequest, PaymentRequest, PaymentType } from '../../../src/domain/requests';
import { PaymentsTimeoutError } from './client-errors';
import { Transport, sleep } from './transport';

export interface PaymentsClientOptions {
  /** The server, e.g. `https://payments.example` (PUBLIC_BASE_URL). */
  baseUrl: string;
  /** A merchant key; an operator key for resolving payments. */
  apiKey: string;
  /** Per attempt, in milliseconds (default 30,000). */
  timeoutMs?: number;
  /** Attempts after the first on 503 and network errors (default 3). */
  retries?: number;
  /** The first wait between attempts in milliseconds (default 500, doubling); a 503's Retry-After wins. */
  retryDelayMs?: number;
  /** The longest wait between attempts (default 10,000). */
  maxRetryDelayMs?: number;
  /** Another fetch (a proxy agent, a test double); default the global fetch. */
  fetch?: typeof fetch;
}

export interface ListQuery {
  status?: PaymentStatus;
  type?: PaymentType;
  reference?: string;
  /** 1–100 (default 20). */
  limit?: number;
  /** The last id of the previous page. */
  starting_after?: string;
}

export type BatchItemsQuery = Pick<ListQuery, 'status' | 'limit' | 'starting_after'>;

/** A payout batch to submit: bank credits whose `type` may be left out. */
export interface PayoutBatchInput {
  reference: string;
  items: (Omit<BankCreditRequest, 'type'> & { type?: 'bank_credit' })[];
}

export interface WaitOptions {
  /** The statuses that end the wait (default `succeeded`, `failed`). Add `needs_review` to stop there too. */
  until?: readonly PaymentStatus[];
  /** Gives up with PaymentsTimeoutError after this many milliseconds (default 10 minutes). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** The first poll interval in milliseconds (default 1,000), growing 1.5× per poll up to maxPollIntervalMs. */
  pollIntervalMs?: number;
  /** Default 15,000; with notifications fed in (notificationReceived), polling is only the fallback. */
  maxPollIntervalMs?: number;
}

type Waiter = (payment: PaymentResource | undefined) => void;

const OUTCOMES: readonly Outcome[] = ['succeeded', 'failed'];

/** The merchant API, typed: payments, payout batches, waiting for outcomes, and (operator key) resolutions. */
export class PaymentsClient {
  private readonly transport: Transport;
  private readonly waiters = new Map<string, Set<Waiter>>();

  constructor(options: PaymentsClientOptions) {
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs ?? 30_000,
      retries: options.retries ?? 3,
      retryDelayMs: options.retryDelayMs ?? 500,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 10_000,
      fetch: options.fetch ?? fetch,
    });
  }

  /** Creates a payment; the same request again (after a lost answer, a 503) returns the same payment. */
  createPayment(request: PaymentRequest, options: { signal?: AbortSignal } = {}): Promise<PaymentResource> {
    return this.transport.send({
      method: 'POST',
      path: '/v1/payments',
      body: request,
      answer: paymentResourceSchema,
      idempotent: true,
      signal: options.signal,
    });
  }

  /** The payment with its events. */
  getPayment(id: string, options: { signal?: AbortSignal } = {}): Promise<PaymentResource> {
    return this.transport.send({
      method: 'GET',
      path: `/v1/payments/${encodeURIComponent(id)}`,
      answer: paymentResourceSchema,
      idempotent: true,
      signal: options.signal,
    });
  }

  /** One page of payments, newest first; `has_more` says whether `starting_after` the last id finds more. */
  listPayments(query: ListQuery = {}, options: { signal?: AbortSignal } = {}): Promise<PaymentList> {
    return this.transport.send({
      method: 'GET',
      path: '/v1/payments',
      query: { ...query },
      answer: paymentListSchema,
      idempotent: true,
      signal: options.signal,
    });
  }

  /** Every payment matching the query, page after page. */
  allPayments(query: Omit<ListQuery, 'starting_after'> = {}): AsyncIterable<PaymentSummary> {
    return pages((startingAfter) => this.listPayments({ ...query, starting_after: startingAfter }));
  }

  /** Operator key: settles a payment in review. Retried on 503 only (an Update is not re-sent blindly). */
  resolvePayment(id: string, resolution: { outcome: Outcome; note: string }): Promise<PaymentResource> {
    return this.transport.send({
      method: 'POST',
      path: `/v1/payments/${encodeURIComponent(id)}/resolve`,
      body: resolution,
      answer: paymentResourceSchema,
      idempotent: false,
    });
  }

  /** Submits a payout batch; the same batch again returns the same batch. */
  createBatch(batch: PayoutBatchInput, options: { signal?: AbortSignal } = {}): Promise<BatchProgress> {
    return this.transport.send({
      method: 'POST',
      path: '/v1/payout-batches',
      body: batch,
      answer: batchProgressSchema,
      idempotent: true,
      signal: options.signal,
    });
  }

  /** A batch's progress. */
  getBatch(id: string, options: { signal?: AbortSignal } = {}): Promise<BatchProgress> {
    return this.transport.send({
      method: 'GET',
      path: `/v1/payout-batches/${encodeURIComponent(id)}`,
      answer: batchProgressSchema,
      idempotent: true,
      signal: options.signal,
    });
  }

  /** One page of a batch's started items (payments), newest first. */
  listBatchItems(id: string, query: BatchItemsQuery = {}): Promise<PaymentList> {
    return this.transport.send({
      method: 'GET',
      path: `/v1/payout-batches/${encodeURIComponent(id)}/items`,
      query: { ...query },
      answer: paymentListSchema,
      idempotent: true,
    });
  }

  /** Every started item of a batch, page after page. */
  allBatchItems(id: string, query: Omit<BatchItemsQuery, 'starting_after'> = {}): AsyncIterable<PaymentSummary> {
    return pages((startingAfter) => this.listBatchItems(id, { ...query, starting_after: startingAfter }));
  }

  /** Stops starting items; in-flight items go on. */
  pauseBatch(id: string): Promise<BatchProgress> {
    return this.controlBatch(id, 'pause');
  }

  /** Starts items again. */
  resumeBatch(id: string): Promise<BatchProgress> {
    return this.controlBatch(id, 'resume');
  }

  /** Stops starting items for good; in-flight items finish. */
  cancelBatch(id: string): Promise<BatchProgress> {
    return this.controlBatch(id, 'cancel');
  }

  /** Operator key: a Web UI codec URL, valid for `ttl` (e.g. `8h`). */
  createCodecToken(ttl?: string) {
    return this.transport.send({
      method: 'POST',
      path: '/v1/operator/codec-tokens',
      body: ttl === undefined ? {} : { ttl },
      answer: codecTokenAnswerSchema,
      idempotent: true,
    });
  }

  /**
   * Resolves with the payment once its status is one of `until` (default: an outcome). Polls with a growing
   * interval; notifications handed to notificationReceived() end the wait at once.
   */
  async waitForOutcome(id: string, options: WaitOptions = {}): Promise<PaymentResource> {
    const until = options.until ?? OUTCOMES;
    const timeoutMs = options.timeoutMs ?? 600_000;
    const deadline = Date.now() + timeoutMs;
    const stop = new AbortController();
    const signals = [stop.signal, ...(options.signal ? [options.signal] : [])];
    let interval = options.pollIntervalMs ?? 1000;
    let pushed: PaymentResource | undefined;
    // Set by a notification that came while a read was in flight: the next sleep is skipped.
    let poked = false;
    let wake: (() => void) | undefined;
    const waiter: Waiter = (payment) => {
      if (payment && until.includes(payment.status)) pushed = payment;
      poked = true;
      wake?.();
    };
    const set = this.waiters.get(id) ?? new Set<Waiter>();
    this.waiters.set(id, set.add(waiter));
    try {
      for (;;) {
        poked = false;
        const payment = pushed ?? (await this.getPayment(id, { signal: AbortSignal.any(signals) }));
        if (until.includes(payment.status)) return payment;
        if (pushed) return pushed;
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new PaymentsTimeoutError(`payment ${id} is still ${payment.status} after ${timeoutMs} ms`);
        }
        // Sleeps until the interval is up, or a notification about this payment arrives.
        if (!poked) {
          await new Promise<void>((resolve, reject) => {
            wake = resolve;
            sleep(Math.min(interval, left), AbortSignal.any(signals)).then(resolve, reject);
          });
        }
        wake = undefined;
        interval = Math.min(interval * 1.5, options.maxPollIntervalMs ?? 15_000);
      }
    } finally {
      stop.abort();
      set.delete(waiter);
      if (set.size === 0) this.waiters.delete(id);
    }
  }

  /**
   * Hands a verified notification (verifyNotification) to the waits on its payment: a final payment ends them with
   * the notification's copy, any other one makes them read the payment now.
   */
  notificationReceived(event: NotificationEvent): void {
    const object = event.data.object;
    if (!('events' in object)) return;
    for (const waiter of this.waiters.get(object.id) ?? []) waiter(object);
  }

  private controlBatch(id: string, action: BatchAction): Promise<BatchProgress> {
    return this.transport.send({
      method: 'POST',
      path: `/v1/payout-batches/${encodeURIComponent(id)}/${action}`,
      answer: batchProgressSchema,
      idempotent: false,
    });
  }
}

/** Every entry of a paged list, fetching the next page while `has_more`. */
async function* pages(
  fetchPage: (startingAfter: string | undefined) => Promise<PaymentList>,
): AsyncGenerator<PaymentSummary> {
  let startingAfter: string | undefined;
  for (;;) {
    const page = await fetchPage(startingAfter);
    yield* page.data;
    const last = page.data.at(-1);
    if (!page.has_more || !last) return;
    startingAfter = last.id;
  }
}
