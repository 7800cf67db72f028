import { setFlagsFromString } from 'node:v8';

/**
 * Sets how many frames an error or a promise made inside a workflow's sandbox captures, for the workflow threads and
 * sandboxes made from now on; this process's own code keeps its limit.
 */
export function limitWorkflowStackTraces(frames: number): void {
  // The SDK records a stack trace of every promise a workflow makes (the Web UI's Stack Trace tab): a third of the
  // workflow thread's time (docs/performance.md#profile). It freezes the sandbox's globals before any workflow code
  // runs, so the limit can only be V8's default, which each new context takes when it is made.
  setFlagsFromString(`--stack-trace-limit=${frames}`);
}
