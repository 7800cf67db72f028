import { DefaultFailureConverter } from '@temporalio/common';

// Loaded by path (client, worker and the workflow bundle): error messages and stack traces travel as an
// encoded payload, so the payload codec encrypts them too.
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
