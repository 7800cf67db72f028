import { resolve } from 'node:path';

// What `npm run build` makes, and how every launcher (npm start, the test runner, scripts) runs it.

/**
 * How every launcher runs the worker (package.json's `worker` script says the same): compiled by `npm run build`,
 * because tsx's loader thread alone costs ~40 MB of RSS, and with a heap cap, because without one V8 grows its heap
 * lazily towards gigabytes before collecting and the worker's memory follows its load instead of its cache size.
 */
export const WORKER_COMMAND = [
  '--max-old-space-size=160',
  resolve(__dirname, '..', '..', 'dist', 'worker.js'),
] as const;

/** The workflow bundle `npm run build` makes (from `src/workflows`); the compiled worker loads it instead of bundling. */
export const WORKFLOW_BUNDLE = resolve(__dirname, '..', '..', 'dist', 'workflow-bundle.js');
