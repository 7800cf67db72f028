import {
  CancellationScope,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  log,
  proxySinks,
  setCurrentDetails,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { ItemSettled } from '../domain/batch-model';
import { WorkerMetrics } from '../domain/metric-names';
import type { WorkflowMetricSinks } from '../domain/metric-names';
import type { Signed } from '../domain/signed';
import type { NotificationEvent, NotificationType } from '../domain/notification';
import { isTerminal } from '../domain/payment-model';
import type { PaymentInput, PaymentResource, PaymentStatus } from '../domain/payment-model';
import type { PaymentType } from '../domain/requests';
import { paymentCurrentDetails } from '../domain/web-ui-text';
import { SearchAttributes, itemSettledSignal } from './definitions';
import { Notifier } from './merchant-notifications';
import { isPatched } from './patches';
import type { PaymentState, PaymentStatusListener } from './payment-state';
import type { EventOutbox } from './merchant-notifications';
import { paymentRecords } from './record-writer';
import type { RecordWriter, Write } from './record-writer';
import { workflowTime } from './time';

// Metrics and log lines come from the workflow: the SDK drops both while replaying (the metric sink is not called
// during replay), so each counts once per event.
const { productMetrics } = proxySinks<WorkflowMetricSinks>();

/**
 * A change worked out on a fork of the payment before the local activity that tells whether it happens (a callback's
 * confirmation), with the record write that shows it: the activity makes that write too when it does.
 */
export interface Settlement {
  fork: PaymentState;
  /** The fork's notices, and the events they queued (in `write`, after any the record writer held already). */
  notices: PaymentNotices;
  notified: NotificationEvent[];
  write: Write<PaymentResource>;
  /** The payment as it was when forked: the fork is taken on only if nothing changed it since. */
  before: string;
}

/**
 * What a payment's changes set off outside its state: on every status change its record in PostgreSQL, the status
 * search attribute and the Web UI's current details, the metrics, the report to its batch and the merchant's
 * notifications. None of it holds the payment up; the workflow awaits `finished()` only before it returns.
 */
export class PaymentStatusEffects implements PaymentStatusListener {
  private readonly reports: Promise<void>[] = [];
  private reported: string | undefined;
  private reviewReported = false;
  private outcome: Signed<ItemSettled> | undefined;
  private readonly notices: PaymentNotices;
  private readonly records: RecordWriter<PaymentResource>;
  private asking = 0;
  private hold: () => boolean = () => false;

  /**
   * Counts and logs the payment's start. `outcomeInResult`: a batch item whose batch reads its outcome from the
   * item's result (ItemReporting), so that outcome is not signalled.
   */
  constructor(
    private readonly input: PaymentInput,
    private readonly outcomeInResult = false,
  ) {
    this.records = paymentRecords(input, (report) => this.report(report));
    this.notices = new PaymentNotices(new Notifier(input.merchantId, this.records));
    this.records.deferWhile(() => this.asking > 0 || this.hold());
    countStart(input.paymentId, input.request.type);
  }

  /**
   * Runs the payment's own local activity (the initiation, a callback's confirmation) with its record's writes held
   * until it answers: one local activity at a time, and the change is then recorded once, with the answer
   * (record-writer.ts).
   */
  async whileAsking<T>(ask: () => Promise<T>): Promise<T> {
    this.asking += 1;
    try {
      // A write already under way (one a callback before the initiation set off) ends first: two local activities
      // side by side answer in one activation when replayed, at the later one's time, so the events stamped after
      // the first would differ from what the record holds (docs/chaos.md).
      if (this.records.underWay && isPatched('one-local-activity-at-a-time')) await this.records.betweenWrites();
      return await ask();
    } finally {
      this.asking -= 1;
    }
  }

  /** Holds the record's writes while `predicate` is true too (a callback waiting for its confirmation). */
  holdRecordsWhile(predicate: () => boolean): void {
    this.hold = predicate;
  }

  /** The payment's status changed: record it, and tell Temporal's visibility, the metrics, its batch and its merchant. */
  statusChanged(state: PaymentState): void {
    // Notices first: the record written then holds their `notification_queued` events.
    this.notices.observe(state);
    this.records.record(state.resource);
    this.announce(state);
  }

  /**
   * What `change` makes of the payment, worked out on a fork (its notices too, none sent) with the record write that
   * would show it; undefined unless it settles the payment. `settled` then takes it on or lets it go.
   */
  settlement(state: PaymentState, change: (fork: PaymentState) => void): Settlement | undefined {
    const notified: NotificationEvent[] = [];
    const notices = this.notices.fork({ queue: (event) => notified.push(event) });
    const fork = state.fork({ statusChanged: (changed) => notices.observe(changed) });
    change(fork);
    if (!fork.terminal) return undefined;
    const write = this.records.draft(fork.resource, notified);
    return { fork, notices, notified, write, before: JSON.stringify(state.resource) };
  }

  /**
   * The answer of the activity handed `settlement`'s write (undefined: it failed, perhaps once it had written): when
   * the change happened and nothing changed the payment meanwhile, the payment takes the fork on, recorded by the
   * activity or else by the next write, and it answers true. Otherwise the workflow applies the answer itself, and its
   * next write comes after any the activity made.
   */
  settled(
    state: PaymentState,
    settlement: Settlement,
    answer?: { happened: boolean; recorded: boolean; report: Signed<ItemSettled> | null },
  ): boolean {
    const { fork, notices, notified, write, before } = settlement;
    if (answer?.report) this.report(answer.report);
    const unchanged = JSON.stringify(state.resource) === before && this.records.latest === write.revision - 1;
    if (!answer?.happened || !unchanged) {
      if (answer?.recorded ?? true) {
        this.records.supersede(write);
        this.notices.reserve(notified);
      }
      return false;
    }
    state.adopt(fork);
    this.notices.adopt(notices);
    this.records.adopt(write, answer.recorded);
    this.announce(state);
    return true;
  }

  /** Tells Temporal's visibility, the Web UI and the metrics of the payment's status. */
  private announce(state: PaymentState): void {
    const { paymentId, request } = this.input;
    const { status } = state;
    upsertSearchAttributes([{ key: SearchAttributes.status, value: status }]);
    setCurrentDetails(paymentCurrentDetails(state.resource));
    countStatus(paymentId, request.type, status);
  }

  /**
   * A batch item reports each outcome (or review) once, as recorded, with the worker's signature for its batch: by
   * signal, or by its result (`outcomeReport`) when its batch reads outcomes there and it never went to review (the
   * batch then holds it in review, in whichever run, and only a signal reaches that).
   */
  private report(report: Signed<ItemSettled>): void {
    const { batchId } = this.input;
    const { status } = report.body;
    if (!batchId || status === this.reported) return;
    this.reported = status;
    if (this.outcomeInResult && !this.reviewReported && (status === 'succeeded' || status === 'failed')) {
      this.outcome = report;
      return;
    }
    if (status === 'needs_review') this.reviewReported = true;
    this.reports.push(reportToBatch(batchId, report));
  }

  /** The signed outcome a batch item returns as its result, when its batch reads it there (see `report`). */
  get outcomeReport(): Signed<ItemSettled> | undefined {
    return this.outcome;
  }

  /** An event was recorded: the record follows (changes made in one step are written once). */
  changed(state: PaymentState): void {
    this.records.record(state.resource);
  }

  /**
   * The payment changed without a new status (a redirect with the acknowledgement, a status check, a late callback):
   * the current details and the notifications it may call for.
   */
  paymentChanged(state: PaymentState): void {
    this.notices.observe(state);
    this.records.record(state.resource);
    setCurrentDetails(paymentCurrentDetails(state.resource));
  }

  /** Counts and logs how a reconciliation ended: succeeded, failed or needs_review. */
  reconciliationEnded(state: PaymentState): void {
    const { paymentId, request } = this.input;
    const outcome: PaymentStatus = state.terminal ? state.status : 'needs_review';
    productMetrics.count(WorkerMetrics.reconciliations, { payment_type: request.type, outcome });
    log.info('reconciliation ended', { paymentId, paymentType: request.type, outcome });
  }

  /**
   * The payment as it is now, once its record holds it: the initiation's answer is read-your-writes (what `POST`
   * answers, a `GET` then reads).
   */
  async recorded(state: PaymentState): Promise<PaymentResource> {
    const answer = JSON.parse(JSON.stringify(state.resource)) as PaymentResource;
    await this.records.written(this.records.record(state.resource));
    return answer;
  }

  /**
   * Resolves once the batch has every report, the record (with its notifications) the payment's final state, and no
   * handler runs: a callback that arrives while the last write is under way is written too, not lost at the return.
   */
  async finished(state: PaymentState): Promise<void> {
    for (;;) {
      this.records.record(state.resource);
      await this.records.drained();
      // A batch item's report comes back signed from its record write: counted once the writes are done.
      const reports = this.reports.length;
      await Promise.all(this.reports);
      await condition(allHandlersFinished);
      if (this.records.idle && this.reports.length === reports) return;
    }
  }
}

/** Decides which of a payment's changes its merchant hears about, each once: call `observe` after any change. */
class PaymentNotices {
  private readonly sent = new Set<NotificationType>();
  private contradicting = 0;

  constructor(private readonly notifier: Notifier) {}

  /** Notices that go on from these, queuing to `outbox` (a fork's: PaymentStatusEffects.settlement). */
  fork(outbox: EventOutbox): PaymentNotices {
    const copy = new PaymentNotices(this.notifier.fork(outbox));
    copy.adopt(this);
    return copy;
  }

  /** Takes on what `other` (a fork) told, as if told here. */
  adopt(other: PaymentNotices): void {
    for (const type of other.sent) this.sent.add(type);
    this.contradicting = other.contradicting;
    this.notifier.adopt(other.notifier);
  }

  /** Events queued already that the next notices of their types are (Notifier.reserve). */
  reserve(events: readonly NotificationEvent[]): void {
    this.notifier.reserve(events);
  }

  /** Emits what the payment's current state calls for and was not yet told. */
  observe(state: PaymentState): void {
    const payment = state.resource;
    // Each event is shown on the payment, whose record is written with it.
    const emit = (type: NotificationType) => {
      const event = this.notifier.emit(type, payment);
      if (event) state.notificationQueued(event.type, event.id, workflowTime());
    };
    const once = (type: NotificationType) => {
      if (this.sent.has(type)) return;
      this.sent.add(type);
      emit(type);
    };
    if (payment.status === 'awaiting_approval') once('payment.approval_required');
    if (payment.status === 'pending' && payment.next_action) once('payment.action_required');
    if (payment.status === 'needs_review') once('payment.needs_review');
    if (isTerminal(payment.status) && !this.sent.has('payment.resolved')) {
      // The outcome is told once: by an operator's resolution, or as succeeded or failed.
      const resolved = payment.events.some((event) => event.type === 'resolved');
      if (resolved) once('payment.resolved');
      else if (!this.sent.has('payment.succeeded') && !this.sent.has('payment.failed'))
        once(`payment.${payment.status}`);
    }
    const contradicting = payment.events.filter((event) => event.type === 'callback_contradicting').length;
    for (; this.contradicting < contradicting; this.contradicting++) emit('payment.late_callback');
  }
}

async function reportToBatch(batchId: string, report: Signed<ItemSettled>): Promise<void> {
  try {
    // Even once the payment's workflow was asked to cancel: the batch's counts depend on this report.
    await CancellationScope.nonCancellable(() => getExternalWorkflowHandle(batchId).signal(itemSettledSignal, report));
  } catch {
    // The batch has closed (a resolution after it completed); the payment itself remains the record.
  }
}

function countStart(paymentId: string, type: PaymentType): void {
  productMetrics.count(WorkerMetrics.paymentsStarted, { payment_type: type });
  log.info('payment started', { paymentId, paymentType: type });
}

/** Counts a final status (succeeded, failed) and logs every status change. */
function countStatus(paymentId: string, type: PaymentType, status: PaymentStatus): void {
  if (isTerminal(status)) {
    productMetrics.count(WorkerMetrics.paymentsFinished, { payment_type: type, status });
  }
  log.info('payment status changed', { paymentId, paymentType: type, status });
}
