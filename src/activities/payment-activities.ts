import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { CallbackTokens } from '../crypto/callback-tokens';
import type { Keyring } from '../crypto/keyring';
import { signatureProblem } from '../crypto/signing';
import { FailureTypes, VAULT_WAIT_MS } from '../domain/payment-model';
import { isProviderWideStatus } from '../domain/halt-watch';
import type {
  Failure,
  InitiationVerdict,
  PaymentMessage,
  ProviderAck,
  ProviderCallback,
  ProviderVerdict,
  StatusCheck,
  StoredPaymentRequest,
} from '../domain/payment-model';
import { messageRefusal } from '../domain/signed';
import type { ItemSettled } from '../domain/batch-model';
import { statusConfirms } from '../domain/payment-events';
import type { Signed } from '../domain/signed';
import type { PaymentRequest, PaymentType } from '../domain/requests';
import { ProviderError } from '../provider/provider-errors';
import { providerState } from '../provider/codes';
import { providerReference } from '../provider/wire';
import type { ProviderClient } from '../provider/provider-client';
import { isUnreachable } from '../records/database';
import type { Database } from '../records/database';
import { bindTransaction, claimInitiation, keepFirstAnswer, keepInitiationAnswer } from '../records/record-writes';
import type { InitiationClaim, PaymentRecord } from '../records/record-writes';
import { writePaymentRecord } from './record-activities';
import { signedResult } from './signed-results';
import { attachCard } from '../vault/card-vault';
import type { CardVault } from '../vault/card-vault';

/** Well within the heartbeat time-out of initiations and status checks (the SDK sends at most one per 80 % of it anyway). */
const HEARTBEAT_INTERVAL_MS = 1000;
/** How often an initiation asks an unreachable vault or record database again. */
const RETRY_UNREACHABLE_MS = 500;

export interface PaymentActivityDeps {
  provider: ProviderClient;
  /** Where card payments' card data waits, outside Temporal, for the initiation. */
  cardVault: CardVault;
  /** The system of record, where each initiation is claimed before it is sent. */
  database: Database;
  /** Checks the server's signature on the payment's start message (SIGNING_KEYS) before anything is sent. */
  signingKeys: Keyring;
  /** Derives the callback URL handed to the provider; its token is never stored in Temporal. */
  callbackTokens: CallbackTokens;
  /**
   * How long an initiation waits for an unreachable vault or record database before it fails with nothing sent;
   * VAULT_WAIT_MS unless a test says otherwise.
   */
  vaultWaitMs?: number;
}

export interface StatusCheckInput {
  paymentId: string;
  /** The id the workflow binds the answer to when it asks by local activity (signedResult). */
  resultId?: string;
  type: PaymentType;
  transactionId: string | null;
  /** The transaction this payment already holds (bound when it was acknowledged): an answer about it binds nothing. */
  heldTransactionId?: string | null;
}

/** A callback's confirmation: the callback, and the record of the settlement it makes if the status query agrees. */
export interface ConfirmationInput extends StatusCheckInput {
  callback: ProviderCallback;
  settlement?: PaymentRecord;
}

/** The status query's answer about a callback, and whether the settlement's record was written with it. */
export interface CallbackConfirmation {
  check: StatusCheck | null;
  recorded: boolean;
  /** A batch item's report of the settlement written, signed for its batch. */
  report: Signed<ItemSettled> | null;
}

