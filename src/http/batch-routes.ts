import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { BankDirectory } from '../banks/directory';
import { BATCH_ACTIONS } from '../domain/batch';
import { payoutBatchSchema } from '../domain/batch-request';
import type { RequestRules } from '../domain/requests';
import type { Batches } from '../payments/batches';
import { AppError } from '../payments/errors';
import { isMerchantBatch } from '../domain/ids';
import type { ApiKeys, Caller } from './auth';
import { assertKnownBanks } from './bank-check';
import { ApiError, validationError } from './errors';

export interface BatchRouteDeps {
  batches: Batches;
  banks: BankDirectory;
  keys: ApiKeys;
  rules: RequestRules;
}

/** Room for 10,000 items of the longest allowed fields. */
const BATCH_BODY_LIMIT = 8 * 1024 * 1024;

const batchId = z.string().regex(/^batch-[^~]{1,200}$/);
const idParams = z.object({ id: batchId });
const actionParams = z.object({ id: batchId, action: z.enum(BATCH_ACTIONS) });

/** Payout batches: merchants submit and watch them; merchants and operators pause, resume and cancel. */
export function registerBatchRoutes(app: FastifyInstance, { batches, banks, keys, rules }: BatchRouteDeps): void {
  // One schema per merchant (its amount limit), built on its first batch.
  const schemas = new Map<string, ReturnType<typeof payoutBatchSchema>>();
  app.post('/v1/payout-batches', { bodyLimit: BATCH_BODY_LIMIT }, async (request, reply) => {
    const caller = keys.authenticate(request);
    if (caller.role !== 'merchant') throw new ApiError(403, 'forbidden', 'batches are created with a merchant key');
    const schema = schemas.get(caller.merchantId) ?? payoutBatchSchema(rules.maxAmount(caller.merchantId));
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
  });

  app.get('/v1/payout-batches/:id', async (request) => {
    const caller = keys.authenticate(request);
    const params = idParams.safeParse(request.params);
    if (!params.success) throw new AppError('not_found', 'no such payout batch');
    assertVisible(caller, params.data.id);
    return batches.get(params.data.id);
  });

  app.post('/v1/payout-batches/:id/:action', async (request) => {
    const caller = keys.authenticate(request);
    const params = actionParams.safeParse(request.params);
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
