// git-export.test.mjs -- `smriti export --git DIR SPACE`: a real git
// repository built by git fast-import, one commit per checkpoint with the
// checkpoint's author, date and title, its tree holding checkpoint.md,
// checkpoint.json and the artifacts; `git fsck` finds nothing wrong, and
// running it again adds only the new checkpoints.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { tempDb, ok, run } from './helpers.mjs';

let t;
const git = (dir, ...args) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' });

before(() => {
  t = tempDb();
  const plan = path.join(t.dir, 'plan.md');
  writeFileSync(plan, '# Plan\n\nShip on Friday.\n');
  ok(t.db, ['space', 'create', 'ship']);
  ok(t.db, ['commit', '--replace', 'ship', '--title', 'First idea', '--summary', 'We start.', '--decision', 'Use Go', '--author', 'Ann Lee']);
  ok(t.db, ['commit', '--replace', 'ship', '--title', 'With a plan', '--decision', 'Use Go', '--artifact', `plan/v1.md=@${plan}`, '--author', 'Bo']);
  ok(t.db, ['commit', '--replace', 'ship', '--title', 'Rust instead', '--decision', 'Use Rust', '--author', 'Cy']);
  ok(t.db, ['restore', 'ship', 'ship~1', '--author', 'Dee']);
});
after(() => t.cleanup());

test('every checkpoint is a commit, git fsck is clean, titles in order', () => {
  const dir = path.join(t.dir, 'repo');
  const out = ok(t.db, ['export', '--git', dir, 'ship', '--json']);
  assert.equal(out.added, 4);
  git(dir, 'fsck', '--strict', '--no-dangling');
  assert.equal(git(dir, 'log', '--format=%s', 'main'), 'With a plan\nRust instead\nWith a plan\nFirst idea\n');
  assert.equal(git(dir, 'log', '--format=%an', '-1', 'main~3'), 'Ann Lee\n');
  const first = ok(t.db, ['show', 'ship~3', '--json']);
  assert.equal(git(dir, 'log', '--format=%aI', '-1', 'main~3').trim(), `${first.created_at.slice(0, 19)}+00:00`);
  assert.match(git(dir, 'log', '--format=%B', '-1', 'main~3'), new RegExp(`^First idea\\n\\nWe start\\.\\n\\nSmriti-Checkpoint: ${first.commit_hash}\\nSmriti-Space: ship\\n`));
  assert.equal(git(dir, 'show', 'main:artifacts/plan_v1.md'), '# Plan\n\nShip on Friday.\n');
  assert.deepEqual(JSON.parse(git(dir, 'show', 'main~3:checkpoint.json')).commit_hash, first.commit_hash);
  assert.match(git(dir, 'show', 'main~3:checkpoint.md'), /^# First idea/);
  assert.match(git(dir, 'diff', 'main~2', 'main~1', '--', 'checkpoint.md'), /-- Use Go\n\+- Use Rust|Use Rust/);
});

test('running it again adds only the new checkpoints', () => {
  const dir = path.join(t.dir, 'repo');
  assert.equal(ok(t.db, ['export', '--git', dir, 'ship', '--json']).added, 0);
  ok(t.db, ['commit', '--replace', 'ship', '--title', 'Shipped', '--decision', 'Use Go']);
  const out = ok(t.db, ['export', '--git', dir, 'ship', '--json']);
  assert.equal(out.added, 1);
  assert.equal(out.commits, 5);
  assert.equal(git(dir, 'log', '--format=%s', '-2', 'main'), 'Shipped\nWith a plan\n');
  assert.equal(git(dir, 'rev-list', '--count', 'main'), '5\n');
  git(dir, 'fsck', '--strict');
});

test('a directory that is not a repository is refused; bad usage is a usage error', () => {
  const full = path.join(t.dir, 'full');
  mkdirSync(full);
  writeFileSync(path.join(full, 'notes.txt'), 'mine');
  const r = run(t.db, ['export', '--git', full, 'ship']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /neither a git repository nor a new directory/);
  assert.equal(run(t.db, ['export', '--git', full]).code, 2);
  assert.equal(run(t.db, ['export', '--git', full, 'a', 'b']).code, 2);
});
