import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';

/** Where browser tests save screenshots (git-ignored). */
export const ARTIFACTS_DIR = resolve(__dirname, '..', '..', 'test-artifacts');

/** Debian's Chromium, installed by `scripts/setup.mjs` before `npm test`; `CHROMIUM_PATH` points elsewhere. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(executablePath)) {
    throw new Error(`no Chromium at ${executablePath}: run \`npm run setup\` (it installs Debian's chromium)`);
  }
  // Root in CI cannot use Chromium's user-namespace sandbox.
  return chromium.launch({ executablePath, args: ['--no-sandbox'] });
}

/** The path of a screenshot under test-artifacts/<group>/, creating the folder. */
export function artifactPath(group: string, name: string): string {
  const dir = join(ARTIFACTS_DIR, group);
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}
