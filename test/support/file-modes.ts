import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Every path under `dir` that another user could read or list: group or others bits beyond a directory's search. */
export function exposedPaths(dir: string): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    // A running process's short-lived file (SQLite's journal) may be gone between the listing and the look.
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (!stat || stat.isSymbolicLink()) return;
    // A directory may keep its group's search bit (PostgreSQL's OS user passes through, as root): no listing.
    if (stat.mode & (stat.isDirectory() ? 0o067 : 0o077)) found.push(`${path} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
  return found;
}
