// `npm run histories:capture` (after `npm run build`): runs every kind of payment and payout batch through an
// in-process stack on a private dev server and records their workflow histories in test/histories/current, which it
// replaces; every change to workflow code re-records it in the same commit. `-- --freeze <name>` first moves the set to
// test/histories/<name>, kept in CI for good: 1.0 was frozen so (docs/development.md#the-replay-corpus).
// test/replay.test.ts replays every set against the workflow code of the day. Payloads stay encrypted with the test keys.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { format, resolveConfig } from 'prettier';
import { request } from 'undici';
import { WORKFLOW_BUNDLE } from '../src/local/build-outputs';
import { createLogger } from '../src/logging';
import { parseKeyring } from '../src/crypto/keyring';
import type { PaymentStatus } from '../src/domain/payment-model';
import { PAYMENT_TYPES } from '../src/domain/requests';
import type { PaymentType } from '../src/domain/requests';
import { SUCCESS_MESSAGE, scenarioFor } from '../src/sandbox/scenarios';
import { EncryptionCodec } from '../src/temporal/codec';
import { createDataConverter } from '../src/temporal/data-converter';
import { startDevServer } from '../src/local/dev-server';
import { startRedisServer } from '../src/local/redis-server';
import { startScratchDatabase } from '../src/local/postgres';
import { PAYMENT_WORKFLOW, batchItemPaymentId, batchWorkflowId, paymentWorkflowId } from '../src/domain/ids';
import { signMessage } from '../src/crypto/signing';
import { callbackSignal } from '../src/workflows/definitions';
import { freePort } from '../src/local/free-port';
import { idleHistory } from '../scripts/bench/history';
import { waitForBatch } from './support/batch-helpers';
import { paymentRequest } from './support/request-builders';
import { installTestRuntime } from './support/test-runtime';
import { OPERATOR_KEY, TEST_ENCRYPTION_KEYS, TEST_SIGNING_KEYS, startStack } from './support/test-stack';
import type { ApiResponse, Stack } from './support/test-stack';

type History = temporal.api.history.v1.IHistory;

// The SDK's historyToJSON fails here ("type must be a Type"): npm nests one protobufjs under @temporalio/common and
// another under @temporalio/proto. The proto JSON extension of the copy @temporalio/proto loads writes the same format.
const protojson = createRequire(require.resolve('@temporalio/proto'))('protobufjs/ext/protojson') as {
  toJson(type: object, message: object): unknown;
};

const root = resolve(__dirname, '..');
const CORPUS = join(root, 'test', 'histories');
/** The set this script records: histories of the workflow code of the day. */
const HISTORIES = join(CORPUS, 'current');
const MERCHANT = 'acme';
const SCENARIOS = ['00', '11', '22', '33', '44', '55', '66', '77', '88', '99'];
const SETTLE_MS = 90_000;

/** Timings that settle a payment within seconds, and a batch that continues as new after a few dozen items. */
const SHORT_TIMING = {
  CALLBACK_TIMEOUT_MOBILE_MONEY: '2s',
  CALLBACK_TIMEOUT_CARD: '2s',
  CALLBACK_TIMEOUT_BANK_CREDIT: '2s',
  RECONCILE_FOR: '3s',
  RECONCILE_INTERVAL: '500ms',
  LATE_CALLBACK_WINDOW: '3s',
  BATCH_CONCURRENCY: '4',
  BATCH_RUN_MAX_EVENTS: '500',
  // Items that wait for reconciliation outlast two ticks: the batch histories hold the item check's timers and activity.
  BATCH_ITEM_CHECK_INTERVAL: '1s',
  // The payroll fails a third of its items on purpose: no automatic halt (test/batch-halt.test.ts has those).
  BATCH_HALT_FAILURE_SHARE: '1',
};
/** Timings that keep workflows open past the capture, as an upgrade finds them (cards reconcile at once). */
const LONG_TIMING = {
  CALLBACK_TIMEOUT_MOBILE_MONEY: '1h',
  CALLBACK_TIMEOUT_CARD: '2s',
  CALLBACK_TIMEOUT_BANK_CREDIT: '1h',
  RECONCILE_FOR: '1h',
  RECONCILE_INTERVAL: '30m',
  LATE_CALLBACK_WINDOW: '1h',
  BATCH_CONCURRENCY: '2',
  BATCH_HALT_FAILURE_SHARE: '1',
};
const PAYROLL_ITEMS = 120;
const PAYROLL_SCENARIOS = ['00', '00', '11', '00', '88', '22'];
const PAYROLL_REVIEW_ITEM = 3;

