import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { request } from 'undici';
import { batchItemPaymentId, batchWorkflowId } from '../src/domain/ids';
import { temporalBinary } from '../src/local/binaries';
import { freePort } from '../src/local/free-port';
import { waitUntil } from '../src/local/wait-until';
import { startWorkerProcess } from '../src/local/worker-process';
import { SUCCESS_MESSAGE } from '../src/sandbox/scenarios';
import { parseKeyring } from '../src/crypto/keyring';
import { createDataConverter } from '../src/temporal/data-converter';
import { bundleBuildId } from '../src/temporal/deployment';
import { batchBody, waitForBatch } from './support/batch-helpers';
import { paymentRequest, uniqueReference } from './support/request-builders';
import { TEST_ENCRYPTION_KEYS, startStack, testEnvironment } from './support/test-stack';
import type { SandboxRecord, Stack } from './support/test-stack';

// Build A is the bundle `npm run build` made; build B the same bundle with one line added, so its derived build id
// differs as any change to the workflow code makes it. Both run as worker processes of one deployment on this
// file's own task queue; the `temporal` CLI rolls out and rolls back as docs/operating.md says.

const execFileAsync = promisify(execFile);
const { VersioningBehavior } = temporal.api.enums.v1;

const deploymentName = `payments-versioning-${Date.now().toString(36)}`;
const workers: ChildProcess[] = [];
let stack: Stack;
let connection: Connection;
let client: Client;
let scratch: string;
let buildA: string;
let buildB: string;
let bundleB: string;

before(async () => {
  // Payments wait for callbacks this test delivers itself (scenario 33: the sandbox never calls back).
  const long = { CALLBACK_TIMEOUT_MOBILE_MONEY: '5m', CALLBACK_TIMEOUT_BANK_CREDIT: '5m', LATE_CALLBACK_WINDOW: '1s' };
  stack = await startStack({ withoutWorker: true, env: { ...long, BATCH_CONCURRENCY: '2' } });
  connection = await Connection.connect({ address: testEnvironment().address });
  client = new Client({ connection, dataConverter: createDataConverter(parseKeyring(TEST_ENCRYPTION_KEYS)) });
  scratch = mkdtempSync(join(tmpdir(), 'worker-versioning-'));
  bundleB = join(scratch, 'workflow-bundle.js');
  // The line goes before the inline source map, which the SDK reads to the end of the file as base64.
  const code = readFileSync(testEnvironment().bundlePath, 'utf8');
  const sourceMap = code.lastIndexOf('//# sourceMappingURL=');
  writeFileSync(bundleB, `${code.slice(0, sourceMap)}// build B\n${code.slice(sourceMap)}`);
  buildA = bundleBuildId(testEnvironment().bundlePath);
  buildB = bundleBuildId(bundleB);
});

