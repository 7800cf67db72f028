import assert from 'node:assert/strict';
import { runInNewContext } from 'node:vm';
import { after, before, it } from 'node:test';
import type { Client } from '@temporalio/client';
import { paymentRequest } from './support/request-builders';
import { connectTestClient, startStack } from './support/test-stack';
import type { Stack } from './support/test-stack';

// The SDK keeps a stack trace of every promise a workflow makes, for the Web UI's Stack Trace tab (the `__stack_trace`
// query); the worker skips that work unless WORKER_WORKFLOW_STACK_TRACE_LIMIT asks for frames.

let client: Client;
const stacks: Stack[] = [];

before(async () => {
  client = await connectTestClient();
});
after(async () => {
  await client?.connection.close();
  for (const stack of stacks) await stack.close();
});

/** The Web UI's Stack Trace tab of a payment that waits for its callback, on a worker given `env`. */
async function waitingPaymentStackTrace(env: Record<string, string>): Promise<string> {
  const stack = await startStack({ env });
  stacks.push(stack);
  const created = await stack.api('POST', '/v1/payments', paymentRequest('mobile_money_debit', '33'));
  assert.equal(created.status, 201, JSON.stringify(created.body));
  await stack.waitForStatus(created.body.id, ['pending']);
  const trace = await client.workflow.getHandle(created.body.id).query<string>('__stack_trace');
  await stack.close();
  stacks.pop();
  return trace;
}

it('a workflow captures no stack trace by default, and WORKER_WORKFLOW_STACK_TRACE_LIMIT brings the Stack Trace tab back', async () => {
  const none = await waitingPaymentStackTrace({});
  assert.doesNotMatch(none, /^\s+at /m, 'no frame is captured by default');
  // Only the sandboxes made after the worker started take the limit: this process's own errors keep their frames.
  assert.equal(Error.stackTraceLimit, 10);
  assert.equal(runInNewContext('Error.stackTraceLimit'), 0);
  assert.ok(new Error('here').stack?.includes('workflow-stack-traces.test.ts'));

  const trace = await waitingPaymentStackTrace({ WORKER_WORKFLOW_STACK_TRACE_LIMIT: '10' });
  assert.match(trace, /^\s+at waitForOutcome /m, 'the payment waits for its callback in waitForOutcome');
  assert.equal(runInNewContext('Error.stackTraceLimit'), 10);
});
