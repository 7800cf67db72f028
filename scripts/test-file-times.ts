// A node:test reporter that writes how long each test file took, wall clock, as `seconds<TAB>file` lines: from the
// last event before its first (files run one at a time) to its last, so its process start and set-up count.
import type { TestEvent } from 'node:test/reporters';

/** Yields each file's wall-clock seconds once the run ends. */
export default async function* fileTimes(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const spans = new Map<string, { start: number; end: number }>();
  let lastEventAt = Date.now();
  for await (const event of source) {
    // The runner queues every file at once: a file begins with its first test.
    if (event.type === 'test:enqueue' || event.type === 'test:dequeue') continue;
    const file = event.data && 'file' in event.data ? event.data.file : undefined;
    if (!file) continue;
    const now = Date.now();
    const span = spans.get(file) ?? { start: lastEventAt, end: now };
    span.end = now;
    spans.set(file, span);
    lastEventAt = now;
  }
  for (const [file, { start, end }] of spans) yield `${((end - start) / 1000).toFixed(1)}\t${file}\n`;
}