/** Builds the payment activities around their dependencies, so tests hand in fakes. */
export function createPaymentActivities({
  provider,
  cardVault,
  database,
  signingKeys,
  callbackTokens,
  vaultWaitMs = VAULT_WAIT_MS,
}: PaymentActivityDeps) {
  /** The initiation itself: a verdict it throws is signed by initiatePayment. */
  async function initiate(order: PaymentMessage, resultId: string | undefined): Promise<Signed<ProviderAck>> {
    const { paymentId, request: stored } = trustedOrder(order, signingKeys);
    const context = Context.current();
    const heartbeats = heartbeating(context);
    let answer: InitiationAnswer;
    // The payment the acknowledgement's transaction is bound to, when its answer was kept with the binding.
    let bound: string | null | undefined;
    try {
      const giveUpAt = Date.now() + vaultWaitMs;
      // Always there: trustedOrder refused any message outside its own workflow. A local activity runs again when
      // its workflow task is tried again (a worker died mid-call, Temporal lost the completion): each execution
      // claims as itself, so a second one finds the first's claim and never sends; it answers what the first kept.
      const runId = context.info.workflowExecution?.runId ?? '';
      const claim = await claimTheInitiation(
        () => claimInitiation<InitiationAnswer>(database, paymentId, { runId, execution: randomUUID() }),
        giveUpAt,
      );
      answer = claim ?? (await sendOnce(paymentId, stored, giveUpAt));
      if (!claim) {
        const transactionId = transactionToBind(answer);
        bound = await keepTheAnswer(() => keepInitiationAnswer(database, paymentId, runId, answer, transactionId));
      }
    } finally {
      clearInterval(heartbeats);
    }
    if ('refusal' in answer) throw verdictFailure(answer.refusal.verdict, answer.refusal, answer.refusal.reason);
    const { ack } = answer;
    // The spec says every acknowledgement is pending; one that already says failed is a definite rejection.
    if (providerState(ack.statusCode) === 'failed') {
      throw verdictFailure('rejected', { code: ack.statusCode, message: ack.message || 'refused by the provider' });
    }
    if (ack.transactionId !== null && bound !== paymentId) {
      await bindOrRefuse(database, ack.transactionId, paymentId, 'unknown');
    }
    return signedResult(signingKeys, 'initiation-result', ack, resultId);
  }

  /** Takes the card data out of the vault and sends the initiation: what the provider answered, or why it did not. */
  async function sendOnce(
    paymentId: string,
    stored: StoredPaymentRequest,
    giveUpAt: number,
  ): Promise<InitiationAnswer> {
    let request: PaymentRequest | null;
    try {
      request = await attachCard(stored, patientVault(cardVault, giveUpAt));
    } catch {
      return cardDataUnavailable('the card vault could not be read; nothing was sent to the provider');
    }
    if (!request) {
      return cardDataUnavailable(
        'the card data expired or was already used before initiation; nothing was sent to the provider',
      );
    }
    return provider.initiate({ paymentId, request, callbackUrl: callbackTokens.urlFor(paymentId) }).then(
      (ack) => ({ ack }),
      (err: unknown) => ({ refusal: initiationRefusal(err) }),
    );
  }

  /** The status query's answer, its transaction bound to the payment, as the run first had it when final. */
  async function statusAnswer(input: StatusCheckInput): Promise<StatusCheck | null> {
    const reference = providerReference(input.type, input.paymentId) ?? null;
    const heartbeats = heartbeating(Context.current());
    let check: StatusCheck | null;
    try {
      check = await provider.checkStatus({ transactionId: input.transactionId, reference });
    } catch (err) {
      // Only a rejected query is not asked again: the workflow's retry policy retries the others.
      const message = err instanceof Error ? err.message : 'status query failed';
      const verdict = err instanceof ProviderError ? err.verdict : 'unknown';
      throw ApplicationFailure.create({ type: FailureTypes[verdict], message, nonRetryable: verdict === 'rejected' });
    } finally {
      clearInterval(heartbeats);
    }
    // Only a transaction the payment does not hold yet is bound, so that a settling answer about its own needs no
    // PostgreSQL (running payments keep moving while it is down).
    if (check?.transactionId && check.transactionId !== input.heldTransactionId) {
      await bindOrRefuse(database, check.transactionId, input.paymentId, 'rejected');
    }
    return firstFinalAnswer(database, input, check);
  }

  /** Writes a settlement's record; one that fails is left to the workflow's record writer. */
  async function recordSettlement(settlement: PaymentRecord): Promise<Omit<CallbackConfirmation, 'check'>> {
    try {
      return { recorded: true, report: await writePaymentRecord(database, signingKeys, settlement) };
    } catch (err) {
      Context.current().log.warn('the settlement is left to the record writer', {
        error: err instanceof Error ? err.message : String(err),
      });
      return { recorded: false, report: null };
    }
  }

  return {
    /**
     * Sends the payment upstream once; a failure carries what is known of its fate (never retried by Temporal).
     * Only a start message the server signed for this very workflow moves money. A card payment's data leaves the
     * vault here, for good: the CVV is never kept past this first use.
     */
    async initiatePayment(order: PaymentMessage, resultId?: string): Promise<Signed<ProviderAck>> {
      try {
        return await initiate(order, resultId);
      } catch (err) {
        throw signedVerdict(signingKeys, err, resultId);
      }
    },

    /** Asks the provider where a transaction stands; null when no status query fits what we know of it. */
    async checkPaymentStatus(input: StatusCheckInput): Promise<Signed<StatusCheck | null>> {
      return signedResult(signingKeys, 'status-result', await statusAnswer(input), input.resultId);
    },

    /**
     * Confirms a callback with the status query (a local activity) and, when the answer confirms it, writes the record
     * of the settlement its workflow worked out for that case: the callback's workflow task then needs no second local
     * activity for the record. A write that fails is left to the workflow's record writer, which tries until it is made.
     */
    async confirmCallback(input: ConfirmationInput): Promise<Signed<CallbackConfirmation>> {
      const check = await statusAnswer(input);
      const { callback, settlement } = input;
      const confirmed =
        settlement !== undefined &&
        check !== null &&
        statusConfirms(callback, check, {
          transactionId: input.heldTransactionId ?? null,
          amount: settlement.resource.amount,
        });
      const made = confirmed ? await recordSettlement(settlement) : { recorded: false, report: null };
      return signedResult(signingKeys, 'confirmation-result', { check, ...made }, input.resultId);
    },
  };
}