interface Capture {
  workflowId: string;
  /** Closed at capture (awaited); otherwise recorded while it waits. */
  finished: boolean;
}

/** The label in every workflow id of this capture: the commit of the workflow code, `-dirty` when src/ has changes. */
function captureTag(): string {
  const flag = process.argv.indexOf('--tag');
  if (flag >= 0) return process.argv[flag + 1] ?? '';
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  const dirty = git('status', '--porcelain', '--', 'src') !== '';
  return `${git('rev-parse', '--short', 'HEAD')}${dirty ? '-dirty' : ''}`;
}

/** `--freeze <name>`: where the current set goes before a new one is recorded. */
function freezeName(): string | undefined {
  const flag = process.argv.indexOf('--freeze');
  if (flag < 0) return undefined;
  const name = process.argv[flag + 1] ?? '';
  if (!/^[a-z0-9][a-z0-9.-]{0,40}$/.test(name) || name === 'current') {
    throw new Error(`--freeze: "${name}" is not a folder name of lowercase letters, digits, dots and dashes`);
  }
  if (existsSync(join(CORPUS, name))) throw new Error(`--freeze: test/histories/${name} exists already`);
  return name;
}

async function main(): Promise<void> {
  const started = Date.now();
  if (!existsSync(WORKFLOW_BUNDLE)) throw new Error('the workflow bundle is not built: run `npm run build` first');
  const tag = captureTag();
  if (!/^[A-Za-z0-9-]{1,20}$/.test(tag)) throw new Error(`--tag: "${tag}" is not 1-20 letters, digits or dashes`);
  const frozen = freezeName();
  if (frozen && existsSync(HISTORIES)) {
    renameSync(HISTORIES, join(CORPUS, frozen));
    log(`kept the previous set as test/histories/${frozen}`);
  }
  rmSync(HISTORIES, { recursive: true, force: true });
  mkdirSync(HISTORIES, { recursive: true });

  log(`capturing histories tagged ${tag}: starting a Temporal dev server, redis-server and PostgreSQL…`);
  const [devServer, redis, database] = await Promise.all([
    freePort().then((port) => startDevServer({ port, namespace: 'default' })),
    freePort().then((port) => startRedisServer(port)),
    startScratchDatabase('histories:capture'),
  ]);
  process.env.TEST_TEMPORAL_ADDRESS = devServer.address;
  process.env.TEST_VAULT_URL = redis.url;
  process.env.TEST_DATABASE_URL = database.url;
  const stacks: Stack[] = [];
  let connection: Connection | undefined;
  try {
    // The worker's activity failures (scenarios 44, 88) are expected here: log only errors.
    await installTestRuntime(createLogger('worker', 'error', false));
    connection = await Connection.connect({ address: devServer.address });
    const short = await startStack({ sandbox: { slowResponseMs: 1500 }, env: SHORT_TIMING });
    stacks.push(short);
    // A second server on the same task queue and worker, whose payments and batches outlive the capture.
    const long = await startStack({ withoutWorker: true, taskQueue: short.taskQueue, env: LONG_TIMING });
    stacks.push(long);
    const captures = (
      await Promise.all([
        settledPayments(short, tag),
        lateCallbackInReview(short, tag),
        payrollBatch(short, tag),
        cancelledBatch(short, tag),
        runningPayments(short, long, tag),
        runningBatch(long, tag),
        untrustedInput(short, long, connection, tag),
      ])
    ).flat();
    const client = new Client({ connection, dataConverter: createDataConverter(parseKeyring(TEST_ENCRYPTION_KEYS)) });
    const files: string[] = [];
    for (const capture of captures) files.push(...(await save(client, capture)));
    const payroll = files.filter((file) => file.startsWith(`${batchWorkflowId(MERCHANT, `${tag}.payroll`)}@`));
    if (payroll.length < 2) throw new Error('the payroll batch did not continue as new: raise PAYROLL_ITEMS');
    const bytes = files.reduce((sum, file) => sum + statSync(join(HISTORIES, file)).size, 0);
    const sets = readdirSync(CORPUS).filter((name) => statSync(join(CORPUS, name)).isDirectory());
    const corpus = sets.flatMap((set) => readdirSync(join(CORPUS, set)).map((file) => join(CORPUS, set, file)));
    const corpusBytes = corpus.reduce((sum, file) => sum + statSync(file).size, 0);
    log(
      `wrote ${files.length} histories to test/histories/current (${mb(bytes)}) ` +
        `in ${((Date.now() - started) / 1000).toFixed(0)} s; test/histories holds ${corpus.length} ` +
        `(${mb(corpusBytes)}) in ${sets.sort().join(', ')}`,
    );
  } finally {
    for (const stack of stacks.reverse()) await stack.close();
    await connection?.close();
    await Promise.all([devServer.stop(), redis.stop(), database.stop()]);
  }
}

