// cli-env.test.mjs -- the CLI in the environments it is started in: a uid
// with no passwd entry (a container's), `env -i`, no HOME or a HOME that is
// not there, a relative XDG_DATA_HOME, and reads against a database that
// does not exist.  Each runs in a temporary directory that is listed
// afterwards: nothing may appear outside the paths the test names.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { SMRITI, tempDb } from './helpers.mjs';

// Runs the lean CLI in cwd with exactly env (the sanitizers' options kept), as `env -i` does.
function bare(args, { env = {}, cwd, uid, gid } = {}) {
  const full = { ...env };
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) if (process.env[k]) full[k] = process.env[k];
  const r = spawnSync(SMRITI, args, { env: full, cwd, uid, gid, encoding: 'utf8' });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

// Every path under dir, relative, sorted.
function tree(dir) {
  return readdirSync(dir, { recursive: true }).map(String).sort();
}

describe('the author when the environment names nobody', () => {
  // A static glibc's getpwuid() loads NSS modules at run time; for a uid
  // without a passwd entry the lean binary died in it with SIGSEGV.
  test('a uid without a passwd entry writes, and the author is the number', { skip: process.getuid() !== 0 && 'needs root to take another uid' }, () => {
    const t = tempDb();
    chmodSync(t.dir, 0o777);
    const as = { env: { SMRITI_DB: t.db }, cwd: t.dir, uid: 12345, gid: 12345 };
    let r = bare(['space', 'create', 'u'], as);
    assert.equal(r.code, 0, `${r.signal} ${r.stderr}`);
    r = bare(['commit', 'u', '-m', 't', '--decision', 'd', '--json'], as);
    assert.equal(r.signal, null);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).author, '12345');
    t.cleanup();
  });

  test('env -i with only SMRITI_DB (no HOME, no USER): the author is the uid', () => {
    const t = tempDb();
    const as = { env: { SMRITI_DB: t.db }, cwd: t.dir };
    assert.equal(bare(['space', 'create', 'u'], as).code, 0);
    const r = bare(['commit', 'u', '-m', 't', '--decision', 'd', '--json'], as);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).author, String(process.getuid()));
    assert.deepEqual(tree(t.dir), ['smriti.db', 'smriti.db-shm', 'smriti.db-wal']);
    t.cleanup();
  });
});

describe('the default database by the XDG Base Directory rules', () => {
  const names = /--db.*SMRITI_DB/;

  test('no HOME and no XDG_DATA_HOME: a clear error naming --db and SMRITI_DB, nothing created', () => {
    const t = tempDb();
    // the servers too: smriti serve (smriti-full) and smriti mcp
    for (const args of [['space', 'create', 'x'], ['space', 'list'], ['serve', '--listen', '127.0.0.1:0'], ['mcp']]) {
      const r = bare(args, { cwd: t.dir });
      assert.equal(r.code, 2, `${args}: ${r.stderr}`);
      assert.match(r.stderr, /neither XDG_DATA_HOME nor HOME is set/);
      assert.match(r.stderr, names);
    }
    assert.deepEqual(tree(t.dir), []);
    t.cleanup();
  });

  test('a HOME that does not exist is not created: an error naming --db', () => {
    const t = tempDb();
    const home = path.join(t.dir, 'nonexistent', 'dir');
    for (const args of [['space', 'create', 'x'], ['head', 'x']]) {
      const r = bare(args, { env: { HOME: home }, cwd: t.dir });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /HOME is not an existing directory/);
      assert.match(r.stderr, names);
    }
    assert.deepEqual(tree(t.dir), []);
    t.cleanup();
  });

  test('a relative XDG_DATA_HOME is ignored: the database goes under HOME', () => {
    const t = tempDb();
    const home = path.join(t.dir, 'home');
    mkdirSync(home);
    const r = bare(['space', 'create', 'x'], { env: { HOME: home, XDG_DATA_HOME: 'rel/xdg' }, cwd: t.dir });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(tree(t.dir), ['home', 'home/.local', 'home/.local/share', 'home/.local/share/smriti',
      'home/.local/share/smriti/smriti.db', 'home/.local/share/smriti/smriti.db-shm',
      'home/.local/share/smriti/smriti.db-wal']);
    t.cleanup();
  });

  test('an absolute XDG_DATA_HOME that is missing is made (0700), as the rules ask of a writer', () => {
    const t = tempDb();
    const xdg = path.join(t.dir, 'data');
    const r = bare(['space', 'create', 'x'], { env: { XDG_DATA_HOME: xdg }, cwd: t.dir });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(tree(t.dir), ['data', 'data/smriti', 'data/smriti/smriti.db',
      'data/smriti/smriti.db-shm', 'data/smriti/smriti.db-wal']);
    t.cleanup();
  });

  test('--db with nothing is a usage error, not the default', () => {
    const t = tempDb();
    const home = path.join(t.dir, 'home');
    mkdirSync(home);
    for (const args of [['--db=', 'space', 'create', 'x'], ['--db', '', 'space', 'create', 'x']]) {
      const r = bare(args, { env: { HOME: home }, cwd: t.dir });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /--db needs a SQLite path or a postgres:\/\/ URL/);
    }
    assert.deepEqual(tree(t.dir), ['home']);
    t.cleanup();
  });
});

