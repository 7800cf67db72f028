import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { ESLint } from 'eslint';

// The layer rules of ARCHITECTURE.md are ESLint rules: each case drops a file with a wrong import into a folder and
// reads what `npm run check` (eslint.config.mjs) says about it. That the repository as it is breaks none of them is
// `npm run check`'s to say (`npm test` runs it first): linting the whole tree again here took most of this file's time.

const root = resolve(__dirname, '..');
const RULE = '@typescript-eslint/no-restricted-imports';
// One instance for every case: each new one set up its type-aware parsing again.
const eslint = new ESLint({ cwd: root });

/** The restricted imports ESLint reports for `source` placed as a new file in `folder`, by import specifier. */
async function restrictedImports(folder: string, source: string): Promise<Map<string, string>> {
  const file = join(root, folder, `zz-architecture-${randomUUID().slice(0, 8)}.ts`);
  writeFileSync(file, source);
  try {
    const [result] = await eslint.lintFiles([file]);
    assert.ok(result, 'ESLint linted the file');
    const found = new Map<string, string>();
    for (const message of result.messages) {
      if (message.ruleId !== RULE) continue;
      const specifier = /^'([^']+)'/.exec(message.message)?.[1];
      assert.ok(specifier, `the message names the import: ${message.message}`);
      found.set(specifier, message.message);
    }
    return found;
  } finally {
    rmSync(file, { force: true });
  }
}

describe('layer rules', () => {
  it('keep workflows to @temporalio/workflow, @temporalio/common, domain/ and their own folder', async () => {
    const found = await restrictedImports(
      'src/workflows',
      [
        "import { readFileSync } from 'node:fs';",
        "import { ProviderError } from '../provider/provider-errors';",
        "import { Client } from '@temporalio/client';",
        "import { createPaymentActivities } from '../activities/payment-activities';",
        "import type { PaymentActivities } from '../activities/payment-activities';",
        "import { isTerminal } from '../domain/payment-model';",
        "import { paymentQuery } from './definitions';",
        "import { proxyActivities } from '@temporalio/workflow';",
        "import { ApplicationFailure } from '@temporalio/common';",
        'export const used = [readFileSync, ProviderError, Client, createPaymentActivities, isTerminal];',
        'export const more = [paymentQuery, proxyActivities, ApplicationFailure];',
        'export type Used = PaymentActivities;',
        '',
      ].join('\n'),
    );
    assert.deepEqual(
      [...found.keys()].sort(),
      ['../activities/payment-activities', '../provider/provider-errors', '@temporalio/client', 'node:fs'].sort(),
    );
    assert.match(found.get('node:fs') ?? '', /workflows import only @temporalio\/workflow/);
    assert.match(found.get('../provider/provider-errors') ?? '', /workflows import only/);
    assert.match(found.get('../activities/payment-activities') ?? '', /by their types only/);
  });

  it('keep the sandbox away from the provider module it fakes (the client package, as a merchant uses it, is fine)', async () => {
    const found = await restrictedImports(
      'src/sandbox',
      [
        "import { ProviderError } from '../provider/provider-errors';",
        "import { parseCallback } from '../provider/wire';",
        "import { isTerminal } from '../domain/payment-model';",
        "import { verifySignature } from '@payments/client';",
        'export const used = [ProviderError, parseCallback, isTerminal, verifySignature];',
        '',
      ].join('\n'),
    );
    assert.deepEqual([...found.keys()].sort(), ['../provider/provider-errors', '../provider/wire']);
    assert.match(found.get('../provider/provider-errors') ?? '', /the sandbox .* \(never provider\/\)/);
  });

  it('keep domain/ free of project code and Node modules', async () => {
    const found = await restrictedImports(
      'src/domain',
      [
        "import { createHash } from 'node:crypto';",
        "import { parseConfig } from '../config/config-loading';",
        "import { z } from 'zod';",
        "import { isTerminal } from './payment';",
        'export const used = [createHash, parseConfig, z, isTerminal];',
        '',
      ].join('\n'),
    );
    assert.deepEqual([...found.keys()].sort(), ['../config/config-loading', 'node:crypto']);
  });

  it('send the HTTP API through the application layer and the workflows contract, never SDK internals', async () => {
    const found = await restrictedImports(
      'src/http',
      [
        "import { connectClient } from '../temporal/temporal-client';",
        "import { PaymentState } from '../workflows/payment-state';",
        "import { optionalTsToDate } from '@temporalio/common/lib/time';",
        "import { startDevServer } from '../local/dev-server';",
        "import type { paymentWorkflow } from '../workflows';",
        "import type { Payments } from '../payments/payments';",
        "import { paymentQuery } from '../workflows/definitions';",
        'export const used = [connectClient, PaymentState, optionalTsToDate, startDevServer, paymentQuery];',
        'export type Used = [typeof paymentWorkflow, Payments];',
        '',
      ].join('\n'),
    );
    assert.deepEqual(
      [...found.keys()].sort(),
      [
        '../local/dev-server',
        '../temporal/temporal-client',
        '../workflows/payment-state',
        '@temporalio/common/lib/time',
      ].sort(),
    );
    assert.match(found.get('@temporalio/common/lib/time') ?? '', /SDK internals/);
  });

  it('keep the client package (shipped to merchant services) to domain/, its own folder, zod and Node.js', async () => {
    const found = await restrictedImports(
      'packages/client/src',
      [
        "import { ApiError } from '../../../src/http/errors';",
        "import { Payments } from '../../../src/payments/payments';",
        "import { sha256 } from '../../../src/crypto/digest';",
        "import { paymentResourceSchema } from '../../../src/domain/api-resources';",
        "import { PaymentsClient } from './payments-client';",
        "import { z } from 'zod';",
        "import { createHmac } from 'node:crypto';",
        "import { request } from 'undici';",
        'export const used = [ApiError, Payments, sha256, paymentResourceSchema, PaymentsClient, z, createHmac, request];',
        '',
      ].join('\n'),
    );
    assert.deepEqual(
      [...found.keys()].sort(),
      ['../../../src/crypto/digest', '../../../src/http/errors', '../../../src/payments/payments', 'undici'].sort(),
    );
    assert.match(found.get('../../../src/payments/payments') ?? '', /the client package ships to merchant services/);
    assert.match(found.get('undici') ?? '', /depends on zod alone/);
  });

  it('keep scripts off test/', async () => {
    const found = await restrictedImports(
      'scripts',
      [
        "import { startStack } from '../test/support/test-stack';",
        "import { freePort } from '../src/local/free-port';",
        'export const used = [startStack, freePort];',
        '',
      ].join('\n'),
    );
    assert.deepEqual([...found.keys()], ['../test/support/test-stack']);
  });
});
