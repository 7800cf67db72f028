/**
 * Every patch id the workflows pass to Temporal's patch call, one per change to workflow code. None before 1.0: until 1.0 is
 * frozen a change re-records test/histories/current instead; from 1.0 on every change goes behind a patch listed
 * here, and the 1.0 corpus keeps replaying in CI (docs/development.md#the-replay-corpus).
 */
export const PATCHES = {} as const satisfies Record<string, string>;
