import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import type { ReplayResult, ReplayWorkerOptions } from '@temporalio/worker';
import { WORKFLOW_BUNDLE } from '../src/local/build-outputs';
import { parseKeyring } from '../src/crypto/keyring';
import { FailureTypes } from '../src/domain/payment-model';
import { PAYMENT_TYPES } from '../src/domain/requests';
import { scenarioFor } from '../src/sandbox/scenarios';
import { FAILURE_CONVERTER_PATH, createDataConverter } from '../src/temporal/data-converter';
import { TEST_ENCRYPTION_KEYS } from './support/test-stack';

type History = temporal.api.history.v1.IHistory;

// The SDK's historyFromJSON fails here ("type must be a Type"): npm nests one protobufjs under @temporalio/common and
// another under @temporalio/proto. The proto JSON extension of the copy @temporalio/proto loads reads the same format.
const protojson = createRequire(require.resolve('@temporalio/proto'))('protobufjs/ext/protojson') as {
  fromJson(type: object, json: unknown, options: { ignoreUnknownFields: boolean }): History;
};

const CORPUS = join(__dirname, 'histories');
/**
 * What `npm run histories:capture` records: histories of today's workflow code, re-recorded with every change
 * (docs/development.md#the-replay-corpus).
 */
const CURRENT = 'current';
/** Sets recorded by released code, kept for good: today's code must replay them, behind its patches. */
const FROZEN = ['1.0'];
/** The sandbox scenarios, by the last two digits of a phone or account number. */
const SCENARIO_DIGITS = ['00', '11', '22', '33', '44', '55', '66', '77', '88', '99'];

interface Recorded {
  /** `<set>/<file>`: `current/…`, `1.0/…`. */
  file: string;
  /** The file's name up to `@run-<n>`: the workflow id, which a history does not carry. */
  workflowId: string;
  workflowType: string;
  history: History;
}

/** Every history of one set in test/histories/ (`current`, as `npm run histories:capture` wrote it, or a frozen one). */
function recordedHistories(set: string): Recorded[] {
  if (!existsSync(join(CORPUS, set))) return [];
  return readdirSync(join(CORPUS, set))
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const history = protojson.fromJson(
        temporal.api.history.v1.History,
        JSON.parse(readFileSync(join(CORPUS, set, file), 'utf8')),
        { ignoreUnknownFields: true },
      );
      const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
      return {
        file: `${set}/${file}`,
        workflowId: file.replace(/(@run-\d+)?\.json$/, ''),
        workflowType: started?.workflowType?.name ?? '(no start event)',
        history,
      };
    });
}

/**
 * Replays the histories on one workflow bundle with the workers' data converter (payloads stay encrypted), each on
 * the task queue it ran on: workflows refuse messages signed for another task queue, and a replay worker's
 * `workflowInfo().taskQueue` is its own (the SDK spreads the options over its made-up name, so one can be given).
 */
async function replayAll(codePath: string, recorded: Recorded[]): Promise<Map<string, ReplayResult>> {
  const results = new Map<string, ReplayResult>();
  const byQueue = new Map<string, Recorded[]>();
  for (const r of recorded) {
    const queue = r.history.events?.[0]?.workflowExecutionStartedEventAttributes?.taskQueue?.name ?? '';
    byQueue.set(queue, [...(byQueue.get(queue) ?? []), r]);
  }
  for (const [taskQueue, group] of byQueue) {
    const options: ReplayWorkerOptions = Object.assign(
      {
        workflowBundle: { codePath },
        dataConverter: createDataConverter(parseKeyring(TEST_ENCRYPTION_KEYS)),
        replayName: 'replay-test',
      },
      taskQueue ? { taskQueue } : {},
    );
    const replay = Worker.runReplayHistories(
      options,
      group.map(({ workflowId, history }) => ({ workflowId, history })),
    );
    let index = 0;
    for await (const result of replay) {
      const file = group[index++]?.file;
      if (file) results.set(file, result);
    }
  }
  return results;
}