/**
 * A callback's confirmation runs again when its workflow task's code runs again (the task tried again, or completed
 * as a heartbeat while its local activities took long), and the provider may have changed its mind in between
 * (scenario 77's reversal): the run's first final answer about the transaction stands, so the payment settles as it
 * did the first time, with the same record and notifications. An answer that settles nothing is not kept: the next callback asks
 * afresh. With PostgreSQL unreachable the answer is the fresh one (the record write waits for it anyway).
 */
async function firstFinalAnswer(
  database: Database,
  input: StatusCheckInput,
  check: StatusCheck | null,
): Promise<StatusCheck | null> {
  const { isLocal, workflowExecution } = Context.current().info;
  const final = check?.state === 'succeeded' || check?.state === 'failed';
  if (!isLocal || !final || workflowExecution === undefined) return check;
  const key = { paymentId: input.paymentId, runId: workflowExecution.runId, transactionId: input.transactionId };
  try {
    return await keepFirstAnswer(database, key, check);
  } catch (err) {
    if (isUnreachable(err)) return check;
    throw err;
  }
}

/**
 * Heartbeats that tell Temporal this worker is alive, so that a worker dying mid-call is known in seconds; a local
 * activity sends none (its workflow task's time-out tells the same).
 */
function heartbeating(context: Context): NodeJS.Timeout | undefined {
  return context.info.isLocal ? undefined : setInterval(() => context.heartbeat(), HEARTBEAT_INTERVAL_MS);
}

/**
 * Binds the provider's transaction to this payment in the system of record: one transaction settles at most one
 * payment. Bound to another payment already, the answer is refused (never settles this one; `verdict` says what the
 * workflow makes of it: an initiation's outcome is unknown, a status answer is no answer).
 */
