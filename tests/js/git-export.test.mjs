// git-export.test.mjs -- `smriti export --git DIR SPACE`: a real git
// repository built by git fast-import, one commit per checkpoint with the
// checkpoint's author, date and title, its tree holding checkpoint.md,
// checkpoint.json and the artifacts; `git fsck` finds nothing wrong, and
// running it again adds only the new checkpoints.  Each Space goes to its
// own branch (smriti/SPACE, or --branch), several Spaces share one
// repository, and the export never moves a ref it did not write nor
// touches the user's HEAD, index or work tree.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { tempDb, ok, run, SMRITI_FULL } from './helpers.mjs';

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
  assert.equal(out.branch, 'smriti/ship');
  git(dir, 'fsck', '--strict', '--no-dangling');
  // a repository the export created has HEAD on the Space's branch
  assert.equal(git(dir, 'symbolic-ref', 'HEAD'), 'refs/heads/smriti/ship\n');
  assert.equal(git(dir, 'log', '--format=%s', 'smriti/ship'), 'With a plan\nRust instead\nWith a plan\nFirst idea\n');
  assert.equal(git(dir, 'log', '--format=%an', '-1', 'smriti/ship~3'), 'Ann Lee\n');
  const first = ok(t.db, ['show', 'ship~3', '--json']);
  assert.equal(git(dir, 'log', '--format=%aI', '-1', 'smriti/ship~3').trim(), `${first.created_at.slice(0, 19)}+00:00`);
  assert.match(git(dir, 'log', '--format=%B', '-1', 'smriti/ship~3'), new RegExp(`^First idea\\n\\nWe start\\.\\n\\nSmriti-Checkpoint: ${first.commit_hash}\\nSmriti-Space: ship\\n`));
  assert.equal(git(dir, 'show', 'smriti/ship:artifacts/plan_v1.md'), '# Plan\n\nShip on Friday.\n');
  assert.deepEqual(JSON.parse(git(dir, 'show', 'smriti/ship~3:checkpoint.json')).commit_hash, first.commit_hash);
  assert.match(git(dir, 'show', 'smriti/ship~3:checkpoint.md'), /^# First idea/);
  assert.match(git(dir, 'diff', 'smriti/ship~2', 'smriti/ship~1', '--', 'checkpoint.md'), /-- Use Go\n\+- Use Rust|Use Rust/);
});

