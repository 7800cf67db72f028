import { createHmac } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  isGrpcServiceError,
} from '@temporalio/client';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type {
  PaymentInput,
  PaymentResource,
  PaymentStatus,
  PaymentTiming,
  ProviderCallback,
  ResolveInput,
} from '../domain/payment';
import type { PaymentRequest, PaymentType } from '../domain/requests';
import {
  PAYMENT_WORKFLOW,
  SearchAttributes,
  callbackSignal,
  paymentQuery,
  paymentWorkflowId,
  resolveUpdate,
} from '../workflows/definitions';
import { PaymentState } from '../workflows/payment-state';
import type { paymentWorkflow } from '../workflows';
import { cardToken, detachCard } from '../vault/card-data';
import type { CardVault } from '../vault/card-vault';

/** A failure the HTTP layer turns into a status code without knowing Temporal. */
export class PaymentError extends Error {
  constructor(
    readonly kind: 'not_found' | 'conflict' | 'unavailable',
    message: string,
  ) {
    super(message);
  }
}

export interface PaymentsOptions {
  taskQueue: string;
  /** Secret that keys the request fingerprints kept to detect a reused reference with another body. */
  fingerprintSecret: string;
  timingFor(type: PaymentType): PaymentTiming;
  callbackUrlFor(paymentId: string): string;
  initiationWaitMs: number;
  queryTimeoutMs?: number;
  /** Holds card data outside Temporal until the initiation activity takes it. */
  cardVault: CardVault;
}

export interface PaymentSummary {
  id: string;
  type: string | null;
  reference: string | null;
  status: string | null;
  amount: number | null;
  created_at: string;
  closed_at: string | null;
}

export interface ListFilter {
  merchantId?: string;
  status?: PaymentStatus;
  type?: PaymentType;
  reference?: string;
  limit: number;
}

/** The payment operations of the merchant API and operator tools, in terms of Temporal workflows. */
export class Payments {
  constructor(
    private readonly client: Client,
    private readonly options: PaymentsOptions,
  ) {}

  /** Starts the payment's workflow once per reference; the same body again returns the existing payment. */
  async create(merchantId: string, request: PaymentRequest): Promise<{ created: boolean; payment: PaymentResource }> {
    const paymentId = paymentWorkflowId(merchantId, request.reference);
    const fingerprint = this.fingerprint(merchantId, request);
    const stored = await detachCard(request, this.options.cardVault).catch(() => {
      throw new PaymentError('unavailable', 'the card vault is unreachable right now');
    });
    const input: PaymentInput = {
      paymentId,
      merchantId,
      request: stored,
      callbackUrl: this.options.callbackUrlFor(paymentId),
      createdAt: new Date().toISOString(),
      timing: this.options.timingFor(request.type),
    };
    let created = true;
    try {
      await this.temporal(() =>
        this.client.workflow.start<typeof paymentWorkflow>(PAYMENT_WORKFLOW, {
          workflowId: paymentId,
          taskQueue: this.options.taskQueue,
          args: [input],
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          memo: { fingerprint },
          staticSummary: `${request.type.replace(/_/g, ' ')} ${request.amount} · ${request.reference}`,
          typedSearchAttributes: [
            { key: SearchAttributes.status, value: 'initiating' },
            { key: SearchAttributes.type, value: request.type },
            { key: SearchAttributes.reference, value: request.reference },
            { key: SearchAttributes.merchant, value: merchantId },
            { key: SearchAttributes.amount, value: request.amount },
          ],
        }),
      );
    } catch (err) {
      const token = cardToken(stored);
      // Unused card data goes now; should that fail, it expires on its own.
      if (token) await this.options.cardVault.discard(token).catch(() => undefined);
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      const existing = await this.temporal(() => this.client.workflow.getHandle(paymentId).describe());
      if (existing.memo?.fingerprint !== fingerprint) {
        throw new PaymentError('conflict', `reference ${request.reference} was already used with a different request`);
      }
      created = false;
    }
    return { created, payment: await this.awaitInitiation(paymentId, new PaymentState(input).resource) };
  }

  /** The payment resource, from the running workflow or the closed one's result. */
  async get(paymentId: string): Promise<PaymentResource> {
    const handle = this.client.workflow.getHandle<typeof paymentWorkflow>(paymentId);
    try {
      return await this.client.withDeadline(Date.now() + (this.options.queryTimeoutMs ?? 5000), () =>
        handle.query(paymentQuery),
      );
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new PaymentError('not_found', `no payment ${paymentId}`);
      const description = await this.temporal(() => handle.describe()).catch(() => undefined);
      if (description && description.status.name !== 'RUNNING') return await handle.result();
      throw new PaymentError('unavailable', 'the payment cannot be read right now (no worker answered)');
    }
  }

