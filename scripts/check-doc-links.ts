import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

// `npx tsx scripts/check-doc-links.ts`: every relative link of README.md, ARCHITECTURE.md and docs/*.md points at a
// file that exists and, with a `#fragment`, at a heading of that file (GitHub's anchors). Exits 1 naming each broken one.

const ROOT = resolve(__dirname, '..');

/** The Markdown files the check covers. */
function markdownFiles(): string[] {
  const docs = join(ROOT, 'docs');
  const inDocs = existsSync(docs) ? readdirSync(docs).filter((name) => name.endsWith('.md')) : [];
  return [
    ...['README.md', 'ARCHITECTURE.md'].map((name) => join(ROOT, name)).filter((path) => existsSync(path)),
    ...inDocs.map((name) => join(docs, name)),
  ];
}

/** The file's lines outside fenced code blocks, with their line numbers. */
function proseLines(text: string): { line: string; number: number }[] {
  let fenced = false;
  return text.split('\n').flatMap((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return [];
    }
    return fenced ? [] : [{ line, number: index + 1 }];
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(path: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { line } of proseLines(readFileSync(path, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Every broken relative link of one file, as `file:line: target (why)`. */
function brokenLinks(path: string): string[] {
  const problems: string[] = [];
  for (const { line, number } of proseLines(readFileSync(path, 'utf8'))) {
    const prose = line.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1] ?? '';
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [file = '', fragment] = target.split('#', 2);
      const resolved = file === '' ? path : resolve(dirname(path), file);
      const where = `${relative(ROOT, path)}:${number}: ${target}`;
      if (!existsSync(resolved)) {
        problems.push(`${where} (no such file)`);
      } else if (fragment !== undefined) {
        if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
          problems.push(`${where} (an anchor into a file that is not Markdown)`);
        } else if (!anchorsOf(resolved).has(fragment)) {
          problems.push(`${where} (no heading with that anchor)`);
        }
      }
    }
  }
  return problems;
}

const files = markdownFiles();
const problems = files.flatMap(brokenLinks);
for (const problem of problems) process.stderr.write(`${problem}\n`);
process.stdout.write(
  `${files.length} files checked: ${problems.length === 0 ? 'every relative link resolves' : `${problems.length} broken`}\n`,
);
if (problems.length > 0) process.exit(1);
