import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { status } from '@grpc/grpc-js';
import { ServiceError } from '@temporalio/client';
import { retryWhileNotReady } from '../src/payments/workflow-calls';

/** A gRPC error as the client wraps it. */
function grpcError(code: status, details: string): ServiceError {
  const cause = Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });
  return new ServiceError('Workflow Update failed', { cause });
}

const dropped = () =>
  grpcError(
    status.FAILED_PRECONDITION,
    'Unable to perform workflow execution update due to unexpected workflow task failure.',
  );

describe('retryWhileNotReady', () => {
  it('re-sends an Update the server dropped because the workflow task failed, with growing waits', async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = await retryWhileNotReady(
      () => {
        calls += 1;
        return calls < 4 ? Promise.reject(dropped()) : Promise.resolve('resumed');
      },
      30_000,
      (ms) => Promise.resolve(waits.push(ms)),
    );
    assert.equal(result, 'resumed');
    assert.equal(calls, 4);
    assert.deepEqual(waits, [250, 500, 1000]);
  });

  it('gives up with the last error once the budget is spent', async () => {
    let calls = 0;
    await assert.rejects(
      retryWhileNotReady(() => {
        calls += 1;
        return Promise.reject(dropped());
      }, 600),
      ServiceError,
    );
    assert.equal(calls, 2, 'waits of 250 ms then 500 ms: the second would end past the 600 ms budget');
  });

  it('does not retry other errors, such as Temporal being unreachable', async () => {
    let calls = 0;
    await assert.rejects(
      retryWhileNotReady(
        () => {
          calls += 1;
          return Promise.reject(grpcError(status.UNAVAILABLE, 'connection refused'));
        },
        30_000,
        () => Promise.resolve(),
      ),
      /Workflow Update failed/,
    );
    assert.equal(calls, 1);
  });
});
