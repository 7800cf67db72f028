import { z } from 'zod';
import {
  DEFAULT_OVERLAP_MS,
  createMerchantRequest,
  issuedKeySchema,
  merchantIdSchema,
  merchantListSchema,
  revokedKeysSchema,
  rollRequest,
} from '../domain/merchant-resources';
import type { MerchantAccounts } from '../payments/merchant-accounts';
import { jsonBodyErrors, withKey } from './route-parts';
import { route } from './route-spec';

// Operators add merchants and roll or revoke their API keys; a key is answered once, then stored only hashed.

export interface MerchantRouteDeps {
  merchants: MerchantAccounts;
}

const operatorOnly = 'only an operator key manages merchants';
const merchantParams = z.strictObject({ id: merchantIdSchema });

const keyExample = { id: '3f9c2a7b1d4e', created_at: '2026-05-04T10:15:03.000Z', expires_at: null, revoked_at: null };
const merchantExample = {
  id: 'acme',
  name: 'Acme Ltd',
  source: 'api',
  created_at: '2026-05-04T10:15:03.000Z',
  keys: [keyExample],
};
const issuedExample = {
  merchant: merchantExample,
  api_key: 'mk_3f9c2a7b1d4e_Q2hhbmdlIG1lIHRvIGEgcmVhbCBrZXkgYmVmb3JlIHVzZQ',
  previous_keys_expire_at: null,
};

const createMerchant = route(
  {
    operationId: 'createMerchant',
    method: 'POST',
    path: '/v1/merchants',
    tag: 'Merchants',
    summary: 'Add a merchant',
    description: 'Adds a merchant and answers its first API key, this once: only its SHA-256 is stored.',
    auth: 'operator',
    forbidden: operatorOnly,
    body: { id: 'CreateMerchantRequest', schema: () => createMerchantRequest, examples: { acme: { id: 'acme' } } },
    answers: { 201: { description: 'The merchant and its key.', schema: issuedKeySchema, example: issuedExample } },
    errors: { ...jsonBodyErrors, ...withKey, 403: ['forbidden'], 409: ['conflict'] },
  },
  async ({ body, caller, request, reply }, { merchants }: MerchantRouteDeps) => {
    const { merchant, apiKey } = await merchants.create(caller.name, body.id, body.name);
    request.log.info({ operator: caller.name, merchantId: merchant.id }, 'merchant added');
    return reply.status(201).send({ merchant, api_key: apiKey, previous_keys_expire_at: null });
  },
);

const listMerchants = route(
  {
    operationId: 'listMerchants',
    method: 'GET',
    path: '/v1/merchants',
    tag: 'Merchants',
    summary: 'List merchants',
    description: 'Every merchant with the dates of its stored keys (never the keys).',
    auth: 'operator',
    forbidden: operatorOnly,
    answers: {
      200: { description: 'The merchants.', schema: merchantListSchema, example: { data: [merchantExample] } },
    },
    errors: { ...withKey, 403: ['forbidden'] },
  },
  async (_input, { merchants }: MerchantRouteDeps) => ({ data: await merchants.list() }),
);

const rollMerchantKey = route(
  {
    operationId: 'rollMerchantKey',
    method: 'POST',
    path: '/v1/merchants/:id/keys/roll',
    tag: 'Merchants',
    summary: "Roll a merchant's API key",
    description:
      'Answers a new key, this once; the keys it replaces keep working for `overlap` (default 24h, `0`: stop now). ' +
      'Keys in MERCHANT_API_KEYS are not touched: they work while they are there.',
    auth: 'operator',
    forbidden: operatorOnly,
    params: merchantParams,
    notFound: 'no such merchant',
    body: { id: 'RollRequest', schema: () => rollRequest, examples: { day: { overlap: '24h' } }, required: false },
    answers: {
      201: {
        description: 'The new key.',
        schema: issuedKeySchema,
        example: { ...issuedExample, previous_keys_expire_at: '2026-05-05T10:15:03.000Z' },
      },
    },
    errors: { ...jsonBodyErrors, ...withKey, 403: ['forbidden'], 404: ['not_found'] },
  },
  async ({ params, body, caller, request, reply }, { merchants }: MerchantRouteDeps) => {
    const rolled = await merchants.roll(caller.name, params.id, body.overlap ?? DEFAULT_OVERLAP_MS);
    request.log.info({ operator: caller.name, merchantId: params.id }, 'merchant key rolled');
    return reply.status(201).send({
      merchant: rolled.merchant,
      api_key: rolled.apiKey,
      previous_keys_expire_at: rolled.previousKeysExpireAt.toISOString(),
    });
  },
);

const revokeMerchantKeys = route(
  {
    operationId: 'revokeMerchantKeys',
    method: 'POST',
    path: '/v1/merchants/:id/keys/revoke',
    tag: 'Merchants',
    summary: "Revoke a merchant's API keys",
    description: 'Every stored key of the merchant stops working at once, on every server (a leaked key).',
    auth: 'operator',
    forbidden: operatorOnly,
    params: merchantParams,
    notFound: 'no such merchant',
    answers: {
      200: {
        description: 'What was revoked.',
        schema: revokedKeysSchema,
        example: { merchant: { ...merchantExample, keys: [] }, revoked: 1 },
      },
    },
    errors: { ...withKey, 403: ['forbidden'], 404: ['not_found'] },
  },
  async ({ params, caller, request }, { merchants }: MerchantRouteDeps) => {
    const revoked = await merchants.revoke(caller.name, params.id);
    request.log.info({ operator: caller.name, merchantId: params.id }, 'merchant keys revoked');
    return revoked;
  },
);

/** The operators' merchant routes. */
export const MERCHANT_ROUTES = [createMerchant, listMerchants, rollMerchantKey, revokeMerchantKeys];
