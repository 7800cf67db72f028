import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PATCHES } from '../src/workflows/patches';
import type { WorkflowPatch } from '../src/workflows/patches';

// From 1.0 on, a change to workflow code goes behind a patch listed in src/workflows/patches.ts, and the 1.0 replay set
// (test/histories/1.0, replayed by replay.test.ts) proves the histories recorded before it still replay.

const WORKFLOWS = join(__dirname, '..', 'src', 'workflows');
const FROZEN_ON = '2026-11-25';

describe('workflow patches since 1.0', () => {
  it('are listed once each, dated on or after the freeze, with what changed and when they may go', () => {
    const listed: readonly WorkflowPatch[] = PATCHES;
    const ids = listed.map((patch) => patch.id);
    assert.equal(new Set(ids).size, ids.length, `a patch id used twice: ${ids.join(', ')}`);
    for (const patch of listed) {
      assert.match(patch.id, /^[a-z0-9-]+$/, `${patch.id}: lower-case words and dashes`);
      assert.match(patch.date, /^\d{4}-\d{2}-\d{2}$/, `${patch.id}: an ISO date`);
      assert.ok(patch.date >= FROZEN_ON, `${patch.id}: dated before 1.0 was frozen`);
      assert.ok(patch.change.length > 10 && patch.deprecateWhen.length > 10, `${patch.id}: says what and when`);
    }
  });

  it("are taken only through patches.ts: no workflow calls Temporal's patched or deprecatePatch itself", () => {
    const direct = readdirSync(WORKFLOWS)
      .filter((file) => file.endsWith('.ts') && file !== 'patches.ts')
      .filter((file) => /\b(patched|deprecatePatch)\s*\(/.test(readFileSync(join(WORKFLOWS, file), 'utf8')));
    assert.deepEqual(direct, [], 'use isPatched / deprecated from patches.ts, for a listed id');
  });
});