describe('reads create no database', () => {
  // Each read runs as on an empty store: a list is empty, a named thing is
  // not found (exit 3); the default path and a named path alike.
  const reads = [
    [['space', 'list', '--json'], 0, (out) => assert.deepEqual(JSON.parse(out), [])],
    [['search', 'anything', '--json'], 0, (out) => assert.deepEqual(JSON.parse(out).results, [])],
    [['fsck', '--json'], 0, (out) => assert.equal(JSON.parse(out).ok, true)],
    [['head', 'x'], 3],
    [['show', 'x'], 3],
    [['log', 'x'], 3],
    [['reflog', 'x'], 3],
    [['diff', 'x', 'y'], 3],
    [['access', 'x'], 3],
  ];

  for (const [where, envOf] of [
    ['the default path', (t) => ({ HOME: path.join(t.dir, 'home') })],
    ['a path named by SMRITI_DB', (t) => ({ SMRITI_DB: path.join(t.dir, 'home', 'named.db') })],
  ]) {
    test(`on ${where}`, () => {
      const t = tempDb();
      mkdirSync(path.join(t.dir, 'home'));
      const env = envOf(t);
      for (const [args, code, check] of reads) {
        const r = bare(args, { env, cwd: t.dir });
        assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
        if (check) check(r.stdout);
      }
      assert.deepEqual(tree(t.dir), ['home']);
      // the first write creates it
      assert.equal(bare(['space', 'create', 'x'], { env, cwd: t.dir }).code, 0);
      const r = bare(['space', 'list', '--json'], { env, cwd: t.dir });
      assert.deepEqual(JSON.parse(r.stdout).map((s) => s.name), ['x']);
      t.cleanup();
    });
  }
});

describe('SMRITI_STORE_TRACE: every call of the storage port on stderr', () => {
  test('=1 logs each call with its outcome, a plain row by its work; unset, nothing', () => {
    const t = tempDb();
    const as = { env: { SMRITI_DB: t.db }, cwd: t.dir };
    assert.equal(bare(['space', 'create', 'tr'], as).code, 0);
    const traced = { env: { SMRITI_DB: t.db, SMRITI_STORE_TRACE: '1' }, cwd: t.dir };
    let r = bare(['commit', 'tr', '-m', 't', '--decision', 'd'], traced);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('smriti: store 1: '));
    const calls = lines.map((l) => l.replace(/^smriti: store 1: /, '').replace(/ \(\d+ us\)$/, ''));
    assert.equal(calls[0], 'open sqlite ok');
    assert.ok(calls.includes('sql_text reading a space ok'), calls.join('\n'));
    assert.ok(calls.includes('txn_begin ok') && calls.includes('txn_commit ok'), calls.join('\n'));
    assert.equal(calls.at(-1), 'close ok');
    r = bare(['reflog', 'tr'], traced);
    assert.match(r.stderr, /^smriti: store 1: sql_text reading the reflog ok \(\d+ us\)$/m);
    assert.match(r.stdout, /tr@\{0\}: commit/);
    r = bare(['reflog', 'tr'], as);
    assert.equal(r.stderr, '');
    t.cleanup();
  });
});
