// history.test.mjs -- time travel from the command line: `smriti reflog`,
// SPACE@{N} and SPACE@{DATE} wherever a REF goes, `restore SPACE @{1}`,
// soft deletion recovered through the reflog, and `gc --prune`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb, ok, run } from './helpers.mjs';

let t;
before(() => { t = tempDb(); });
after(() => t.cleanup());

const commit = (space, title) => ok(t.db, ['commit', space, '--title', title, '--decision', title, '--json']);

test('reflog lists every move with who and why, and @{N} names each', () => {
  ok(t.db, ['space', 'create', 'tt']);
  const one = commit('tt', 'one');
  const two = commit('tt', 'two');
  ok(t.db, ['space', 'rename', 'tt', 'tt2'], { env: { SMRITI_AUTHOR: 'renamer' } });
  const log = ok(t.db, ['reflog', 'tt2', '--json']);
  assert.deepEqual(log.map((e) => e.action), ['rename', 'commit', 'commit', 'create']);
  assert.equal(log[0].reason, 'rename: tt -> tt2');
  assert.equal(log[0].actor, 'renamer');
  assert.equal(log[1].new, two.commit_hash);
  assert.equal(log[1].old, one.commit_hash);
  assert.equal(log[1].actor, 'tester');
  assert.equal(log[2].reason, 'commit (initial): one');
  assert.equal(ok(t.db, ['show', 'tt2@{2}', '--json']).title, 'one');
  assert.equal(ok(t.db, ['show', 'tt2@{now}', '--json']).title, 'two');
  assert.equal(ok(t.db, ['log', 'tt2@{1}', '--json']).length, 2);
  assert.match(ok(t.db, ['reflog', 'tt2']), /^[0-9a-f]{12} tt2@\{0\}: rename: tt -> tt2 {2}\(renamer, /);
  assert.equal(ok(t.db, ['reflog', 'tt2', '--limit', '1', '--json']).length, 1);
});

test('dates before the Space and nonsense are clear errors', () => {
  const early = run(t.db, ['show', 'tt2@{2001-01-01}']);
  assert.equal(early.code, 3);
  assert.match(early.stderr, /did not exist yet at 2001-01-01T00:00:00Z/);
  const bad = run(t.db, ['show', 'tt2@{next tuesday}']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /is not a number or a date/);
  const far = run(t.db, ['show', 'tt2@{99}']);
  assert.equal(far.code, 3);
  assert.match(far.stderr, /goes back past the start of the reflog/);
});

test('restore SPACE @{1} undoes the last move', () => {
  const c = ok(t.db, ['restore', 'tt2', '@{2}', '--json']);
  assert.equal(c.title, 'one');
  assert.equal(ok(t.db, ['reflog', 'tt2', '--json'])[0].action, 'restore');
  assert.equal(ok(t.db, ['show', 'tt2@{1}', '--json']).title, 'two');
});

test('a deleted Space is recoverable through its reflog until gc --prune', () => {
  ok(t.db, ['space', 'create', 'doomed']);
  const last = commit('doomed', 'keep me');
  ok(t.db, ['space', 'delete', 'doomed', '--yes']);
  assert.equal(run(t.db, ['head', 'doomed']).code, 3);
  assert.ok(!ok(t.db, ['space', 'list', '--json']).some((s) => s.name === 'doomed'));
  assert.equal(ok(t.db, ['reflog', 'doomed', '--json'])[0].action, 'delete');
  assert.equal(ok(t.db, ['show', 'doomed@{1}', '--json']).commit_hash, last.commit_hash);
  const gc = ok(t.db, ['gc', '--json']);
  assert.equal(gc.deleted.length, 1);
  assert.equal(gc.pruned, false);
  ok(t.db, ['fork', 'doomed@{1}', '--into', 'doomed']);
  assert.equal(ok(t.db, ['head', 'doomed', '--json']).commit_hash, last.commit_hash);
  assert.equal(ok(t.db, ['gc', '--prune=2001-01-01', '--json']).pruned_spaces, 0);
  assert.equal(ok(t.db, ['gc', '--prune', '--json']).pruned_spaces, 1);
  assert.equal(ok(t.db, ['gc', '--json']).deleted.length, 0);
  // the fork kept its own copy
  assert.equal(ok(t.db, ['head', 'doomed', '--json']).title, 'keep me');
  assert.equal(run(t.db, ['gc', '--prune=someday']).code, 2);
});

test('gc --prune --expire drops old reflog entries, never a Space\'s newest', () => {
  ok(t.db, ['space', 'create', 'aging']);
  commit('aging', 'first');
  const last = commit('aging', 'second');
  const usage = run(t.db, ['gc', '--expire=now']);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--expire applies with --prune/);
  assert.equal(run(t.db, ['gc', '--prune', '--expire=someday']).code, 2);
  // entries written this second are not older than 90 days, nor than `never`
  assert.equal(ok(t.db, ['gc', '--prune', '--json']).expired_reflog, 0);
  assert.equal(ok(t.db, ['gc', '--prune', '--expire=never', '--json']).expired_reflog, 0);
  assert.equal(ok(t.db, ['reflog', 'aging', '--json']).length, 3);
  const gc = ok(t.db, ['gc', '--prune', '--expire=now', '--json']);
  assert.ok(gc.expired_reflog >= 2);
  assert.equal(gc.unreached_checkpoints, 0);   // every entry's Checkpoint is on a HEAD's line
  const log = ok(t.db, ['reflog', 'aging', '--json']);
  assert.equal(log.length, 1);
  assert.equal(log[0].new, last.commit_hash);
  assert.equal(ok(t.db, ['log', 'aging', '--json']).length, 2);
  assert.match(ok(t.db, ['gc', '--prune']), /expired 0 reflog entries; removed 0 checkpoints/);
  assert.equal(ok(t.db, ['fsck', '--json']).ok, true);
});
