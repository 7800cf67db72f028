import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TransactionStore } from '../src/sandbox/store';

function allocate(store: TransactionStore, count: number): number[] {
  return Array.from({ length: count }, () => store.allocateId());
}

describe('sandbox transaction ids', () => {
  it('differ between two fresh sandboxes started in the same millisecond', () => {
    const first = new TransactionStore(undefined, 3);
    const second = new TransactionStore(undefined, 7);
    const ids = [...allocate(first, 200), ...allocate(second, 200)];
    assert.equal(new Set(ids).size, 400);
    assert.ok(ids.every((id) => Number.isSafeInteger(id) && id > Date.now()));
  });

  it('grow within a store and keep its lane, even when allocated faster than the clock ticks', () => {
    const ids = allocate(new TransactionStore(undefined, 999), 50);
    assert.ok(ids.every((id, index) => id % 1000 === 999 && (index === 0 || id > ids[index - 1]!)));
  });

  it('go on growing in the same lane after a restart from the data file', () => {
    const directory = mkdtempSync(join(tmpdir(), 'sandbox-ids-'));
    try {
      const dataFile = join(directory, 'sandbox.json');
      const before = allocate(new TransactionStore(dataFile, 42), 3);
      const after = new TransactionStore(dataFile, 500).allocateId();
      assert.ok(after > before[2]!);
      assert.equal(after % 1000, 42);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