/** Every sandbox scenario of every payment type, to the end; review cases resolved by an operator. */
async function settledPayments(stack: Stack, tag: string): Promise<Capture[]> {
  const runs = PAYMENT_TYPES.flatMap((type) =>
    SCENARIOS.map(async (digits) => {
      // A bank credit's 44 fails on its own (not_sent: the provider never had it); the others wait for an operator.
      const review = digits === '33' || (digits === '44' && type !== 'bank_credit');
      const id = await createPayment(
        stack,
        type,
        digits,
        `${tag}.${type}.${scenarioLabel(digits)}${review ? '-resolved' : ''}`,
      );
      if (review) {
        await stack.waitForStatus(id, ['needs_review'], SETTLE_MS);
        const outcome = digits === '33' ? 'succeeded' : 'failed';
        await resolvePayment(stack, id, outcome);
      }
      return { workflowId: id, finished: true };
    }),
  );
  return Promise.all(runs);
}

/** A bank credit in review settled by the provider's genuine callback arriving late. */
async function lateCallbackInReview(stack: Stack, tag: string): Promise<Capture[]> {
  const id = await createPayment(stack, 'bank_credit', '33', `${tag}.bank_credit.33-silent_pending-late-callback`);
  await stack.waitForStatus(id, ['needs_review'], SETTLE_MS);
  const [transaction] = await transactionsOf(stack, id);
  if (!transaction) throw new Error(`the sandbox holds no transaction of ${id}`);
  await sendCallback(stack, id, transaction);
  await stack.waitForStatus(id, ['succeeded'], SETTLE_MS);
  return [{ workflowId: id, finished: true }];
}

