// A node:test reporter that writes how long each test file took, wall clock, as `seconds<TAB>file` lines: the runner's
// own test for the file, from its process's start to its end.
import { resolve } from 'node:path';
import type { TestEvent } from 'node:test/reporters';

/** Yields each file's wall-clock seconds as the runner completes it. */
export default async function* fileTimes(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  for await (const event of source) {
    if (event.type !== 'test:complete') continue;
    const { name, file, details } = event.data;
    // The runner reports each file as a test named for its path as given; a file's own tests carry other names.
    if (file !== undefined && resolve(name) === file) yield `${(details.duration_ms / 1000).toFixed(1)}\t${file}\n`;
  }
}
