import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { it } from 'node:test';
import type { Client } from '@temporalio/client';
import pino from 'pino';
import { nondeterminismAlert } from '../src/temporal/nondeterminism-alert';
import { nondeterminismIn } from '../src/temporal/worker-runtime';

const FAILURE =
  'Failure { failure: Some(Failure { message: "[TMPRL1100] Nondeterminism error: Missing associated machine for ' +
  'LocalActivity(8)", source: "", stack_trace: "" }), force_cause: NonDeterministicError }';

/** A client whose visibility knows one run, and counts what it is asked. */
function fakeClient(queries: string[]): Client {
  const workflowService = {
    listWorkflowExecutions: ({ query }: { query: string }) => {
      queries.push(query);
      const known = query.includes("'run-1'");
      return Promise.resolve({
        executions: known ? [{ execution: { workflowId: 'batch-acme-1' }, type: { name: 'payoutBatchWorkflow' } }] : [],
      });
    },
  };
  return { options: { namespace: 'default' }, workflowService } as unknown as Client;
}

function capturingLogger(lines: Record<string, unknown>[]): pino.Logger {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return pino({ level: 'info' }, stream);
}

it('names the workflow of a run that fails its task for nondeterminism, once per run, and nothing else', async () => {
  const queries: string[] = [];
  const lines: Record<string, unknown>[] = [];
  const alert = nondeterminismAlert(() => fakeClient(queries), capturingLogger(lines));
  // As the worker's runtime hands core's log lines on (installWorkerRuntime's onNondeterminism).
  const coreLine = (runId: string, failure: string, message = 'Failing workflow task') => {
    const failed = nondeterminismIn(message, { runId, failure });
    if (failed) alert(failed.runId, failed.reason);
  };

  coreLine('run-1', FAILURE);
  coreLine('run-1', FAILURE);
  coreLine('run-2', 'Failure { failure: Some(Failure { message: "a payload that is not encrypted was refused" }) }');
  coreLine('run-4', FAILURE, 'Workflow task duration exceeded 5 seconds');
  coreLine('run-3', FAILURE);
  await new Promise((resolve) => setTimeout(resolve, 50));

  assert.deepEqual(queries, ["RunId = 'run-1'", "RunId = 'run-3'"], 'one lookup per run, only for nondeterminism');
  assert.equal(lines.length, 2);
  assert.equal(lines[0]?.level, 50);
  assert.equal(lines[0]?.runId, 'run-1');
  assert.equal(lines[0]?.workflowId, 'batch-acme-1');
  assert.equal(lines[0]?.workflowType, 'payoutBatchWorkflow');
  assert.equal(lines[0]?.reason, '[TMPRL1100] Nondeterminism error: Missing associated machine for LocalActivity(8)');
  assert.match(String(lines[0]?.msg), /nondeterminism/);
  // A run visibility does not know yet is still logged, by its run.
  assert.equal(lines[1]?.runId, 'run-3');
  assert.equal(lines[1]?.workflowId, undefined);
});

it('stays quiet until the worker has a client', () => {
  const lines: Record<string, unknown>[] = [];
  const alert = nondeterminismAlert(() => undefined, capturingLogger(lines));
  alert('run-1', '[TMPRL1100] Nondeterminism error: Missing associated machine for LocalActivity(8)');
  assert.equal(lines.length, 0);
});