test('running it again adds only the new checkpoints', () => {
  const dir = path.join(t.dir, 'repo');
  assert.equal(ok(t.db, ['export', '--git', dir, 'ship', '--json']).added, 0);
  ok(t.db, ['commit', '--replace', 'ship', '--title', 'Shipped', '--decision', 'Use Go']);
  const out = ok(t.db, ['export', '--git', dir, 'ship', '--json']);
  assert.equal(out.added, 1);
  assert.equal(out.commits, 5);
  assert.equal(git(dir, 'log', '--format=%s', '-2', 'smriti/ship'), 'Shipped\nWith a plan\n');
  assert.equal(git(dir, 'rev-list', '--count', 'smriti/ship'), '5\n');
  git(dir, 'fsck', '--strict');
  // the text form counts git's commits in words a person reads: "0 new commits", "1 new commit"
  assert.match(ok(t.db, ['export', '--git', dir, 'ship']), /^ship: 0 new commits, 5 in all, branch smriti\/ship of /);
  ok(t.db, ['commit', 'ship', '-m', 'One more', '--author', 'Eve']);
  assert.match(ok(t.db, ['export', '--git', dir, 'ship']), /^ship: 1 new commit, 6 in all, /);
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

// A person's own repository: main with two commits checked out, a staged
// change, a modified file and an untracked one.
function userRepo(dir) {
  const g = (...args) => execFileSync('git', ['-C', dir, '-c', 'user.name=Uma', '-c', 'user.email=uma@example.org', ...args], { encoding: 'utf8' });
  execFileSync('git', ['init', '--quiet', '--initial-branch=main', dir]);
  writeFileSync(path.join(dir, 'README.md'), 'mine\n');
  writeFileSync(path.join(dir, 'notes.txt'), 'one\n');
  g('add', '.');
  g('commit', '--quiet', '-m', 'My first');
  writeFileSync(path.join(dir, 'notes.txt'), 'one\ntwo\n');
  g('commit', '--quiet', '-am', 'My second');
  writeFileSync(path.join(dir, 'staged.txt'), 'staged\n');
  g('add', 'staged.txt');
  writeFileSync(path.join(dir, 'notes.txt'), 'one\ntwo\nthree\n');
  writeFileSync(path.join(dir, 'untracked.txt'), 'loose\n');
  return g;
}

// What the export must leave alone in a person's repository.
const userState = (dir) => ({
  main: git(dir, 'rev-parse', 'refs/heads/main'),
  head: git(dir, 'symbolic-ref', 'HEAD'),
  status: git(dir, 'status', '--porcelain=v1', '--branch'),
  index: git(dir, 'ls-files', '--stage'),
  notes: readFileSync(path.join(dir, 'notes.txt'), 'utf8'),
});
const refs = (dir) => git(dir, 'for-each-ref', '--format=%(refname) %(objectname)');
const tipCheckpoint = (dir, ref) => git(dir, 'log', '-1', '--format=%(trailers:key=Smriti-Checkpoint,valueonly)', ref).trim();
const headOf = (db, space) => ok(db, ['head', space, '--json']).commit_hash;

describe('Spaces as branches of one repository', () => {
  let u;
  before(() => {
    u = tempDb();
    ok(u.db, ['space', 'create', 'ship']);
    ok(u.db, ['commit', '--replace', 'ship', '--title', 'A', '--decision', 'd1', '--author', 'Ann']);
    ok(u.db, ['commit', '--replace', 'ship', '--title', 'B', '--decision', 'd1', '--decision', 'd2', '--author', 'Bo']);
    ok(u.db, ['fork', 'ship', '--into', 'ship-alt']);
    ok(u.db, ['commit', '--replace', 'ship-alt', '--title', 'E', '--decision', 'd1', '--decision', 'e', '--author', 'Eve']);
    ok(u.db, ['space', 'create', 'notes']);
    ok(u.db, ['commit', '--replace', 'notes', '--title', 'N', '--decision', 'n', '--author', 'Ned']);
  });
  after(() => u.cleanup());

  test('export into a repository with its own main leaves main, HEAD, index and work tree as they were', () => {
    const dir = path.join(u.dir, 'mine');
    userRepo(dir);
    const before = userState(dir);
    const ship = ok(u.db, ['export', '--git', dir, 'ship', '--json']);
    assert.deepEqual(userState(dir), before);
    const notes = ok(u.db, ['export', '--git', dir, 'notes', '--json']);
    assert.deepEqual(userState(dir), before);
    assert.deepEqual([ship.branch, notes.branch], ['smriti/ship', 'smriti/notes']);
    assert.equal(git(dir, 'log', '--format=%s', 'main'), 'My second\nMy first\n');
    assert.equal(git(dir, 'log', '--format=%s', 'smriti/ship'), 'B\nA\n');
    assert.equal(git(dir, 'log', '--format=%s', 'smriti/notes'), 'N\n');
    git(dir, 'fsck', '--strict', '--no-dangling');
  });

  test('two Spaces are two branches; a fork shares its history with the Space it came from', () => {
    const dir = path.join(u.dir, 'two.git');
    assert.equal(ok(u.db, ['export', '--git', dir, 'ship', '--json']).added, 2);
    const alt = ok(u.db, ['export', '--git', dir, 'ship-alt', '--json']);
    assert.deepEqual([alt.branch, alt.added, alt.commits], ['smriti/ship-alt', 1, 3]);
    assert.equal(git(dir, 'log', '--format=%s', 'smriti/ship'), 'B\nA\n');
    assert.equal(git(dir, 'log', '--format=%s', 'smriti/ship-alt'), 'E\nB\nA\n');
    assert.equal(git(dir, 'merge-base', 'smriti/ship', 'smriti/ship-alt'), git(dir, 'rev-parse', 'smriti/ship'));
    assert.equal(tipCheckpoint(dir, 'smriti/ship'), headOf(u.db, 'ship'));
    assert.equal(tipCheckpoint(dir, 'smriti/ship-alt'), headOf(u.db, 'ship-alt'));
    assert.equal(git(dir, 'rev-list', '--all', '--count'), '3\n');
    git(dir, 'fsck', '--strict', '--no-dangling');
  });

  test('exporting both Spaces again after new checkpoints and a merge adds only the new ones', () => {
    const dir = path.join(u.dir, 'two.git');
    const t2 = tempDb();
    try {
      // the same history in a store of its own, so the other tests keep theirs
      const file = path.join(t2.dir, 'b.json');
      ok(u.db, ['export', '--all', '-o', file]);
      ok(t2.db, ['import', file]);
      ok(t2.db, ['commit', '--replace', 'ship', '--title', 'C', '--decision', 'd1', '--decision', 'd2', '--decision', 'c']);
      ok(t2.db, ['commit', '--replace', 'ship-alt', '--title', 'D', '--decision', 'd1', '--decision', 'e', '--decision', 'd']);
      ok(t2.db, ['merge', 'ship', 'ship-alt', '--theirs']);
      const ship = ok(t2.db, ['export', '--git', dir, 'ship', '--json']);
      assert.equal(ship.added, 3);   // C, D (the merge's second parent) and the merge
      assert.equal(ok(t2.db, ['export', '--git', dir, 'ship-alt', '--json']).added, 0);
      assert.equal(ok(t2.db, ['export', '--git', dir, 'ship', '--json']).added, 0);
      assert.equal(git(dir, 'rev-list', '--count', 'smriti/ship'), '6\n');
      assert.equal(git(dir, 'rev-list', '--count', 'smriti/ship-alt'), '4\n');
      assert.equal(git(dir, 'rev-list', '--all', '--count'), '6\n');
      assert.equal(git(dir, 'rev-list', '--parents', '-1', 'smriti/ship').trim().split(' ').length, 3);
      assert.equal(git(dir, 'rev-parse', 'smriti/ship^2'), git(dir, 'rev-parse', 'smriti/ship-alt'));
      assert.equal(tipCheckpoint(dir, 'smriti/ship'), headOf(t2.db, 'ship'));
      assert.equal(readFileSync(path.join(dir, 'smriti-checkpoints'), 'utf8').trim().split('\n').length, 6);
      git(dir, 'fsck', '--strict', '--no-dangling');
    } finally {
      t2.cleanup();
    }
  });

  test('a branch whose tip Smriti did not write is refused with nothing changed; --force overrides', () => {
    const dir = path.join(u.dir, 'foreign');
    const g = userRepo(dir);
    g('branch', 'feature');
    ok(u.db, ['export', '--git', dir, 'ship']);
    const mine = g('commit-tree', '-p', 'smriti/ship', '-m', 'my own', 'smriti/ship^{tree}').trim();
    g('update-ref', 'refs/heads/smriti/ship', mine);
    const before = [refs(dir), readFileSync(path.join(dir, '.git/smriti-checkpoints'), 'utf8'), userState(dir)];
    const r = run(u.db, ['export', '--git', dir, 'ship']);
    assert.equal(r.code, 4, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /branch 'smriti\/ship'.*not.*--force/);
    // a person's own branch is refused just the same, and main, checked out, even forced
    const m = run(u.db, ['export', '--git', dir, 'notes', '--branch', 'feature']);
    assert.equal(m.code, 4, m.stderr);
    assert.match(m.stderr, /branch 'feature'.*not.*--force/);
    const c = run(u.db, ['export', '--git', dir, 'notes', '--branch', 'main', '--force']);
    assert.equal(c.code, 4, c.stderr);
    assert.match(c.stderr, /branch 'main' is checked out/);
    assert.deepEqual([refs(dir), readFileSync(path.join(dir, '.git/smriti-checkpoints'), 'utf8'), userState(dir)], before);
    const f = ok(u.db, ['export', '--git', dir, 'ship', '--force', '--json']);
    assert.equal(f.added, 0);
    assert.equal(tipCheckpoint(dir, 'smriti/ship'), headOf(u.db, 'ship'));
    assert.equal(git(dir, 'rev-parse', 'main'), before[2].main);
  });

  test('--branch chooses the branch; a name git refuses is a usage error naming --branch', () => {
    const dir = path.join(u.dir, 'chosen.git');
    const out = ok(u.db, ['export', '--git', dir, 'ship', '--branch', 'published/ship', '--json']);
    assert.deepEqual([out.branch, out.added], ['published/ship', 2]);
    assert.equal(refs(dir).trim().split('\n').map((l) => l.split(' ')[0]).join(' '), 'refs/heads/published/ship');
    assert.equal(git(dir, 'symbolic-ref', 'HEAD'), 'refs/heads/published/ship\n');
    assert.match(ok(u.db, ['export', '--git', dir, 'ship', '--branch', 'published/ship']), /branch published\/ship of /);
    for (const bad of ['a..b', 'x.lock', 'has space', '-dash', 'refs/heads/x', '']) {
      const r = run(u.db, ['export', '--git', dir, 'ship', '--branch', bad]);
      assert.equal(r.code, 2, `${bad}: ${r.stderr}`);
      assert.match(r.stderr, /--branch/);
    }
    assert.equal(run(u.db, ['export', 'ship', '--branch', 'x']).code, 2);
    assert.equal(run(u.db, ['export', 'ship', '--force']).code, 2);
    assert.equal(refs(dir).trim().split('\n').length, 1);
  });

  test('a Space name git would refuse as a branch is escaped, %XX for each byte', () => {
    const dir = path.join(u.dir, 'names.git');
    const names = {
      'road trip: 2026?': 'smriti/road%20trip%3A%202026%3F',
      'x.lock': 'smriti/x%2Elock',
      'a..b': 'smriti/a.%2Eb',
      '.dot': 'smriti/%2Edot',
      'tail.': 'smriti/tail%2E',
      'köln': 'smriti/köln',
      '50%': 'smriti/50%25',
      '@': 'smriti/%40',
      'a@{1}[*]\\': 'smriti/a%40%7B1%7D%5B%2A%5D%5C',
    };
    for (const [name, branch] of Object.entries(names)) {
      ok(u.db, ['space', 'create', name]);
      ok(u.db, ['commit', '--replace', name, '--title', `T ${name}`, '--decision', 'x']);
      assert.equal(ok(u.db, ['export', '--git', dir, name, '--json']).branch, branch);
      execFileSync('git', ['check-ref-format', `refs/heads/${branch}`]);
      assert.equal(git(dir, 'log', '-1', '--format=%(trailers:key=Smriti-Space,valueonly)', `refs/heads/${branch}`).trim(), name);
    }
    assert.equal(refs(dir).trim().split('\n').length, Object.keys(names).length);
    git(dir, 'fsck', '--strict', '--no-dangling');
  });

  test('the branch checked out in a work tree is refused, even with --force', () => {
    const dir = path.join(u.dir, 'checked');
    const g = userRepo(dir);
    ok(u.db, ['export', '--git', dir, 'notes']);
    g('stash', '--include-untracked', '--quiet');
    g('checkout', '--quiet', 'smriti/notes');
    ok(u.db, ['commit', '--replace', 'notes', '--title', 'N2', '--decision', 'n', '--decision', 'm']);
    const before = [refs(dir), git(dir, 'status', '--porcelain=v1', '--branch')];
    for (const args of [[], ['--force']]) {
      const r = run(u.db, ['export', '--git', dir, 'notes', ...args]);
      assert.equal(r.code, 4, r.stderr);
      assert.match(r.stderr, /branch 'smriti\/notes' is checked out/);
    }
    assert.deepEqual([refs(dir), git(dir, 'status', '--porcelain=v1', '--branch')], before);
  });

  test('a repository exported by the old code (Smriti wrote main): the next export writes smriti/SPACE and leaves main', () => {
    const dir = path.join(u.dir, 'old.git');
    ok(u.db, ['export', '--git', dir, 'ship-alt']);
    // what the old code left: main at the Space's HEAD, no smriti/ branch
    git(dir, 'update-ref', 'refs/heads/main', 'refs/heads/smriti/ship-alt');
    git(dir, 'symbolic-ref', 'HEAD', 'refs/heads/main');
    git(dir, 'update-ref', '-d', 'refs/heads/smriti/ship-alt');
    const main = git(dir, 'rev-parse', 'main');
    const out = ok(u.db, ['export', '--git', dir, 'ship-alt', '--json']);
    assert.deepEqual([out.added, out.branch], [0, 'smriti/ship-alt']);
    assert.equal(git(dir, 'rev-parse', 'smriti/ship-alt'), main);
    assert.equal(git(dir, 'rev-parse', 'main'), main);
    assert.equal(git(dir, 'symbolic-ref', 'HEAD'), 'refs/heads/main\n');
    // and main, written by Smriti, can still be chosen on purpose
    assert.equal(ok(u.db, ['export', '--git', dir, 'ship', '--branch', 'main', '--json']).added, 0);
    assert.equal(tipCheckpoint(dir, 'main'), headOf(u.db, 'ship'));
  });

  test('commits an export wrote, gone after a deleted branch and git gc: the error says how to recover', () => {
    const dir = path.join(u.dir, 'pruned.git');
    ok(u.db, ['export', '--git', dir, 'ship']);
    ok(u.db, ['export', '--git', dir, 'notes']);
    git(dir, 'update-ref', '-d', 'refs/heads/smriti/notes');
    git(dir, 'reflog', 'expire', '--expire=now', '--all');
    git(dir, 'gc', '--quiet', '--prune=now');
    ok(u.db, ['commit', '--replace', 'notes', '--title', 'N3', '--decision', 'n3']);
    const r = run(u.db, ['export', '--git', dir, 'notes']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /a commit an export wrote is gone .*remove smriti-checkpoints and smriti-marks/);
    for (const f of ['smriti-checkpoints', 'smriti-marks']) rmSync(path.join(dir, f));
    ok(u.db, ['export', '--git', dir, 'notes']);
    assert.equal(git(dir, 'log', '-1', '--format=%s', 'smriti/notes'), 'N3\n');
    // ship's branch is no longer known as the export's until it is written again, the same
    const ship = git(dir, 'rev-parse', 'smriti/ship');
    assert.equal(run(u.db, ['export', '--git', dir, 'ship']).code, 4);
    ok(u.db, ['export', '--git', dir, 'ship', '--force']);
    assert.equal(git(dir, 'rev-parse', 'smriti/ship'), ship);
    assert.equal(ok(u.db, ['export', '--git', dir, 'ship', '--json']).added, 0);
    git(dir, 'fsck', '--strict');
  });

  test('a linked work tree is its repository; its checked-out branch is refused; GIT_DIR around does not redirect', () => {
    const dir = path.join(u.dir, 'linked-main');
    const g = userRepo(dir);
    g('branch', 'side');
    const linked = path.join(u.dir, 'linked-side');
    g('worktree', 'add', '--quiet', linked, 'side');
    const before = [userState(dir), git(linked, 'status', '--porcelain=v1', '--branch'), git(linked, 'rev-parse', 'side')];
    // as from a hook of the person's repository, where git sets GIT_DIR and GIT_INDEX_FILE
    const hook = { GIT_DIR: path.join(dir, '.git'), GIT_INDEX_FILE: path.join(dir, '.git', 'index') };
    const other = path.join(u.dir, 'other.git');
    assert.equal(ok(u.db, ['export', '--git', other, 'ship', '--json'], { env: hook }).added, 2);
    assert.equal(git(other, 'rev-list', '--count', 'smriti/ship'), '2\n');
    assert.equal(ok(u.db, ['export', '--git', linked, 'notes', '--json'], { env: hook }).branch, 'smriti/notes');
    assert.match(git(dir, 'for-each-ref', '--format=%(refname)'), /refs\/heads\/smriti\/notes/);
    const r = run(u.db, ['export', '--git', linked, 'notes', '--branch', 'side', '--force']);
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /branch 'side' is checked out in '.*linked-side'/);
    assert.deepEqual([userState(dir), git(linked, 'status', '--porcelain=v1', '--branch'), git(linked, 'rev-parse', 'side')], before);
    git(dir, 'fsck', '--strict', '--no-dangling');
  });

  test('an export already running into the repository (its lock file) is refused', () => {
    const dir = path.join(u.dir, 'locked.git');
    ok(u.db, ['export', '--git', dir, 'notes']);
    writeFileSync(path.join(dir, 'smriti-export.lock'), '');
    const r = run(u.db, ['export', '--git', dir, 'ship']);
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /smriti-export\.lock/);
    assert.equal(refs(dir).trim().split('\n').length, 1);
  });
});

