// A node:test reporter that writes how long each test file took, wall clock, as `seconds<TAB>file` lines: the runner's
// own test for the file, from its process's start to its end. Plain JavaScript: node loads a reporter before any
// loader, so on Node.js releases without type stripping (20, which runs `npm test` before set-up's own) a .ts one fails.
import { resolve } from 'node:path';

/**
 * Yields each file's wall-clock seconds as the runner completes it.
 * @param {AsyncIterable<import('node:test/reporters').TestEvent>} source
 */
export default async function* fileTimes(source) {
  for await (const event of source) {
    if (event.type !== 'test:complete') continue;
    const { name, file, details } = event.data;
    // The runner reports each file as a test named for its path as given; a file's own tests carry other names.
    if (file !== undefined && resolve(name) === file) yield `${(details.duration_ms / 1000).toFixed(1)}\t${file}\n`;
  }
}
