// bench-scale.test.mjs -- the database bench/scale.sh measures is one the
// CLI takes as any other: `bench-scale build` (bench/scale_bench.c, the
// store's import in batches) at a small size, on SQLite and, when
// SMRITI_TEST_PG is set, PostgreSQL, passes fsck (every hash recomputed
// from what is stored), and holds the reflog rows committing would have
// written (the search rows: the store's conformance test
// bulk_import_writes_the_rows_commits_write).  The binary is built with the others (scripts/test:
// make ... build/bench-scale).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { BUILD, SMRITI_FULL, childEnv, ok, pgSchemaDb, tempDb } from './helpers.mjs';

const BENCH = path.join(BUILD, 'bench-scale');
const PG = process.env.SMRITI_TEST_PG;
// batches of 100 (SCALE_BATCH): most start on a parent the store holds already
const BIG = 450, FORK = 120, SPACES = 30;

function build(db) {
  assert.ok(existsSync(BENCH), `${BENCH} is missing: make ${path.basename(BUILD)}/bench-scale`);
  const r = spawnSync(BENCH, ['build', db, String(BIG), String(FORK), String(SPACES)],
    { encoding: 'utf8', env: childEnv({ SCALE_BATCH: '100' }) });
  assert.equal(r.status, 0, r.stderr);
}

function checkBuilt(db) {
  const report = ok(db, ['fsck', '--json'], { bin: SMRITI_FULL });
  assert.equal(report.ok, true, JSON.stringify(report));
  assert.equal(report.checkpoints, BIG + FORK + SPACES);
  const spaces = ok(db, ['space', 'list', '--json'], { bin: SMRITI_FULL });
  assert.equal(spaces.length, SPACES + 2);
  // each checkpoint's move is in the reflog as a commit records it
  const reflog = ok(db, ['reflog', 'fork-src', '--limit', String(FORK + 10), '--json'], { bin: SMRITI_FULL });
  const entries = reflog;
  assert.equal(entries.length, FORK + 1);
  assert.match(entries[0].reason, /^commit: step /);
  assert.equal(entries.at(-1).action, 'create');
  const log = ok(db, ['log', 'big', '--limit', '3', '--json'], { bin: SMRITI_FULL });
  assert.equal(log.length, 3);
}

test('bench-scale build: a small database on SQLite passes fsck', () => {
  const t = tempDb();
  try {
    build(t.db);
    checkBuilt(t.db);
  } finally {
    t.cleanup();
  }
});

test('bench-scale build: a small database on PostgreSQL passes fsck',
  { skip: PG ? false : 'SMRITI_TEST_PG is not set' }, () => {
    const s = pgSchemaDb(PG, 'scale');
    try {
      build(s.db);
      checkBuilt(s.db);
    } finally {
      s.cleanup();
    }
  });
