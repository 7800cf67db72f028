import { resolve } from 'node:path';

// What `npm run build` makes, and how every launcher (npm start, the test runner, scripts) runs it.

/**
 * How every launcher runs the worker (package.json's `worker` script says the same): compiled by `npm run build`,
 * because tsx's loader thread alone costs ~40 MB of RSS, and with a heap cap, because without one V8 grows its heap
 * lazily towards gigabytes before collecting and the worker's memory follows its load instead of its cache size. Its
 * young generation is kept small too: at the default (16 MB semi-spaces in each of its two V8 isolates, the main
 * thread and the workflow thread) it holds ~30 MB more under load (docs/performance.md).
 */
export const WORKER_NODE_FLAGS = ['--max-old-space-size=160', '--max-semi-space-size=4'] as const;

/**
 * The environment every launcher gives the worker (package.json's `worker` script and docker-compose.yml too): glibc's
 * malloc keeps up to eight arenas per core for the worker's threads (Node.js, V8's helpers, the Temporal core's
 * runtime), and their fragments made its memory creep ~5 MB per 1,000 batch items, past 300 MB; with two it creeps
 * about 0.5 MB (docs/performance.md, "A 100,000-item batch").
 */
export const WORKER_ENV = { MALLOC_ARENA_MAX: '2' } as const;

/** The compiled worker `npm run build` makes. */
export const WORKER_SCRIPT = resolve(__dirname, '..', '..', 'dist', 'worker.js');

export const WORKER_COMMAND = [...WORKER_NODE_FLAGS, WORKER_SCRIPT] as const;

/** The compiled operator CLI, which the image holds and the tests run (`npm run ops` runs its source through tsx). */
export const OPS_SCRIPT = resolve(__dirname, '..', '..', 'dist', 'cli', 'ops.js');

/** The workflow bundle `npm run build` makes (from `src/workflows`); the compiled worker loads it instead of bundling. */
export const WORKFLOW_BUNDLE = resolve(__dirname, '..', '..', 'dist', 'workflow-bundle.js');
