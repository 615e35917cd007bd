// cli-env.test.mjs -- the CLI in the environments it is started in: a uid
// with no passwd entry (a container's) and `env -i`.  Each runs in a
// temporary directory that is listed afterwards: nothing may appear outside
// the paths the test names.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, readdirSync } from 'node:fs';
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