async function bindOrRefuse(
  database: Database,
  transactionId: string,
  paymentId: string,
  verdict: ProviderVerdict,
): Promise<void> {
  const bound = await patiently(() => bindTransaction(database, transactionId, paymentId), Date.now() + VAULT_WAIT_MS);
  if (bound === paymentId) return;
  throw verdictFailure(verdict, {
    message: `transaction ${transactionId} is already bound to payment ${bound}: refused, it settles only that one`,
  });
}

export type PaymentActivities = ReturnType<typeof createPaymentActivities>;

/** The signed start message's payment, or a non-retryable refusal: nothing is sent for anything else. */
function trustedOrder(order: PaymentMessage, keys: Keyring): { paymentId: string; request: StoredPaymentRequest } {
  const { workflowExecution, workflowNamespace, taskQueue } = Context.current().info;
  const workflowId = workflowExecution?.workflowId ?? '';
  const kind = order.kind === 'batch-item' ? 'batch-item' : 'payment';
  // No expiry here: the workflow checked it when it started, and an initiation may wait for a worker a while.
  const refusal =
    signatureProblem(keys, order) ??
    messageRefusal(order, kind, {
      workflowId,
      namespace: workflowNamespace ?? '',
      taskQueue,
    });
  const body = refusal ? undefined : order.body;
  if (body?.paymentId === workflowId) return body;
  const failure: Failure = {
    code: 'untrusted_input',
    message: `the payment's start message was refused (${refusal ?? 'it names another payment'}); nothing was sent to the provider`,
  };
  throw ApplicationFailure.create({
    type: FailureTypes.untrusted,
    message: failure.message,
    nonRetryable: true,
    details: [failure],
  });
}

/**
 * `command`, tried again while what it needs is unreachable (a Redis or PostgreSQL restart) until `giveUpAt`: before
 * the provider call nothing has been sent, so waiting is safe.
 */
async function patiently<T>(command: () => Promise<T>, giveUpAt: number): Promise<T> {
  for (;;) {
    try {
      return await command();
    } catch (err) {
      if (Date.now() + RETRY_UNREACHABLE_MS >= giveUpAt) throw err;
      await Context.current().sleep(RETRY_UNREACHABLE_MS);
    }
  }
}

/** The vault, its reads tried again while it is unreachable until `giveUpAt`. */
function patientVault(vault: CardVault, giveUpAt: number): CardVault {
  return { ...vault, take: (token) => patiently(() => vault.take(token), giveUpAt) };
}

/** Why an initiation has no acknowledgement: its verdict, the payment's failure (when there is one to show), the reason. */
interface Refusal {
  verdict: ProviderVerdict;
  code?: string;
  message: string;
  reason?: string;
}

/** What one execution of an initiation learnt: kept, so that another execution of its run answers the same. */
type InitiationAnswer = { ack: ProviderAck } | { refusal: Refusal };

/**
 * Claims the payment's one initiation in the system of record, for this execution of this run: undefined when this
 * execution holds it, so it sends. Another's claim (a Reset, a terminate-and-restart, a workflow task tried again
 * after a worker died or Temporal lost its completion) means it may have been sent: not sent again, the answer is the
 * one an earlier execution of the same run kept, else the outcome is unknown and reconciliation settles it. A claim
 * whose answer was lost is found on the next try as this execution's own. No claim at all: nothing was sent.
 */
async function claimTheInitiation(
  claim: () => Promise<InitiationClaim<InitiationAnswer>>,
  giveUpAt: number,
): Promise<InitiationAnswer | undefined> {
  let claimed: InitiationClaim<InitiationAnswer>;
  try {
    claimed = await patiently(claim, giveUpAt);
  } catch {
    throw verdictFailure('rejected', {
      code: 'initiation_unrecorded',
      message:
        'the initiation could not be recorded (the record database is unreachable); nothing was sent to the provider',
    });
  }
  if (claimed.held) return undefined;
  if (claimed.earlierAnswer) return claimed.earlierAnswer;
  throw verdictFailure('unknown', {
    message:
      'an earlier run or try of this initiation (a Reset, a worker that died mid-call) already claimed it: not sent again',
  });
}

