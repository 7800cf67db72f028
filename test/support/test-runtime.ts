import type { Logger } from 'pino';
import { createLogger } from '../../src/logging';
import { installWorkerRuntime } from '../../src/temporal/worker-runtime';
import { freePort } from '../../src/local/free-port';
import { noteNondeterminism } from './failed-tasks';

let installed: Promise<string> | undefined;

/**
 * Installs this test process's Temporal Runtime as src/worker.ts does, once: logs at `warn` unless the first caller
 * hands in its own logger, and the worker metrics of every in-process worker on a free port. Resolves to that
 * Prometheus endpoint's URL.
 */
export function installTestRuntime(logger?: Logger): Promise<string> {
  installed ??= freePort().then((port) => {
    const address = `127.0.0.1:${port}`;
    installWorkerRuntime({
      logger: logger ?? createLogger('worker', 'warn', false),
      metricsAddress: address,
      onNondeterminism: noteNondeterminism,
    });
    return `http://${address}/metrics`;
  });
  return installed;
}