/** A batch long enough to continue as new, paused and resumed on the way; an item in review resolved afterwards. */
async function payrollBatch(stack: Stack, tag: string): Promise<Capture[]> {
  const reference = `${tag}.payroll`;
  const scenarios = Array.from({ length: PAYROLL_ITEMS }, (_, i) =>
    i === PAYROLL_REVIEW_ITEM ? '33' : (PAYROLL_SCENARIOS[i % PAYROLL_SCENARIOS.length] ?? '00'),
  );
  const batchId = await createBatch(stack, reference, scenarios);
  await waitForBatch(stack, batchId, (b) => b.items.succeeded.count >= 20, SETTLE_MS);
  await controlBatch(stack, batchId, 'pause');
  await new Promise((r) => setTimeout(r, 1000));
  await controlBatch(stack, batchId, 'resume');
  const done = await waitForBatch(stack, batchId, (b) => b.status === 'completed', 180_000);
  const reviewed = itemId(reference, PAYROLL_REVIEW_ITEM);
  if (!done.needs_review.includes(reviewed)) {
    throw new Error(`${reviewed} is not in review: ${done.needs_review.join()}`);
  }
  await resolvePayment(stack, reviewed, 'failed');
  // The first item of each scenario, each a child of the batch that reports to it.
  const firsts = [...new Set(scenarios)].map((digits) => itemId(reference, scenarios.indexOf(digits)));
  return [
    { workflowId: batchId, finished: true },
    ...firsts.filter((id) => id !== reviewed).map((workflowId) => ({ workflowId, finished: true })),
    { workflowId: reviewed, finished: true },
  ];
}

/** A batch cancelled while its first items are in flight: the rest are listed as never started. */
async function cancelledBatch(stack: Stack, tag: string): Promise<Capture[]> {
  const reference = `${tag}.cancelled`;
  const batchId = await createBatch(stack, reference, Array<string>(10).fill('22'));
  await waitForBatch(stack, batchId, (b) => b.items.in_flight.count > 0, SETTLE_MS);
  await controlBatch(stack, batchId, 'cancel');
  const done = await waitForBatch(stack, batchId, (b) => b.status === 'cancelled', SETTLE_MS);
  if (!done.not_started?.length) throw new Error(`${batchId} started every item before the cancel`);
  return [
    { workflowId: batchId, finished: true },
    { workflowId: itemId(reference, 0), finished: true },
  ];
}

/** Payments still open at capture: awaiting a callback, reconciling, in review. */
async function runningPayments(short: Stack, long: Stack, tag: string): Promise<Capture[]> {
  const base = `${tag}.running`;
  const waiting = await createPayment(long, 'mobile_money_debit', '33', `${base}.mobile_money_debit.awaiting-callback`);
  const reconciling = await createPayment(long, 'card_payment', '33', `${base}.card_payment.reconciling`);
  const review = await createPayment(short, 'bank_credit', '33', `${base}.bank_credit.needs-review`);
  await long.waitForStatus(waiting, ['pending'], SETTLE_MS);
  await waitForEvents(long, reconciling, ['status_checked']);
  await short.waitForStatus(review, ['needs_review'], SETTLE_MS);
  return [waiting, reconciling, review].map((workflowId) => ({ workflowId, finished: false }));
}

/** A batch mid-way: two items in flight awaiting callbacks, the others not started, its page still open. */
async function runningBatch(long: Stack, tag: string): Promise<Capture[]> {
  const reference = `${tag}.running-batch`;
  const batchId = await createBatch(long, reference, Array<string>(5).fill('33'));
  await waitForBatch(long, batchId, (b) => b.items.in_flight.count === 2, SETTLE_MS);
  await long.waitForStatus(itemId(reference, 0), ['pending'], SETTLE_MS);
  await long.waitForStatus(itemId(reference, 1), ['pending'], SETTLE_MS);
  return [
    { workflowId: batchId, finished: false },
    { workflowId: itemId(reference, 0), finished: false },
  ];
}

/**
 * What did not come through the front door: a genuine start copied to another workflow id (fails before initiation),
 * and a waiting payment sent an unsigned and a tampered callback (both recorded as refused) before its genuine one.
 */
