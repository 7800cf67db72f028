import type { FastifyInstance } from 'fastify';
import type { BankDirectory } from '../banks/directory';
import type { paymentRequestSchema } from '../domain/requests';
import type { RequestRules } from '../domain/requests';
import { AppError } from '../payments/app-errors';
import { isMerchantPayment } from '../domain/ids';
import type { Payments } from '../payments/payments';
import type { ApiKeys, Caller } from './auth';
import { assertKnownBanks } from './bank-check';
import { ROUTES, paymentParams } from './api-spec';
import { ApiError, validationError } from './errors';
import { cursorError, listPage } from './pagination';
import { route } from './route-spec';

export interface PaymentRouteDeps {
  payments: Payments;
  banks: BankDirectory;
  keys: ApiKeys;
  rules: RequestRules;
}

/** The payment id of a route; one that cannot be an id is simply not found. */
function paymentIdOf(params: unknown): string {
  const parsed = paymentParams.safeParse(params);
  if (!parsed.success) throw new ApiError(404, 'not_found', 'no such payment');
  return parsed.data.id;
}

/** The merchant API: create, read and list payments; operators resolve the ones in review. */
export function registerPaymentRoutes(app: FastifyInstance, { payments, banks, keys, rules }: PaymentRouteDeps): void {
  // One schema per merchant (its amount limit), built on its first request.
  const schemas = new Map<string, ReturnType<typeof paymentRequestSchema>>();
  const schemaFor = (merchantId: string) => {
    const schema = schemas.get(merchantId) ?? ROUTES.createPayment.body.schema(rules, merchantId);
    schemas.set(merchantId, schema);
    return schema;
  };

  route(app, ROUTES.createPayment, async (request, reply) => {
    const merchantId = asMerchant(keys.authenticate(request));
    const parsed = schemaFor(merchantId).safeParse(request.body);
    if (!parsed.success) throw validationError(parsed.error);
    if (parsed.data.type === 'bank_credit') {
      await assertKnownBanks(banks, [{ path: 'bank_code', code: parsed.data.bank_code }]);
    }
    const { created, payment } = await payments.create(merchantId, parsed.data);
    // From here on the request concerns one payment: its later lines ("request completed") carry its id too.
    reply.log = request.log = request.log.child({ paymentId: payment.id, workflowId: payment.id });
    request.log.info({ created, status: payment.status }, 'payment requested');
    return reply.status(created ? 201 : 200).send(payment);
  });

  route(app, ROUTES.listPayments, async (request) => {
    const caller = keys.authenticate(request);
    const query = ROUTES.listPayments.query.safeParse(request.query);
    if (!query.success) throw validationError(query.error, 'the filter is invalid');
    const merchantId = caller.role === 'merchant' ? caller.merchantId : undefined;
    const { starting_after: startingAfter, ...filter } = query.data;
    if (startingAfter !== undefined) assertVisible(caller, startingAfter, 'starting_after');
    return listPage(payments, { ...filter, merchantId, startingAfter });
  });

  route(app, ROUTES.getPayment, async (request) => {
    const caller = keys.authenticate(request);
    const id = paymentIdOf(request.params);
    assertVisible(caller, id);
    return payments.get(id);
  });

  route(app, ROUTES.resolvePayment, async (request) => {
    const operator = keys.authenticateOperator(request, 'resolve payments');
    const id = paymentIdOf(request.params);
    const body = ROUTES.resolvePayment.body.schema().safeParse(request.body);
    if (!body.success) throw validationError(body.error);
    // The payment's `resolved` event records who (the key's person) and why (the note); the log line only who.
    const payment = await payments.resolve(id, { ...body.data, operator: operator.name });
    request.log.info({ outcome: body.data.outcome, operator: operator.name }, 'payment resolved by an operator');
    return payment;
  });
}

function asMerchant(caller: Caller): string {
  if (caller.role !== 'merchant') throw new ApiError(403, 'forbidden', 'payments are created with a merchant key');
  return caller.merchantId;
}

/** A merchant's own payments only: another's is not found (or, as a list cursor, a bad `starting_after`). */
function assertVisible(caller: Caller, paymentId: string, cursorField?: string): void {
  if (caller.role === 'merchant' && !isMerchantPayment(caller.merchantId, paymentId)) {
    if (cursorField) throw cursorError(cursorField);
    throw new AppError('not_found', `no payment ${paymentId}`);
  }
}