/**
 * Keeps the answer for a later execution of the run, tried for a moment: without it that execution's outcome is only
 * unknown (reconciled), never a second request, so the payment does not wait longer for it.
 */
async function keepTheAnswer<T>(keep: () => Promise<T>): Promise<T | undefined> {
  return await patiently(keep, Date.now() + RETRY_UNREACHABLE_MS * 2).catch((err: unknown) => {
    Context.current().log.warn('initiation answer not kept: a second execution of this run would reconcile', {
      error: err instanceof Error ? err.message : String(err),
    });
    return undefined;
  });
}

/** The transaction an acknowledgement binds to its payment: none for a refusal, or an acknowledgement that failed. */
function transactionToBind(answer: InitiationAnswer): string | null {
  if ('refusal' in answer || providerState(answer.ack.statusCode) === 'failed') return null;
  return answer.ack.transactionId;
}

/** A definite failure: the card data cannot be had, so nothing was (or ever will be) sent upstream. */
function cardDataUnavailable(message: string): InitiationAnswer {
  return { refusal: { verdict: 'rejected', code: 'card_data_unavailable', message } };
}

function initiationRefusal(err: unknown): Refusal {
  if (!(err instanceof ProviderError)) {
    return {
      verdict: 'unknown',
      message: `initiation failed unexpectedly: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  return {
    verdict: err.verdict,
    code: failureCode(err),
    message: err.providerMessage ?? err.message,
    reason: err.message,
  };
}

/** Verdicts a workflow acts on without asking the provider: each ends the payment `failed`. */
const SETTLING_VERDICTS = new Map<string, InitiationVerdict['verdict']>([
  [FailureTypes.rejected, 'rejected'],
  [FailureTypes.not_sent, 'not_sent'],
  [FailureTypes.untrusted, 'untrusted'],
]);

/**
 * The initiation's failure with its verdict signed for this very activity (details: a Signed<InitiationVerdict>), so
 * that a forged `rejected` or `not_sent` answer to the task fails no payment; other failures pass as they are (the
 * workflow reads them as an unknown outcome, which only the provider's answer settles).
 */
function signedVerdict(keys: Keyring, err: unknown, resultId: string | undefined): unknown {
  const verdict = err instanceof ApplicationFailure && err.type ? SETTLING_VERDICTS.get(err.type) : undefined;
  if (!verdict || !(err instanceof ApplicationFailure)) return err;
  const failure = (err.details?.[0] as Failure | undefined) ?? null;
  return ApplicationFailure.create({
    type: err.type ?? undefined,
    message: err.message,
    nonRetryable: true,
    details: [signedResult(keys, 'initiation-verdict', { verdict, failure }, resultId)],
  });
}

/**
 * A provider error's failure code: a provider-wide status (authentication, 5xx) as `http_NNN` whatever code its body
 * has, so that the code alone tells a batch it was not about the item (domain/halt-watch.ts `failureKind`).
 */
function failureCode(err: ProviderError): string {
  const { httpStatus, providerCode } = err;
  if (httpStatus !== undefined && isProviderWideStatus(httpStatus)) return `http_${httpStatus}`;
  return providerCode ?? (httpStatus ? `http_${httpStatus}` : 'provider_error');
}

/**
 * The non-retryable ApplicationFailure that carries an initiation's verdict to the workflow; its details hold the
 * payment's failure (code and reason) when there is one to show.
 */
function verdictFailure(
  verdict: ProviderVerdict,
  failure: { code?: string; message: string },
  message = failure.message,
): ApplicationFailure {
  const details = failure.code === undefined ? undefined : [{ code: failure.code, message: failure.message }];
  return ApplicationFailure.create({ type: FailureTypes[verdict], message, nonRetryable: true, details });
}
