import type { Lifecycle } from './lifecycle';
import type { RequestLog } from './request-log';
import type { TransactionStore } from './store';
import type { Timers } from './timers';

/** What the sandbox's routes share. */
export interface SandboxContext {
  store: TransactionStore;
  requests: RequestLog;
  lifecycle: Lifecycle;
  timers: Timers;
  slowResponseMs: number;
  /** Base of the threeds_url handed out; known once the server listens. */
  publicUrl: () => string;
}
