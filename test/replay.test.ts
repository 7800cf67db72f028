import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { ReplayResult } from '@temporalio/worker';
import { WORKFLOW_BUNDLE } from '../src/local/build-outputs';
import { parseKeyring } from '../src/crypto/keyring';
import { createDataConverter } from '../src/temporal/data-converter';
import { TEST_ENCRYPTION_KEYS } from './support/stack';

type History = temporal.api.history.v1.IHistory;

// The SDK's historyFromJSON fails here ("type must be a Type"): npm nests one protobufjs under @temporalio/common and
// another under @temporalio/proto. The proto JSON extension of the copy @temporalio/proto loads reads the same format.
const protojson = createRequire(require.resolve('@temporalio/proto'))('protobufjs/ext/protojson') as {
  fromJson(type: object, json: unknown, options: { ignoreUnknownFields: boolean }): History;
};

const DIRECTORY = join(__dirname, 'histories');

interface Recorded {
  file: string;
  /** The file's name up to `@run-<n>`: the workflow id, which a history does not carry. */
  workflowId: string;
  workflowType: string;
  history: History;
}

/** Every history in test/histories, as `npm run histories:capture` wrote them. */
function recordedHistories(): Recorded[] {
  return readdirSync(DIRECTORY)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const history = protojson.fromJson(
        temporal.api.history.v1.History,
        JSON.parse(readFileSync(join(DIRECTORY, file), 'utf8')),
        { ignoreUnknownFields: true },
      );
      const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
      return {
        file,
        workflowId: file.replace(/(@run-\d+)?\.json$/, ''),
        workflowType: started?.workflowType?.name ?? '(no start event)',
        history,
      };
    });
}

describe('recorded workflow histories replay on the current workflow code', () => {
  const recorded = recordedHistories();
  const results = new Map<string, ReplayResult>();

  before(async () => {
    assert.ok(existsSync(WORKFLOW_BUNDLE), 'the workflow bundle is not built: run `npm run build` first');
    Runtime.install({ logger: new DefaultLogger('WARN') });
    // One replay worker for all of them, with the workers' own bundle and data converter (payloads stay encrypted).
    const replay = Worker.runReplayHistories(
      {
        workflowBundle: { codePath: WORKFLOW_BUNDLE },
        dataConverter: createDataConverter(parseKeyring(TEST_ENCRYPTION_KEYS)),
        replayName: 'replay-test',
      },
      recorded.map(({ workflowId, history }) => ({ workflowId, history })),
    );
    let index = 0;
    for await (const result of replay) {
      const file = recorded[index++]?.file;
      if (file) results.set(file, result);
    }
  });

  it('holds every workflow type, a batch that continued as new and workflows still running', () => {
    const types = new Set(recorded.map((r) => r.workflowType));
    assert.deepEqual([...types].sort(), ['batchItemsWorkflow', 'paymentWorkflow', 'payoutBatchWorkflow']);
    assert.ok(
      recorded.some((r) => r.history.events?.some((e) => e.workflowExecutionContinuedAsNewEventAttributes)),
      'no continued-as-new run',
    );
    const closed = (r: Recorded) =>
      r.history.events?.some(
        (e) => e.workflowExecutionCompletedEventAttributes || e.workflowExecutionContinuedAsNewEventAttributes,
      );
    assert.ok(
      recorded.some((r) => !closed(r) && r.workflowType === 'paymentWorkflow'),
      'no payment still running',
    );
    assert.ok(
      recorded.some((r) => !closed(r) && r.workflowType === 'payoutBatchWorkflow'),
      'no batch still running',
    );
  });

  for (const { file, workflowId, workflowType, history } of recorded) {
    it(`${workflowType} ${file}`, () => {
      const result = results.get(file);
      assert.ok(result, `${file} was not replayed`);
      const events = history.events?.length ?? 0;
      if (result.error) {
        // Core wraps the reason (e.g. "Nondeterminism error: … HistoryEvent(id: 5, ActivityTaskScheduled)") in a dump.
        const reason = /message: "((?:[^"\\]|\\.)*)"/.exec(result.error.message)?.[1] ?? result.error.message;
        assert.fail(
          `${workflowType} ${workflowId} (run ${result.runId}, ${events} events, ${file}) ` +
            `does not replay (${result.error.name}): ${reason}`,
        );
      }
    });
  }
});
