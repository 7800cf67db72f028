import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packedConsumer, typeCheck } from './support/client-package';
import type { PackedConsumer } from './support/client-package';
import { runNode } from './support/process';

// @payments/client as a merchant service gets it: the tarball `npm pack` makes, unpacked into a project of its own.
// The README's example runs from it against a stack in typed-client.test.ts.

const EXPORTS = [
  'DEFAULT_TOLERANCE_SECONDS',
  'NotificationSignatureError',
  'PaymentsApiError',
  'PaymentsClient',
  'PaymentsError',
  'PaymentsNetworkError',
  'PaymentsResponseError',
  'PaymentsTimeoutError',
  'SIGNATURE_HEADER',
  'WEBHOOK_ID_HEADER',
  'WEBHOOK_SIGNATURE_HEADER',
  'WEBHOOK_TIMESTAMP_HEADER',
  'signNotification',
  'standardWebhookHeaders',
  'verifyNotification',
  'verifySignature',
  'verifyStandardWebhook',
  'webhookKey',
];

describe('the client package', () => {
  let consumer: PackedConsumer;
  before(() => {
    consumer = packedConsumer();
  });
  after(() => consumer?.remove());

  it('holds its built modules and declarations only, and depends on zod alone', () => {
    assert.deepEqual(consumer.files.filter((file) => !file.endsWith('.map')).sort(), [
      'dist/index.cjs',
      'dist/index.d.cts',
      'dist/index.d.mts',
      'dist/index.mjs',
      'package.json',
    ]);
    const manifest = JSON.parse(
      readFileSync(join(consumer.dir, 'node_modules', '@payments', 'client', 'package.json'), 'utf8'),
    ) as { name: string; dependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
    assert.equal(manifest.name, '@payments/client');
    assert.deepEqual(Object.keys(manifest.dependencies ?? {}), ['zod']);
    assert.equal(manifest.peerDependencies, undefined);
    const declarations = readFileSync(
      join(consumer.dir, 'node_modules', '@payments', 'client', 'dist', 'index.d.mts'),
      'utf8',
    );
    assert.deepEqual(
      [...declarations.matchAll(/from ['"]([^'"]+)['"]/g)].map((match) => match[1]),
      ['zod'],
      'the declarations import nothing but zod: no path into the server',
    );
  });

  it('loads as an ES module and as CommonJS, with the same exports', async () => {
    const list = 'console.log(JSON.stringify(Object.keys(client).filter((name) => name !== "default").sort()))';
    const esm = await runNode(
      ['--input-type=module', '-e', `import * as client from '@payments/client'; ${list}`],
      {},
      consumer.dir,
    );
    const cjs = await runNode(['-e', `const client = require('@payments/client'); ${list}`], {}, consumer.dir);
    assert.equal(esm.code, 0, esm.output);
    assert.equal(cjs.code, 0, cjs.output);
    assert.deepEqual(JSON.parse(esm.output), EXPORTS);
    assert.deepEqual(JSON.parse(cjs.output), EXPORTS);
  });

  it("type-checks in a merchant's strict TypeScript project, importing it as an ES module and requiring it", () => {
    const use = [
      "const client = new PaymentsClient({ baseUrl: 'https://payments.example', apiKey: 'mk_x' });",
      'export async function outcome(id: string): Promise<PaymentStatus> {',
      '  return (await client.waitForOutcome(id)).status;',
      '}',
      "export const event: NotificationEvent = verifyNotification('{}', undefined, 'whsec_x');",
      '',
    ].join('\n');
    const names = 'PaymentsClient, verifyNotification, type NotificationEvent, type PaymentStatus';
    assert.equal(
      typeCheck(consumer, {
        'esm-use.mts': `import { ${names} } from '@payments/client';\n${use}`,
        'cjs-use.cts': `import { ${names} } from '@payments/client';\n${use}`,
      }),
      '',
    );
    const wrong = typeCheck(consumer, {
      'wrong-use.mts': [
        "import { PaymentsClient } from '@payments/client';",
        "const client = new PaymentsClient({ baseUrl: 'https://payments.example', apiKey: 'mk_x' });",
        "export const created = client.createPayment({ type: 'mobile_money_debit', reference: 'r', amount: '12' });",
        '',
      ].join('\n'),
    });
    assert.match(wrong, /wrong-use\.mts.*error TS/, 'the types are real: a wrong request does not compile');
  });
});