after(async () => {
  for (const worker of workers) worker.kill('SIGKILL');
  await connection?.close();
  await stack?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

it('payments finish on the build that started them; batches and new payments move to the current build', async () => {
  assert.notEqual(buildA, buildB, 'a changed bundle gets a new build id');
  // Before versioning: an unversioned worker starts a payment; then build A takes over the task queue.
  const unversionedWorker = await startWorker(testEnvironment().bundlePath, false);
  const unversioned = await createPayment('unversioned');
  await startWorker(testEnvironment().bundlePath);
  await setCurrent(buildA);
  unversionedWorker.kill('SIGTERM');
  await new Promise((r) => unversionedWorker.once('exit', r));

  const old = await createPayment('old');
  const batchReference = uniqueReference('versioning-batch');
  const batchResponse = await stack.api('POST', '/v1/payout-batches', batchBody(batchReference, 2, ['33']));
  assert.equal(batchResponse.status, 201, JSON.stringify(batchResponse.body));
  const batchId = batchWorkflowId('acme', batchReference);
  await waitForBatch(stack, batchId, (b) => b.items.in_flight.count === 2);
  const items = ['item-00001', 'item-00002'].map((item) => batchItemPaymentId('acme', batchReference, item));
  for (const item of items) await stack.waitForStatus(item, ['pending']);

  // Rollout: build B polls, then becomes current.
  await startWorker(bundleB);
  await setCurrent(buildB);
  const fresh = await createPayment('new');

  for (const id of [unversioned, old, ...items, fresh]) await deliverSuccess(id);
  for (const id of [unversioned, old, fresh]) await stack.waitForStatus(id, ['succeeded']);
  const done = await waitForBatch(stack, batchId, (b) => b.status === 'completed');
  assert.equal(done.items.succeeded.count, 2);
  for (const id of [old, ...items, fresh]) await client.workflow.getHandle(id).result();

  // Pinned: every workflow task of the old payment and of the batch's items ran on A, the callbacks' too.
  for (const id of [old, ...items]) {
    assert.deepEqual(await versioning(id), { behavior: 'PINNED', buildId: buildA }, id);
    assert.deepEqual(await taskBuilds(id), [buildA], id);
  }
  assert.deepEqual(await versioning(fresh), { behavior: 'PINNED', buildId: buildB });
  assert.deepEqual(await taskBuilds(fresh), [buildB]);
  // A payment started before versioning follows the current build: its callback ran on B.
  assert.deepEqual(await versioning(unversioned), { behavior: 'AUTO_UPGRADE', buildId: buildB });
  assert.deepEqual(await taskBuilds(unversioned), [buildB]);
  // Auto-upgrade: the batch started on A and its next task after the rollout ran on B.
  assert.deepEqual(await versioning(batchId), { behavior: 'AUTO_UPGRADE', buildId: buildB });
  assert.deepEqual(await taskBuilds(batchId), [buildA, buildB]);

  // The query docs/operating.md gives to follow a build's workflows finds the old payment and the items on A.
  const onA = `TemporalWorkerDeploymentVersion="${deploymentName}:${buildA}" AND WorkflowType="paymentWorkflow"`;
  await waitUntil(async () => ((await client.workflow.count(onA)).count === 3 ? true : undefined), {
    timeoutMs: 15_000,
    timedOut: async () => new Error(`${onA}: ${(await client.workflow.count(onA)).count} workflows, not 3`),
  });

  // Rollback: A is current again; new payments go to A, while a payment B started finishes on B.
  const startedOnB = await createPayment('before-rollback');
  await setCurrent(buildA);
  const current = await deployment();
  assert.equal(current.routingConfig?.currentVersionBuildID, buildA, JSON.stringify(current));
  // B takes no new workflows: it only drains those pinned to it.
  const b = current.versionSummaries?.find((v) => v.BuildID === buildB);
  assert.equal(b?.drainageStatus, 'draining', JSON.stringify(current));
  const afterRollback = await createPayment('rollback');
  await deliverSuccess(afterRollback);
  await stack.waitForStatus(afterRollback, ['succeeded']);
  assert.deepEqual(await versioning(afterRollback), { behavior: 'PINNED', buildId: buildA });
  await deliverSuccess(startedOnB);
  await stack.waitForStatus(startedOnB, ['succeeded']);
  assert.deepEqual(await taskBuilds(startedOnB), [buildB]);
});

async function startWorker(bundlePath: string, versioned = true): Promise<ChildProcess> {
  const env = {
    WORKFLOW_BUNDLE_PATH: bundlePath,
    WORKER_VERSIONING: versioned ? 'on' : 'off',
    WORKER_DEPLOYMENT_NAME: deploymentName,
    WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
  };
  const worker = await startWorkerProcess({ ...stack.workerEnv, ...env });
  workers.push(worker);
  return worker;
}

/** `temporal worker deployment set-current-version`, retried until the build's worker has registered its version. */
async function setCurrent(buildId: string): Promise<void> {
  await waitUntil(
    async () => {
      await cli('set-current-version', '--deployment-name', deploymentName, '--build-id', buildId, '--yes');
      return true;
    },
    {
      timeoutMs: 30_000,
      intervalMs: 500,
      timedOut: (err) => new Error(`set-current-version ${buildId}: ${String(err)}`),
    },
  );
  // The server hands the new routing to the task queue's partitions after it answers: a task dispatched meanwhile
  // still goes to the previous build. Wait until the deployment says the routing reached them.
  await waitUntil(
    async () => {
      const { routingConfig, routingConfigUpdateState: state } = await deployment();
      const propagated = state === undefined || /COMPLETED/.test(state);
      return routingConfig?.currentVersionBuildID === buildId && propagated ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200, timedOut: () => new Error(`${buildId}'s routing never reached the queues`) },
  );
}

interface DeploymentInfo {
  routingConfig?: { currentVersionBuildID?: string };
  /** Newer servers: whether the routing has reached every task queue yet. */
  routingConfigUpdateState?: string;
  versionSummaries?: { BuildID?: string; drainageStatus?: string }[];
}

/** `temporal worker deployment describe` as JSON. */
async function deployment(): Promise<DeploymentInfo> {
  return JSON.parse(await cli('describe', '--name', deploymentName, '--output', 'json')) as DeploymentInfo;
}

async function cli(command: string, ...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(temporalBinary('temporal'), [
    'worker',
    'deployment',
    command,
    '--address',
    testEnvironment().address,
    ...args,
  ]);
  return stdout;
}

async function createPayment(label: string): Promise<string> {
  const response = await stack.api(
    'POST',
    '/v1/payments',
    paymentRequest('mobile_money_debit', '33', uniqueReference(label)),
  );
  assert.equal(response.status, 201, JSON.stringify(response.body));
  await stack.waitForStatus(response.body.id, ['pending']);
  return response.body.id;
}

/** The provider's success callback, sent to the payment's callback URL as the provider would. */
async function deliverSuccess(paymentId: string): Promise<void> {
  const [transaction] = (await stack.upstreamTransactions(paymentId)) as (SandboxRecord & {
    transaction_id: number;
    reference: string;
    amount: number;
  })[];
  assert.ok(transaction?.callback_url, `no transaction for ${paymentId}`);
  const { transaction_id, reference, amount } = transaction;
  // A callback is a hint: the provider's status query says succeeded too.
  assert.ok(stack.sandbox.succeedSilently(transaction_id));
  const response = await request(transaction.callback_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ transaction_id, reference, amount, status: '1', message: SUCCESS_MESSAGE }),
  });
  await response.body.dump();
  assert.equal(response.statusCode, 200, `callback of ${paymentId}`);
}

/** The execution's versioning behaviour and the build it runs on (describe). */
async function versioning(workflowId: string): Promise<{ behavior: string; buildId: string | undefined }> {
  const { raw } = await client.workflow.getHandle(workflowId).describe();
  const info = raw.workflowExecutionInfo?.versioningInfo;
  const behavior = info?.behavior === VersioningBehavior.VERSIONING_BEHAVIOR_PINNED ? 'PINNED' : 'AUTO_UPGRADE';
  assert.ok(info?.behavior, `${workflowId} has no versioning behaviour`);
  return { behavior, buildId: info.deploymentVersion?.buildId ?? undefined };
}

/** The builds that completed the workflow's tasks, in order, each once (from its history). */
async function taskBuilds(workflowId: string): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const builds: string[] = [];
  for (const event of history.events ?? []) {
    const build = event.workflowTaskCompletedEventAttributes?.deploymentVersion?.buildId;
    if (build && builds.at(-1) !== build) builds.push(build);
  }
  return builds;
}
