// The twin: the least a payment-like workflow can be on Temporal. One no-op activity (the initiation), an Update that
// answers once it is done (as the payment's initiation Update does), one signal (the callback), then it completes.
import { condition, defineSignal, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';

export const twinReady = defineUpdate<void>('twinReady');
export const twinGo = defineSignal('twinGo');

export interface TwinActivities {
  noop(): Promise<void>;
}

const { noop } = proxyActivities<TwinActivities>({ startToCloseTimeout: '10s', retry: { maximumAttempts: 1 } });

/** One no-op activity, then waits for the client's signal, then completes. */
export async function twinWorkflow(): Promise<string> {
  let ready = false;
  let go = false;
  setHandler(twinReady, async () => {
    await condition(() => ready);
  });
  setHandler(twinGo, () => {
    go = true;
  });
  await noop();
  ready = true;
  await condition(() => go);
  return 'done';
}
