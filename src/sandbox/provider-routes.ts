import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { lastFour } from '../domain/personal-data';
import { BANKS } from './sandbox-banks';
import type { SandboxContext } from './sandbox-context';
import { errorBody, TRANSACTION_NOT_FOUND, validationError } from './sandbox-errors';
import {
  BANK_PENDING_MESSAGE,
  bankCreditResponse,
  cardResponse,
  mobileMoneyResponse,
  PENDING_MESSAGE,
} from './responses';
import { rejectionFor, scenarioFor, type TransactionKind } from './scenarios';
import { bankCreditSchema, cardNetwork, cardSchema, fieldErrors, mobileMoneySchema } from './schemas';
import type { SandboxTransaction } from './store';

export const MOBILE_MONEY_PATH = '/api/pay';
export const CARD_PATH = '/api/v2/pay';
export const BANK_CREDIT_PATH = '/api/custom/transactions/partner/credits/banks';

const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';

interface Initiation {
  kind: TransactionKind;
  /** The phone or account number whose last two digits pick the scenario. */
  scenarioNumber: string;
  /** The caller's reference; the sandbox makes one up when absent. */
  reference?: string;
  amount: number;
  callbackUrl: string | undefined;
  returnUrl?: string;
  cardLast4?: string;
  respond: (transaction: SandboxTransaction) => unknown;
}

/** A route hook answering 415 unless the body has the given media type. */
function requireMediaType(expected: string) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const mediaType = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (mediaType === expected) return undefined;
    return reply.code(415).send(errorBody('E_UNSUPPORTED_MEDIA_TYPE', `The request body must be ${expected}.`));
  };
}

/** Parses a body or answers 400 with every bad field; undefined when it answered. */
function parseBody<T extends z.ZodType>(schema: T, body: unknown, reply: FastifyReply): z.infer<T> | undefined {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  void reply.code(400).send(validationError(fieldErrors(result.error)));
  return undefined;
}

function makeReference(prefix: string, id: number): string {
  return `SBX-${prefix}-${id}-${randomBytes(3).toString('hex')}`;
}

async function initiate(
  context: SandboxContext,
  request: FastifyRequest,
  reply: FastifyReply,
  initiation: Initiation,
): Promise<unknown> {
  const scenario = scenarioFor(initiation.scenarioNumber);
  if (scenario === 'server_error') {
    return reply.code(500).send(errorBody('E_INTERNAL', 'Internal server error'));
  }
  if (scenario === 'rejected') {
    const rejection = rejectionFor(initiation.kind);
    return reply.code(400).send(errorBody(rejection.code, rejection.message));
  }
  const id = context.store.allocateId();
  const now = new Date().toISOString();
  const transaction: SandboxTransaction = {
    transaction_id: id,
    type: initiation.kind,
    reference: initiation.reference ?? makeReference(initiation.kind === 'card' ? 'CARD' : 'MM', id),
    amount: initiation.amount,
    scenario,
    status: '2',
    message: initiation.kind === 'bank_credit' ? BANK_PENDING_MESSAGE : PENDING_MESSAGE,
    callback_url: initiation.callbackUrl ?? null,
    return_url: initiation.returnUrl ?? null,
    three_ds: initiation.kind === 'card' ? 'pending' : null,
    card_last4: initiation.cardLast4 ?? null,
    created_at: now,
    updated_at: now,
    callbacks: [],
  };
  context.store.add(transaction);
  const entry = context.requests.entryFor(request);
  if (entry) entry.transaction_id = id;
  const body = initiation.respond(transaction);
  await context.lifecycle.begin(transaction);
  if (scenario === 'slow_response') await context.timers.sleep(context.slowResponseMs);
  return body;
}

function statusBody(transaction: SandboxTransaction): unknown {
  const { transaction_id, status, message, amount } = transaction;
  return { transaction_id, status, message, amount };
}

/** The spec's three initiation endpoints plus the sandbox's status query and bank list, all under /api. */
export function registerProviderRoutes(app: FastifyInstance, context: SandboxContext): void {
  /** An initiation endpoint: the body checked against its schema, then one transaction started from it. */
  const initiation = <S extends z.ZodType>(
    path: string,
    mediaType: string,
    schema: S,
    toInitiation: (input: z.infer<S>) => Initiation,
  ) =>
    app.post(path, { onRequest: requireMediaType(mediaType) }, async (request, reply) => {
      const input = parseBody(schema, request.body, reply);
      if (!input) return reply;
      return initiate(context, request, reply, toInitiation(input));
    });

  initiation(MOBILE_MONEY_PATH, FORM, mobileMoneySchema, (input) => ({
    kind: 'mobile_money',
    scenarioNumber: input.phone_number,
    amount: input.amount,
    callbackUrl: input.callback_url,
    respond: (transaction) => mobileMoneyResponse(transaction, input),
  }));

  initiation(CARD_PATH, FORM, cardSchema, (input) => ({
    kind: 'card',
    scenarioNumber: input.phone_number,
    amount: input.amount,
    callbackUrl: input.callback_url,
    returnUrl: input.return_url,
    cardLast4: lastFour(input.card_number),
    respond: (transaction) =>
      cardResponse(
        transaction,
        input,
        context.store.allocateId(),
        cardNetwork(input.card_number) ?? 'CARD',
        `${context.publicUrl()}/sandbox/3ds/${transaction.transaction_id}`,
      ),
  }));

  initiation(BANK_CREDIT_PATH, JSON_TYPE, bankCreditSchema, (input) => ({
    kind: 'bank_credit',
    scenarioNumber: input.accountNumber,
    reference: input.reference,
    amount: input.amount,
    callbackUrl: input.callback_url,
    respond: (transaction) => bankCreditResponse(transaction),
  }));

  app.get<{ Params: { id: string } }>('/api/transactions/:id', async (request, reply) => {
    const transaction = /^\d+$/.test(request.params.id) ? context.store.get(Number(request.params.id)) : undefined;
    if (!transaction) return reply.code(404).send(TRANSACTION_NOT_FOUND);
    return statusBody(transaction);
  });

  app.get<{ Querystring: Record<string, unknown> }>('/api/transactions', async (request, reply) => {
    const reference = request.query.reference;
    if (typeof reference !== 'string' || reference === '') {
      return reply.code(400).send(validationError({ reference: ['The reference query parameter is required.'] }));
    }
    const transaction = context.store.findByReference(reference);
    if (!transaction) return reply.code(404).send(TRANSACTION_NOT_FOUND);
    return statusBody(transaction);
  });

  app.get('/api/banks', (_request, reply) => reply.send(BANKS));
}
