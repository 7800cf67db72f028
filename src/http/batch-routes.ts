import type { FastifyInstance } from 'fastify';
import type { BankDirectory } from '../banks/directory';
import type { payoutBatchSchema } from '../domain/batch-request';
import type { RequestRules } from '../domain/requests';
import type { Batches } from '../payments/payout-batches';
import { AppError } from '../payments/app-errors';
import type { Payments } from '../payments/payments';
import { isBatchItemOf, isMerchantBatch } from '../domain/ids';
import { ROUTES, batchActionParams, batchParams } from './api-spec';
import type { ApiKeys, Caller } from './auth';
import { assertKnownBanks } from './bank-check';
import { ApiError, validationError } from './errors';
import { cursorError, listPage } from './pagination';
import { route } from './route-spec';

export interface BatchRouteDeps {
  batches: Batches;
  payments: Payments;
  banks: BankDirectory;
  keys: ApiKeys;
  rules: RequestRules;
}

/** Room for 10,000 items of the longest allowed fields. */
const BATCH_BODY_LIMIT = 8 * 1024 * 1024;

/** Payout batches: merchants submit and watch them; merchants and operators pause, resume and cancel. */
export function registerBatchRoutes(
  app: FastifyInstance,
  { batches, payments, banks, keys, rules }: BatchRouteDeps,
): void {
  // One schema per merchant (its amount limit), built on its first batch.
  const schemas = new Map<string, ReturnType<typeof payoutBatchSchema>>();
  route(
    app,
    ROUTES.createPayoutBatch,
    async (request, reply) => {
      const caller = keys.authenticate(request);
      if (caller.role !== 'merchant') throw new ApiError(403, 'forbidden', 'batches are created with a merchant key');
      const schema = schemas.get(caller.merchantId) ?? ROUTES.createPayoutBatch.body.schema(rules, caller.merchantId);
      schemas.set(caller.merchantId, schema);
      const parsed = schema.safeParse(request.body);
      if (!parsed.success) throw validationError(parsed.error, 'the batch is invalid');
      await assertKnownBanks(
        banks,
        parsed.data.items.map((item, index) => ({ path: `items.${index}.bank_code`, code: item.bank_code })),
      );
      const { created, batch } = await batches.create(caller.merchantId, parsed.data);
      request.log.info({ batchId: batch.id, created, items: batch.total.count }, 'payout batch submitted');
      return reply.status(created ? 201 : 200).send(batch);
    },
    { bodyLimit: BATCH_BODY_LIMIT },
  );

  route(app, ROUTES.getPayoutBatch, async (request) => {
    const caller = keys.authenticate(request);
    const params = batchParams.safeParse(request.params);
    if (!params.success) throw new AppError('not_found', 'no such payout batch');
    assertVisible(caller, params.data.id);
    return batches.get(params.data.id);
  });

  route(app, ROUTES.listPayoutBatchItems, async (request) => {
    const caller = keys.authenticate(request);
    const params = batchParams.safeParse(request.params);
    if (!params.success) throw new AppError('not_found', 'no such payout batch');
    assertVisible(caller, params.data.id);
    const query = ROUTES.listPayoutBatchItems.query.safeParse(request.query);
    if (!query.success) throw validationError(query.error, 'the filter is invalid');
    const { starting_after: startingAfter, ...filter } = query.data;
    if (startingAfter !== undefined && !isBatchItemOf(params.data.id, startingAfter)) throw cursorError();
    return listPage(payments, { ...filter, batchId: params.data.id, startingAfter });
  });

  route(app, ROUTES.controlPayoutBatch, async (request) => {
    const caller = keys.authenticate(request);
    const params = batchActionParams.safeParse(request.params);
    if (!params.success) throw new AppError('not_found', 'no such payout batch or action');
    assertVisible(caller, params.data.id);
    const batch = await batches.control(params.data.id, params.data.action);
    request.log.info({ batchId: batch.id, action: params.data.action, role: caller.role }, 'payout batch control');
    return batch;
  });
}

function assertVisible(caller: Caller, batchId: string): void {
  if (caller.role === 'merchant' && !isMerchantBatch(caller.merchantId, batchId)) {
    throw new AppError('not_found', `no payout batch ${batchId}`);
  }
}
