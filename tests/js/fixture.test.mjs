// fixture.test.mjs -- a database written by the release before two-parent
// Checkpoints (tests/fixtures/db/v1.sql, sqlite3's dump of it: three Spaces with history, a fork
// and an empty Space) opens with today's binary, passes fsck and shows
// exactly the hashes it was written with (v1.hashes.json).  Each test builds
// its own copy from the dump: opening a database may run migrations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDb, ok, run } from './helpers.mjs';

const FIXTURE = readFileSync(path.join(ROOT, 'tests/fixtures/db/v1.sql'), 'utf8');
const EXPECTED = JSON.parse(readFileSync(path.join(ROOT, 'tests/fixtures/db/v1.hashes.json'), 'utf8'));
// the schema version a migrated database ends at (src/store/schema_sqlite.h's last migration)
const LATEST = '21';

function copy() {
  const t = tempDb();
  const r = spawnSync('sqlite3', [t.db], { input: FIXTURE, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return t;
}

test('a database written before two-parent checkpoints passes fsck with the same hashes', () => {
  const t = copy();
  try {
    const report = ok(t.db, ['fsck', '--json']);
    assert.equal(report.ok, true, JSON.stringify(report.problems));
    assert.equal(report.spaces, 4);
    // distinct checkpoints, each once however many of the 4 Spaces hold it
    assert.equal(report.checkpoints, new Set(Object.values(EXPECTED.spaces).flat()).size);
    for (const [space, hashes] of Object.entries(EXPECTED.spaces)) {
      assert.deepEqual(ok(t.db, ['log', space, '--json']).map((c) => c.commit_hash), hashes, space);
      for (const h of hashes) assert.equal(ok(t.db, ['show', h, '--json']).commit_hash, h);
    }
  } finally {
    t.cleanup();
  }
});

test('the old history takes new work: a carried-forward commit and the fork merged back', () => {
  const t = copy();
  try {
    const out = ok(t.db, ['commit', 'trip', '--decision', 'Ryokan in Gion']);
    assert.match(out, /\n \+1 decision\n$/);
    const head = ok(t.db, ['head', 'trip', '--json']);
    assert.deepEqual(head.decisions.map((d) => d.text), ['Stay in Gion', 'Ryokan in Gion']);
    // both lines retitled their state since the fork: titles are never merged, so no conflict
    const merged = ok(t.db, ['merge', 'trip', 'trip-alt', '--json']);
    assert.equal(merged.status, 'merged');
    assert.equal(merged.checkpoint.merge_parent_hash, EXPECTED.spaces['trip-alt'][0]);
    assert.deepEqual(merged.checkpoint.decisions.map((d) => d.text),
      ['Stay in Gion', 'Ryokan in Gion', 'Take the night train']);
    assert.equal(merged.checkpoint.title, 'Merge trip-alt into trip');
    const report = ok(t.db, ['fsck', '--json']);
    assert.equal(report.ok, true, JSON.stringify(report.problems));
    // every hash written before is still there, unchanged, in its Space
    for (const [space, hashes] of Object.entries(EXPECTED.spaces)) {
      const all = new Set(ok(t.db, ['log', space, '--json']).map((c) => c.commit_hash));
      for (const h of hashes) assert.ok(all.has(h), `${space} lost ${h}`);
    }
    assert.deepEqual(ok(t.db, ['log', 'trip~2', '--first-parent', '--json']).map((c) => c.commit_hash),
      EXPECTED.spaces.trip);
  } finally {
    t.cleanup();
  }
});

// v1.bundle: `smriti export --all` of this database by the release before
// migration 8 (a checkpoint stores its change), which this one converts.
test('the old history, converted to items and chunks, exports the bundle it gave before, byte for byte', () => {
  const t = copy();
  const u = tempDb();
  try {
    const before = readFileSync(path.join(ROOT, 'tests/fixtures/db/v1.bundle'));
    const out = path.join(t.dir, 'now.bundle');
    const r = run(t.db, ['export', '--all', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /storing each item once: 7 of 7 checkpoints converted/);
    assert.ok(readFileSync(out).equals(before), 'the bundle changed');
    // and a bundle of before imports into a new store and exports the same again
    ok(u.db, ['import', path.join(ROOT, 'tests/fixtures/db/v1.bundle')]);
    const again = path.join(u.dir, 'again.bundle');
    ok(u.db, ['export', '--all', '-o', again]);
    assert.ok(readFileSync(again).equals(before), 'the bundle changed on its way through a new store');
  } finally {
    t.cleanup();
    u.cleanup();
  }
});

function sql(db, query) {
  const r = spawnSync('sqlite3', [db, query], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

test('the old history is found by search, each of its items indexed once', () => {
  const t = copy();
  try {
    const found = ok(t.db, ['search', 'Gion', '--json']);
    assert.ok(found.results.some((r) => r.text === 'Stay in Gion'), JSON.stringify(found));
    const rows = sql(t.db, 'SELECT count(*) FROM search_items');
    assert.ok(Number(rows) > 0);
    ok(t.db, ['search', 'Gion', '--json']);
    assert.equal(sql(t.db, 'SELECT count(*) FROM search_items'), rows);
  } finally {
    t.cleanup();
  }
});

// A store that already has the search index, opened after a later migration
// (here: the last ones undone, by hand, as a binary before it would find the
// store), keeps its index as it was: it used to be filled a second time.
test('a migration after the search index leaves the index rows as they were', () => {
  const t = copy();
  const orig = copy();
  try {
    ok(t.db, ['fsck', '--json']);
    const rows = sql(t.db, 'SELECT count(*) FROM search_items');
    const before = ok(t.db, ['search', 'Gion', '--json']);
    // migration 8 undone: the lists back in their columns (from the fixture as written)
    const lists = ['decisions', 'assumptions', 'tasks', 'open_questions', 'entities', 'artifacts'];
    sql(t.db, `ATTACH '${orig.db}' AS o; UPDATE commits SET ` +
      lists.map((l) => `${l} = (SELECT x.${l} FROM o.commits x WHERE x.id = main.commits.id)`).join(', ') +
      '; DETACH o; DROP TRIGGER IF EXISTS reflog_reach; DROP TRIGGER refs_reach; DROP TRIGGER refs_reach_new;' +
      ' DROP TRIGGER commits_chain_entry; DROP TABLE reach_tips; DROP TABLE chain_entries;' +
      ' DROP TRIGGER commits_chain; DROP INDEX commits_chain_exits;' +
      ' ALTER TABLE commits DROP COLUMN chain; DROP TABLE IF EXISTS chain_migration;' +
      ' DROP INDEX search_items_by_commit;' +
      ' DROP TABLE items; DROP TABLE chunks; DROP TABLE content_migration;' +
      ' ALTER TABLE commits DROP COLUMN lists;' +
      ' DROP INDEX commits_hash_unique; CREATE INDEX commits_by_hash ON commits(commit_hash);' +
      ' DROP TABLE IF EXISTS history_collapse;' +
      ' DROP TABLE generation_events; ALTER TABLE generations DROP COLUMN stop_requested;' +
      ' DROP TABLE servers; DROP INDEX generations_running_owner; DROP INDEX draft_jobs_unfinished_owner;' +
      ' ALTER TABLE generations DROP COLUMN owner_id; ALTER TABLE draft_jobs DROP COLUMN owner_id;' +
      ' ALTER TABLE turns DROP COLUMN parent_seq; ALTER TABLE sessions DROP COLUMN leaf_seq;' +
      ' ALTER TABLE sessions DROP COLUMN fork_seq;' +
      ' DROP TABLE handoffs; DROP TABLE grants; DROP TABLE tokens; DROP TABLE users; DROP TABLE auth_state;' +
      ' ALTER TABLE turns DROP COLUMN author; PRAGMA user_version = 4');
    assert.deepEqual(ok(t.db, ['search', 'Gion', '--json']), before);
    assert.equal(sql(t.db, 'PRAGMA user_version'), LATEST);
    assert.equal(sql(t.db, 'SELECT count(*) FROM search_items'), rows);
  } finally {
    t.cleanup();
    orig.cleanup();
  }
});

// The shared history (docs/storage.md): the fork's copies of trip's two
// older checkpoints become the one row each, and every hash and log reads
// as it was written.
function sharedHistoryHolds(db) {
  assert.equal(sql(db, 'PRAGMA user_version'), LATEST);
  assert.equal(sql(db, 'SELECT count(*) FROM commits'), '7');
  assert.equal(sql(db, 'SELECT count(DISTINCT commit_hash) FROM commits'), '7');
  const report = ok(db, ['fsck', '--json']);
  assert.equal(report.ok, true, JSON.stringify(report.problems));
  for (const [space, hashes] of Object.entries(EXPECTED.spaces)) {
    assert.deepEqual(ok(db, ['log', space, '--json']).map((c) => c.commit_hash), hashes, space);
    for (const h of hashes) assert.equal(ok(db, ['show', h, '--json']).commit_hash, h);
  }
  // the checkpoint the fork inherited is found once, held by both Spaces
  const found = ok(db, ['search', 'Helsinki', '--json']).results.filter((r) => /Helsinki/.test(r.text));
  assert.equal(found.length, 1, JSON.stringify(found));
  assert.deepEqual(found[0].spaces.map((s) => s.space).sort(), ['trip', 'trip-alt']);
}

test('the migration to one shared history collapses the fork\'s copies by hash, with a progress line', () => {
  const t = copy();
  try {
    assert.equal(sql(t.db, 'SELECT count(*) FROM commits'), '9');
    const r = run(t.db, ['space', 'list']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^smriti: sharing checkpoint history: row \d+ of \d+$/m);
    sharedHistoryHolds(t.db);
  } finally {
    t.cleanup();
  }
});

// tests/fixtures/db/v1.bundle: `smriti export --all` of v1.sql by the release before the shared
// history (commit 3a3c4a1), which kept a copy of trip's history in trip-alt.
test('the migrated fixture exports the very bundle the release before wrote', () => {
  const t = copy();
  try {
    assert.equal(ok(t.db, ['export', '--all']),
      readFileSync(path.join(ROOT, 'tests/fixtures/db/v1.bundle'), 'utf8'));
    assert.equal(sql(t.db, 'SELECT count(*) FROM commits'), '7');
  } finally {
    t.cleanup();
  }
});

test('a migration to the shared history killed (-9) between batches resumes where it stopped', () => {
  const t = copy();
  try {
    const env = { SMRITI_TEST_COLLAPSE_BATCH: '1', SMRITI_TEST_COLLAPSE_KILL: '5' };
    const killed = run(t.db, ['space', 'list'], { env });
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    // five one-row batches done: rows 1..5 collapsed, the schema not yet moved on
    assert.equal(sql(t.db, 'PRAGMA user_version'), '9');
    assert.equal(sql(t.db, 'SELECT next_id FROM history_collapse'), '5');
    const again = run(t.db, ['space', 'list'], { env: { SMRITI_TEST_COLLAPSE_BATCH: '1' } });
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /row [1-5] of/);
    sharedHistoryHolds(t.db);
  } finally {
    t.cleanup();
  }
});

// Migration 13 (docs/storage.md, "Chains"): the rows written before it get
// their chain in batches, each with its cursor; a run killed between them
// goes on from the cursor, and every Space then reaches what it did.
test('the chains of the rows written before migration 15: killed (-9) between batches, resumed', () => {
  const t = copy();
  try {
    // migrated whole first (a kill before the search index is filled loses
    // that fill, as it would in the conversion of migration 11), then its
    // chains undone as a database written before migration 15 has none
    ok(t.db, ['space', 'list']);
    sql(t.db, 'UPDATE commits SET chain = NULL; INSERT INTO chain_migration (id, next_id, last_id)' +
      ' SELECT 1, 0, MAX(id) FROM commits');
    const env = { SMRITI_TEST_CHAIN_BATCH: '2', SMRITI_TEST_CHAIN_KILL: '2' };
    const killed = run(t.db, ['space', 'list'], { env });
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    assert.equal(sql(t.db, 'PRAGMA user_version'), LATEST);
    assert.equal(sql(t.db, 'SELECT next_id FROM chain_migration'), '4');
    assert.equal(sql(t.db, 'SELECT count(*) FROM commits WHERE chain IS NULL AND id <= 4'), '0');
    assert.ok(Number(sql(t.db, 'SELECT count(*) FROM commits WHERE chain IS NULL')) > 0);
    const again = run(t.db, ['space', 'list'], { env: { SMRITI_TEST_CHAIN_BATCH: '2' } });
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /chains of the history: row [1-4] of/);
    assert.match(again.stderr, /chains of the history: row \d+ of \d+$/m);
    assert.equal(sql(t.db, 'SELECT count(*) FROM commits WHERE chain IS NULL'), '0');
    assert.equal(sql(t.db, 'SELECT count(*) FROM chain_migration'), '0', 'the cursor goes once all are done');
    sharedHistoryHolds(t.db);
    // trip-alt was forked from trip: it reaches trip's checkpoints up to the fork, by hash
    for (const h of EXPECTED.spaces['trip-alt']) {
      assert.equal(ok(t.db, ['log', 'trip-alt', '--json']).some((c) => c.commit_hash === h), true);
    }
  } finally {
    t.cleanup();
  }
});
