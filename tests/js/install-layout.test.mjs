// install-layout.test.mjs -- the lean `smriti` hands serve, draft, remote and
// PostgreSQL use to smriti-full, found beside it (a build tree) or in
// ../libexec/smriti relative to it (make install, the Debian package), also
// when smriti is reached through a symlink; with neither it says where it looked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { SMRITI, SMRITI_FULL, tempDb, childEnv } from './helpers.mjs';

// `serve --help` is answered only by smriti-full: the lean binary has no serve.
function serveHelp(bin) {
  return spawnSync(bin, ['serve', '--help'], { encoding: 'utf8', env: childEnv() });
}

function place(dir, rel, src) {
  mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  copyFileSync(src, path.join(dir, rel));
  return path.join(dir, rel);
}

test('the lean binary finds smriti-full beside itself', () => {
  const t = tempDb();
  const lean = place(t.dir, 'smriti', SMRITI);
  place(t.dir, 'smriti-full', SMRITI_FULL);
  const r = serveHelp(lean);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^usage: smriti serve /);
  t.cleanup();
});

test('the lean binary finds smriti-full in ../libexec/smriti, also through a symlink', () => {
  const t = tempDb();
  const lean = place(t.dir, 'usr/bin/smriti', SMRITI);
  place(t.dir, 'usr/libexec/smriti/smriti-full', SMRITI_FULL);
  symlinkSync(lean, path.join(t.dir, 'link'));
  for (const bin of [lean, path.join(t.dir, 'link')]) {
    const r = serveHelp(bin);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^usage: smriti serve /);
  }
  t.cleanup();
});

test('without smriti-full the lean binary names both places it looked', () => {
  const t = tempDb();
  const lean = place(t.dir, 'bin/smriti', SMRITI);
  const r = serveHelp(lean);
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '');
  const dir = path.join(t.dir, 'bin');
  assert.equal(r.stderr, `smriti: this command needs smriti-full, which is neither at '${dir}/smriti-full' nor at '${dir}/../libexec/smriti/smriti-full'\n`);
  // commands the lean binary carries still work alone
  const head = spawnSync(lean, ['--db', path.join(t.dir, 'x.db'), 'space', 'list'], { encoding: 'utf8', env: childEnv() });
  assert.equal(head.status, 0, head.stderr);
  t.cleanup();
});
