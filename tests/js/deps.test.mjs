// deps.test.mjs -- scripts/deps.sh by purpose: `run` (what scripts/run
// calls) needs no Node.js, `test` installs Debian's nodejs and npm when no
// npm is there (npm ci then brings the Node.js the tests run on), anything
// else is a usage error.  The packages of both lists are installed by then
// (scripts/test ran `deps.sh test`), so only the npm check can differ.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync, chmodSync, existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDb } from './helpers.mjs';

// Runs deps.sh with a PATH that has what it uses but no node or npm, and an
// apt-get that only writes down what it was asked (as root, deps.sh installs).
function depsWithoutNode(dir, purpose) {
  const bin = path.join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const tool of ['dpkg-query', 'grep', 'id']) {
    try { symlinkSync(execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), path.join(bin, tool)); } catch { /* linked already */ }
  }
  writeFileSync(path.join(bin, 'apt-get'), `#!/bin/sh\necho "$*" >> '${path.join(dir, 'apt.log')}'\n`);
  chmodSync(path.join(bin, 'apt-get'), 0o755);
  return spawnSync('/bin/sh', [path.join(ROOT, 'scripts/deps.sh'), purpose], { encoding: 'utf8', env: { PATH: bin } });
}

test('deps.sh run needs no Node.js; deps.sh test does', () => {
  const t = tempDb();
  const run = depsWithoutNode(t.dir, 'run');
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stderr, '');
  const tst = depsWithoutNode(t.dir, 'test');
  assert.equal(tst.status, 1);
  if (process.getuid() === 0) {
    // root: Debian's nodejs and npm are installed (here: asked of the stub apt-get)
    assert.match(readFileSync(path.join(t.dir, 'apt.log'), 'utf8'), /^install .* nodejs npm$/m);
    assert.match(tst.stderr, /the tests need npm and a Node\.js to run it, 18 or newer/);
  } else {
    assert.match(tst.stderr, /sudo apt-get install -y.* nodejs npm/);
    assert.equal(existsSync(path.join(t.dir, 'apt.log')), false);
  }
  const bad = depsWithoutNode(t.dir, 'serve');
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^usage: scripts\/deps\.sh \[run\|test\|bench\]/);
  t.cleanup();
});