// The export reads the Space through the store, so PostgreSQL gets the same branches.
test('PostgreSQL: two Spaces as two branches', { skip: process.env.SMRITI_TEST_PG ? false : 'SMRITI_TEST_PG is not set' }, () => {
  const PG = process.env.SMRITI_TEST_PG;
  const schema = `smriti_git_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
  const psql = (sql) => execFileSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', PG, '-c', sql], { encoding: 'utf8' });
  const db = `${PG}${PG.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`;
  const p = tempDb();
  const o = (args) => ok(db, args, { bin: SMRITI_FULL });
  psql(`CREATE SCHEMA ${schema}`);
  try {
    o(['space', 'create', 'pg']);
    o(['commit', '--replace', 'pg', '--title', 'P1', '--decision', 'p']);
    o(['fork', 'pg', '--into', 'pg-alt']);
    o(['commit', '--replace', 'pg-alt', '--title', 'P2', '--decision', 'p', '--decision', 'q']);
    const dir = path.join(p.dir, 'mine');
    userRepo(dir);
    const before = userState(dir);
    assert.equal(o(['export', '--git', dir, 'pg', '--json']).added, 1);
    assert.equal(o(['export', '--git', dir, 'pg-alt', '--json']).added, 1);
    assert.deepEqual(userState(dir), before);
    assert.equal(git(dir, 'log', '--format=%s', 'smriti/pg-alt'), 'P2\nP1\n');
    assert.equal(git(dir, 'rev-parse', 'smriti/pg'), git(dir, 'rev-parse', 'smriti/pg-alt~1'));
    git(dir, 'fsck', '--strict', '--no-dangling');
  } finally {
    psql(`DROP SCHEMA ${schema} CASCADE`);
    p.cleanup();
  }
});
