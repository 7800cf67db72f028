import { ApplicationFailure } from '@temporalio/common';
import { FailureTypes } from '../domain/payment';
import type { Failure, ProviderAck, StatusCheck, StoredPaymentRequest } from '../domain/payment';
import type { PaymentType } from '../domain/requests';
import { ProviderError, providerReference, providerState } from '../provider';
import type { ProviderClient } from '../provider';
import { attachCard } from '../vault/card-data';
import type { CardVault } from '../vault/card-vault';

export interface PaymentActivityDeps {
  provider: ProviderClient;
  /** Where card payments' card data waits, outside Temporal, for the initiation. */
  cardVault: CardVault;
}

/** What the workflow hands the initiation: card data only as a vault token. */
export interface InitiationInput {
  paymentId: string;
  request: StoredPaymentRequest;
  callbackUrl: string;
}

export interface StatusCheckInput {
  paymentId: string;
  type: PaymentType;
  transactionId: string | null;
}

/** Builds the payment activities around their dependencies, so tests hand in fakes. */
export function createPaymentActivities({ provider, cardVault }: PaymentActivityDeps) {
  return {
    /**
     * Sends the payment upstream once; a failure carries what is known of its fate (never retried by Temporal).
     * A card payment's data leaves the vault here, for good: the CVV is never kept past this first use.
     */
    async initiatePayment(input: InitiationInput): Promise<ProviderAck> {
      const request = await attachCard(input.request, cardVault).catch(() => {
        throw cardDataUnavailable('the card vault could not be read; nothing was sent to the provider');
      });
      if (!request) {
        throw cardDataUnavailable(
          'the card data expired or was already used before initiation; nothing was sent to the provider',
        );
      }
      let ack: ProviderAck;
      try {
        ack = await provider.initiate({ ...input, request });
      } catch (err) {
        throw initiationFailure(err);
      }
      // The spec says every acknowledgement is pending; one that already says failed is a definite rejection.
      if (providerState(ack.statusCode) === 'failed') {
        const failure: Failure = { code: ack.statusCode, message: ack.message || 'refused by the provider' };
        throw ApplicationFailure.create({
          type: FailureTypes.rejected,
          message: failure.message,
          nonRetryable: true,
          details: [failure],
        });
      }
      return ack;
    },

    /** Asks the provider where a transaction stands; null when no status query fits what we know of it. */
    async checkPaymentStatus(input: StatusCheckInput): Promise<StatusCheck | null> {
      const reference = providerReference(input.type, input.paymentId) ?? null;
      try {
        return await provider.checkStatus({ transactionId: input.transactionId, reference });
      } catch (err) {
        const message = err instanceof Error ? err.message : 'status query failed';
        const definite = err instanceof ProviderError && err.classification === 'definite_rejection';
        throw ApplicationFailure.create({ type: FailureTypes.transient, message, nonRetryable: definite });
      }
    },
  };
}

export type PaymentActivities = ReturnType<typeof createPaymentActivities>;

/** A definite failure: the card data cannot be had, so nothing was (or ever will be) sent upstream. */
function cardDataUnavailable(message: string): ApplicationFailure {
  const failure: Failure = { code: 'card_data_unavailable', message };
  return ApplicationFailure.create({ type: FailureTypes.rejected, message, nonRetryable: true, details: [failure] });
}

function initiationFailure(err: unknown): ApplicationFailure {
  if (!(err instanceof ProviderError)) {
    return ApplicationFailure.create({
      type: FailureTypes.unknown,
      message: `initiation failed unexpectedly: ${err instanceof Error ? err.message : String(err)}`,
      nonRetryable: true,
    });
  }
  const failure: Failure = {
    code: err.providerCode ?? (err.httpStatus ? `http_${err.httpStatus}` : 'provider_error'),
    message: err.providerMessage ?? err.message,
  };
  const type = {
    definite_rejection: FailureTypes.rejected,
    safe_to_retry: FailureTypes.unreachable,
    ambiguous: FailureTypes.unknown,
  }[err.classification];
  return ApplicationFailure.create({ type, message: err.message, nonRetryable: true, details: [failure] });
}