  /** Payments matching the filter, newest first, from Temporal's visibility store. */
  async list(filter: ListFilter): Promise<PaymentSummary[]> {
    const clauses = [`WorkflowType = '${PAYMENT_WORKFLOW}'`];
    const eq = (name: string, value: string | undefined) => {
      if (value !== undefined) clauses.push(`${name} = ${JSON.stringify(value)}`);
    };
    eq(SearchAttributes.merchant.name, filter.merchantId);
    eq(SearchAttributes.status.name, filter.status);
    eq(SearchAttributes.type.name, filter.type);
    eq(SearchAttributes.reference.name, filter.reference);
    const summaries: PaymentSummary[] = [];
    await this.temporal(async () => {
      for await (const info of this.client.workflow.list({ query: clauses.join(' AND '), pageSize: filter.limit })) {
        summaries.push(summarize(info));
        if (summaries.length >= filter.limit) break;
      }
    });
    return summaries;
  }

  /** An operator's decision on a payment in review; refused unless it is `needs_review`. */
  async resolve(paymentId: string, resolution: ResolveInput): Promise<PaymentResource> {
    const handle = this.client.workflow.getHandle<typeof paymentWorkflow>(paymentId);
    try {
      return await handle.executeUpdate(resolveUpdate, { args: [resolution] });
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        throw new PaymentError('conflict', err.cause?.message ?? 'the payment cannot be resolved');
      }
      if (err instanceof WorkflowNotFoundError) {
        await this.get(paymentId); // a closed payment is settled; a missing one is not found
        throw new PaymentError('conflict', 'the payment is already settled');
      }
      throw this.translate(err);
    }
  }

  /** Hands a provider callback to the payment's workflow; true when the workflow took it. */
  async deliverCallback(paymentId: string, callback: ProviderCallback): Promise<'accepted' | 'closed' | 'unknown'> {
    const handle = this.client.workflow.getHandle(paymentId);
    try {
      await this.temporal(() => handle.signal(callbackSignal, callback));
      return 'accepted';
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      const description = await this.temporal(() => handle.describe()).catch((e: unknown) => {
        if (e instanceof WorkflowNotFoundError) return undefined;
        throw e;
      });
      return description ? 'closed' : 'unknown';
    }
  }

  private async awaitInitiation(paymentId: string, fallback: PaymentResource): Promise<PaymentResource> {
    const deadline = Date.now() + this.options.initiationWaitMs;
    let latest = fallback;
    while (Date.now() < deadline) {
      try {
        latest = await this.client.withDeadline(Math.min(deadline, Date.now() + 2000), () =>
          this.client.workflow.getHandle<typeof paymentWorkflow>(paymentId).query(paymentQuery),
        );
        if (latest.status !== 'initiating') return latest;
      } catch {
        // not queryable yet (first workflow task still running, or no worker); keep the last known state
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return latest;
  }

  // Keyed, and without the CVV: PCI DSS lets nothing derived from it outlive authorization.
  private fingerprint(merchantId: string, request: PaymentRequest): string {
    const kept = request.type === 'card_payment' ? { ...request, card_cvv: undefined } : request;
    return createHmac('sha256', this.options.fingerprintSecret)
      .update(`request:${merchantId}:${canonicalJson(kept)}`)
      .digest('base64url');
  }

  private async temporal<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw this.translate(err);
    }
  }

  private translate(err: unknown): unknown {
    if (isGrpcServiceError(err) || (err instanceof Error && err.name === 'ServiceError')) {
      return new PaymentError('unavailable', 'Temporal is unreachable right now');
    }
    return err;
  }
}

function summarize(info: WorkflowExecutionInfo): PaymentSummary {
  const sa = info.typedSearchAttributes;
  return {
    id: info.workflowId,
    type: sa.get(SearchAttributes.type) ?? null,
    reference: sa.get(SearchAttributes.reference) ?? null,
    status: sa.get(SearchAttributes.status) ?? null,
    amount: sa.get(SearchAttributes.amount) ?? null,
    created_at: info.startTime.toISOString(),
    closed_at: info.closeTime?.toISOString() ?? null,
  };
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