/** Why a history does not replay: workflow type and id, run, file, and the event the SDK names; undefined if it does. */
function replayFailure(recorded: Recorded, result: ReplayResult | undefined): string | undefined {
  if (!result) return `${recorded.file} was not replayed`;
  if (!result.error) return undefined;
  // Core wraps the reason (e.g. "Nondeterminism error: … HistoryEvent(id: 5, ActivityTaskScheduled)") in a dump.
  const reason = /message: "((?:[^"\\]|\\.)*)"/.exec(result.error.message)?.[1] ?? result.error.message;
  const events = recorded.history.events?.length ?? 0;
  return (
    `${recorded.workflowType} ${recorded.workflowId} (run ${result.runId}, ${events} events, ${recorded.file}) ` +
    `does not replay (${result.error.name}): ${reason}`
  );
}

type Event = temporal.api.history.v1.IHistoryEvent;
const events = (r: Recorded): Event[] => r.history.events ?? [];
const closed = (r: Recorded) =>
  events(r).some(
    (e) =>
      e.workflowExecutionCompletedEventAttributes ||
      e.workflowExecutionFailedEventAttributes ||
      e.workflowExecutionContinuedAsNewEventAttributes,
  );

const recorded = recordedHistories(CURRENT);
const frozen = FROZEN.flatMap((set) => recordedHistories(set));