async function untrustedInput(short: Stack, long: Stack, connection: Connection, tag: string): Promise<Capture[]> {
  const base = `${tag}.untrusted`;
  const codec = new EncryptionCodec(parseKeyring(TEST_ENCRYPTION_KEYS));
  const original = await createPayment(short, 'mobile_money_debit', '00', `${base}.original`);
  await short.waitForStatus(original, ['succeeded'], SETTLE_MS);
  const input = (await new Client({ connection }).workflow.getHandle(original).fetchHistory()).events?.[0]
    ?.workflowExecutionStartedEventAttributes?.input;
  const copy = paymentWorkflowId(MERCHANT, `${base}.copied-start`);
  await connection.workflowService.startWorkflowExecution({
    namespace: 'default',
    workflowId: copy,
    workflowType: { name: PAYMENT_WORKFLOW },
    taskQueue: { name: short.taskQueue },
    input,
    requestId: copy,
  });
  // It fails before its first activity: the workflow refuses a start signed for another payment.
  await new Client({ connection }).workflow
    .getHandle(copy)
    .result()
    .then(
      () => Promise.reject(new Error(`${copy} completed: a copied start was accepted`)),
      () => undefined,
    );

  const waiting = await createPayment(long, 'mobile_money_debit', '33', `${base}.forged-callbacks`);
  await long.waitForStatus(waiting, ['pending'], SETTLE_MS);
  // The short stack's worker initiated it, with that stack's sandbox and callback URLs.
  const [transaction] = await transactionsOf(short, waiting);
  if (!transaction) throw new Error(`the sandbox holds no transaction of ${waiting}`);
  const forged = {
    state: 'succeeded',
    transactionId: String(transaction.transaction_id),
    statusCode: '1',
    message: 'x',
  };
  const signed = signMessage(parseKeyring(TEST_SIGNING_KEYS), 'callback', waiting, forged, {
    namespace: 'default',
    taskQueue: short.taskQueue,
  });
  for (const value of [forged, { ...signed, body: { ...forged, message: 'tampered' } }]) {
    await connection.workflowService.signalWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: waiting },
      signalName: callbackSignal.name,
      input: { payloads: await codec.encode([defaultPayloadConverter.toPayload(value)]) },
      identity: 'replay-corpus-forger',
    });
  }
  await waitForEvents(long, waiting, ['callback_rejected']);
  await sendCallback(short, waiting, transaction);
  await long.waitForStatus(waiting, ['succeeded'], SETTLE_MS);
  return [
    { workflowId: copy, finished: false },
    { workflowId: waiting, finished: false },
  ];
}

const CAPTURED_METADATA = { captured_by: 'capture-histories' };

async function createPayment(stack: Stack, type: PaymentType, digits: string, reference: string): Promise<string> {
  if (reference.length > 64) throw new Error(`reference ${reference} is longer than 64 characters`);
  // Metadata rides in the workflow's input: the corpus carries some, so replay covers inputs with it.
  const request = { ...paymentRequest(type, digits, reference), metadata: CAPTURED_METADATA };
  expect(await stack.api('POST', '/v1/payments', request), 201, reference);
  return paymentWorkflowId(MERCHANT, reference);
}

async function resolvePayment(stack: Stack, id: string, outcome: 'succeeded' | 'failed'): Promise<void> {
  const body = { outcome, note: `replay corpus: resolved ${outcome}` };
  expect(await stack.api('POST', `/v1/payments/${encodeURIComponent(id)}/resolve`, body, OPERATOR_KEY), 200, id);
}

async function createBatch(stack: Stack, reference: string, scenarios: string[]): Promise<string> {
  const items = scenarios.map((digits, i) => ({
    reference: itemReference(i),
    amount: 10 + (i % 7),
    customer_name: 'Kofi Boateng',
    bank_code: 'GH030100',
    account_number: `1234${String(i).padStart(4, '0')}${digits}`,
  }));
  const batch = { reference, items, metadata: CAPTURED_METADATA };
  expect(await stack.api('POST', '/v1/payout-batches', batch), 201, reference);
  return batchWorkflowId(MERCHANT, reference);
}

async function controlBatch(stack: Stack, batchId: string, action: 'pause' | 'resume' | 'cancel'): Promise<void> {
  expect(await stack.api('POST', `/v1/payout-batches/${batchId}/${action}`, undefined, OPERATOR_KEY), 200, action);
}

