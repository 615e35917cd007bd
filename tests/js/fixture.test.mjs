// fixture.test.mjs -- a database written by the release before two-parent
// Checkpoints (tests/fixtures/db/v1.db: three Spaces with history, a fork
// and an empty Space) opens with today's binary, passes fsck and shows
// exactly the hashes it was written with (v1.hashes.json).  The fixture is
// copied first: opening a database may run migrations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDb, ok } from './helpers.mjs';

const FIXTURE = path.join(ROOT, 'tests/fixtures/db/v1.db');
const EXPECTED = JSON.parse(readFileSync(path.join(ROOT, 'tests/fixtures/db/v1.hashes.json'), 'utf8'));

function copy() {
  const t = tempDb();
  copyFileSync(FIXTURE, t.db);
  return t;
}

test('a database written before two-parent checkpoints passes fsck with the same hashes', () => {
  const t = copy();
  try {
    const report = ok(t.db, ['fsck', '--json']);
    assert.equal(report.ok, true, JSON.stringify(report.problems));
    assert.equal(report.spaces, 4);
    assert.equal(report.checkpoints, 9);
    for (const [space, hashes] of Object.entries(EXPECTED.spaces)) {
      assert.deepEqual(ok(t.db, ['log', space, '--json']).map((c) => c.commit_hash), hashes, space);
      for (const h of hashes) assert.equal(ok(t.db, ['show', h, '--json']).commit_hash, h);
    }
  } finally {
    t.cleanup();
  }
});