describe('recorded workflow histories replay on the current workflow code', () => {
  const results = new Map<string, ReplayResult>();

  before(async () => {
    assert.ok(existsSync(WORKFLOW_BUNDLE), 'the workflow bundle is not built: run `npm run build` first');
    // Core logs each failed replay as a warning; the assertions below say what failed.
    Runtime.install({ logger: new DefaultLogger('ERROR') });
    // One replay worker for all of them, with the workers' own bundle.
    for (const [file, result] of await replayAll(WORKFLOW_BUNDLE, [...recorded, ...frozen])) results.set(file, result);
  });

  it('holds today\'s set ("current") and the frozen ones (1.0), which stay for good', () => {
    const sets = readdirSync(CORPUS).filter((name) => statSync(join(CORPUS, name)).isDirectory());
    assert.deepEqual(sets.sort(), [...FROZEN, CURRENT].sort(), 'a frozen set is never removed or re-recorded');
    for (const set of FROZEN) {
      const files = frozen.filter((r) => r.file.startsWith(`${set}/`));
      assert.ok(files.length >= 40, `${set}: ${files.length} histories`);
      for (const type of ['paymentWorkflow', 'payoutBatchWorkflow']) {
        assert.ok(
          files.some((r) => !closed(r) && r.workflowType === type),
          `${set}: a ${type} still running`,
        );
      }
    }
  });

  it('current: every workflow type, a batch that continued as new and workflows still running', () => {
    const types = new Set(recorded.map((r) => r.workflowType));
    assert.deepEqual([...types].sort(), ['paymentWorkflow', 'payoutBatchWorkflow']);
    assert.ok(
      recorded.some((r) => events(r).some((e) => e.workflowExecutionContinuedAsNewEventAttributes)),
      'no continued-as-new run',
    );
    for (const type of ['paymentWorkflow', 'payoutBatchWorkflow']) {
      assert.ok(
        recorded.some((r) => !closed(r) && r.workflowType === type),
        `no ${type} still running`,
      );
    }
  });

  it('current: a batch paused, resumed and cancelled', () => {
    const controls = (r: Recorded) =>
      events(r).filter(
        (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'batchControl',
      ).length;
    const batches = recorded.filter((r) => r.workflowType === 'payoutBatchWorkflow');
    assert.ok(batches.reduce((n, r) => n + controls(r), 0) >= 3, 'pause, resume and cancel');
  });

  it('current: every scenario of each payment type, resolutions, late callbacks and untrusted input', () => {
    const payments = recorded.filter((r) => r.workflowType === 'paymentWorkflow');
    const named = (part: string) => payments.filter((r) => r.workflowId.includes(part));
    for (const type of PAYMENT_TYPES) {
      for (const digits of SCENARIO_DIGITS) {
        const label = `.${type}.${digits}-${scenarioFor(digits)}`;
        assert.ok(named(label).length > 0, `no ${type} payment of scenario ${digits} (${label})`);
      }
    }
    // Resolutions are `resolve` updates (POST /v1/payments makes an `initiation` update of its own).
    const resolutions = (r: Recorded) =>
      events(r).filter(
        (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'resolve',
      );
    const signals = (r: Recorded) => events(r).filter((e) => e.workflowExecutionSignaledEventAttributes);
    assert.ok(
      payments.filter((r) => resolutions(r).length > 0).length >= 5,
      'operator resolutions (33 of each type, 44 of mobile money and card; a bank credit 44 fails as not_sent)',
    );
    assert.ok(
      named('late-callback').some((r) => signals(r).length === 1 && closed(r)),
      'a callback after review, settled',
    );
    assert.ok(
      named('66-triple_callback').some((r) => signals(r).length >= 2 && closed(r)),
      'more than one callback, the later ones after the outcome',
    );
    const untrusted = payments.filter((r) =>
      events(r).some(
        (e) =>
          e.workflowExecutionFailedEventAttributes?.failure?.applicationFailureInfo?.type === FailureTypes.untrusted,
      ),
    );
    assert.ok(
      untrusted.some((r) => !events(r).some((e) => e.activityTaskScheduledEventAttributes)),
      'a copied start refused before initiation',
    );
    assert.ok(
      named('forged-callbacks').some((r) => signals(r).length >= 3),
      'forged callbacks refused before the genuine one',
    );
  });

  for (const r of [...recorded, ...frozen]) {
    it(`${r.workflowType} ${r.file}`, () => {
      const failure = replayFailure(r, results.get(r.file));
      if (failure) assert.fail(failure);
    });
  }
});

describe('a non-deterministic change fails the replay, naming the workflow and the event', () => {
  let scratch: string;
  let changedBundle: string;

  before(async () => {
    // The payment workflow with one timer before its initiation, bundled as the build does: a change the corpus was
    // not re-recorded for.
    scratch = mkdtempSync(join(tmpdir(), 'replay-changed-'));
    const loader = join(scratch, 'add-timer-loader.js');
    writeFileSync(
      loader,
      `module.exports = function (source) {
  const call = 'await effects.whileAsking(() => initiate(state,';
  const changed = source.replace(call, 'await addedSleep(1); ' + call);
  if (changed === source) throw new Error('payment-workflow.ts no longer calls initiate(state, …) so');
  return "import { sleep as addedSleep } from '@temporalio/workflow';\\n" + changed;
};\n`,
    );
    const { code } = await bundleWorkflowCode({
      workflowsPath: require.resolve('../src/workflows'),
      failureConverterPath: FAILURE_CONVERTER_PATH,
      logger: new DefaultLogger('WARN'),
      webpackConfigHook: (config) => {
        (config.module ??= {}).rules = [
          ...(config.module.rules ?? []),
          { test: /[\\/]src[\\/]workflows[\\/]payment-workflow\.ts$/, enforce: 'pre', use: [{ loader }] },
        ];
        return config;
      },
    });
    changedBundle = join(scratch, 'workflow-bundle.js');
    writeFileSync(changedBundle, code);
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('the payments of the corpus fail on it, each named with its file and the event or command that no longer matches', async (t) => {
    const payments = recorded.filter((r) => r.workflowId.includes('.mobile_money_debit.'));
    assert.ok(payments.length >= 10, 'the current mobile-money payments');
    const results = await replayAll(changedBundle, payments);
    for (const r of payments) {
      const failure = replayFailure(r, results.get(r.file));
      assert.ok(failure, `${r.file} replayed on the changed workflow`);
      const id = r.workflowId.replace(/[.]/g, '\\.');
      assert.match(
        failure,
        new RegExp(
          `^paymentWorkflow ${id} \\(run [0-9a-f-]+, \\d+ events, ${CURRENT}/\\S+\\.json\\) ` +
            // The event that no longer matches, or the local activity whose marker has no command now.
            `does not replay \\(DeterminismViolationError\\): .*(HistoryEvent\\(id: \\d+, \\w+\\)|LocalActivity\\(\\d+\\))`,
        ),
      );
    }
    const first = replayFailure(payments[0]!, results.get(payments[0]!.file));
    t.diagnostic(`for example: ${first}`);
  });
});