async function waitForEvents(stack: Stack, id: string, types: string[]): Promise<void> {
  const statuses: PaymentStatus[] = ['initiating', 'pending', 'reconciling', 'needs_review', 'succeeded', 'failed'];
  const deadline = Date.now() + SETTLE_MS;
  while (Date.now() < deadline) {
    const payment = await stack.waitForStatus(id, statuses);
    if (types.every((type) => payment.events.some((e) => e.type === type))) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`payment ${id} recorded no ${types.join(', ')} in time`);
}

interface Transaction {
  transaction_id: number;
  reference: string;
  amount: number;
  callback_url: string;
}

async function transactionsOf(stack: Stack, paymentId: string): Promise<Transaction[]> {
  const all = await stack.sandboxGet<Transaction[]>('/sandbox/transactions');
  return all.filter((t) => t.callback_url.includes(encodeURIComponent(paymentId)));
}

/** The provider succeeds the transaction late, then calls back to the payment's genuine URL (the status query agrees). */
async function sendCallback(stack: Stack, id: string, transaction: Transaction): Promise<void> {
  const { transaction_id, reference, amount } = transaction;
  if (!stack.sandbox.succeedSilently(transaction_id)) throw new Error(`the sandbox lost the transaction of ${id}`);
  const response = await request(transaction.callback_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ transaction_id, reference, amount, status: '1', message: SUCCESS_MESSAGE }),
  });
  await response.body.dump();
  if (response.statusCode !== 200) throw new Error(`the callback of ${id} answered ${response.statusCode}`);
}

function expect(response: ApiResponse, status: number, what: string): void {
  if (response.status !== status) {
    throw new Error(`${what}: expected HTTP ${status}, got ${response.status}: ${JSON.stringify(response.body)}`);
  }
}

function itemReference(index: number): string {
  return `item-${String(index + 1).padStart(5, '0')}`;
}

function itemId(batchReference: string, index: number): string {
  return batchItemPaymentId(MERCHANT, batchReference, itemReference(index));
}

function scenarioLabel(digits: string): string {
  return `${digits}-${scenarioFor(digits)}`;
}

/** Writes every run of one workflow: `<workflow id>.json`, or `<workflow id>@run-<n>.json` once it continued as new. */
async function save(client: Client, capture: Capture): Promise<string[]> {
  const handle = client.workflow.getHandle(capture.workflowId);
  if (capture.finished) await handle.result();
  const latest = await idleHistory(client, capture.workflowId);
  const firstRunId = latest.events?.[0]?.workflowExecutionStartedEventAttributes?.firstExecutionRunId;
  const runs: History[] = [];
  for (let runId = firstRunId ?? undefined; runId;) {
    const history = await idleHistory(client, capture.workflowId, runId);
    runs.push(history);
    runId = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  const options = await resolveConfig(join(HISTORIES, 'x.json'));
  return Promise.all(
    runs.map(async (history, n) => {
      const file = runs.length === 1 ? `${capture.workflowId}.json` : `${capture.workflowId}@run-${n + 1}.json`;
      const json = JSON.stringify(protojson.toJson(temporal.api.history.v1.History, history));
      writeFileSync(join(HISTORIES, file), await format(json, { ...options, parser: 'json' }));
      log(`  current/${file}: ${describeHistory(history)}`);
      return file;
    }),
  );
}

/** `paymentWorkflow, 31 events, completed` and the like. */
function describeHistory(history: History): string {
  const events = history.events ?? [];
  const type = events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '?';
  const last = events.at(-1);
  const end = last?.workflowExecutionCompletedEventAttributes
    ? 'completed'
    : last?.workflowExecutionFailedEventAttributes
      ? 'failed'
      : last?.workflowExecutionContinuedAsNewEventAttributes
        ? 'continued as new'
        : 'running';
  return `${type}, ${events.length} events, ${end}`;
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(2)} MB`;
}

function log(line: string): void {
  process.stdout.write(`[histories] ${line}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`[histories] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
