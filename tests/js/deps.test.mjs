// deps.test.mjs -- scripts/deps.sh by purpose: `run` (what scripts/run
// calls) needs no Node.js, `test` insists on it, anything else is a usage
// error.  The packages of both lists are installed by then (scripts/test ran
// `deps.sh test`), so only the Node.js check can fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDb } from './helpers.mjs';

// Runs deps.sh with a PATH that has what it uses but no node or npm.
function depsWithoutNode(dir, purpose) {
  const bin = path.join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const tool of ['dpkg-query', 'grep', 'id']) {
    try { symlinkSync(execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), path.join(bin, tool)); } catch { /* linked already */ }
  }
  return spawnSync('/bin/sh', [path.join(ROOT, 'scripts/deps.sh'), purpose], { encoding: 'utf8', env: { PATH: bin } });
}

test('deps.sh run needs no Node.js; deps.sh test does', () => {
  const t = tempDb();
  const run = depsWithoutNode(t.dir, 'run');
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stderr, '');
  const tst = depsWithoutNode(t.dir, 'test');
  assert.equal(tst.status, 1);
  assert.match(tst.stderr, /the tests need Node\.js >= 20/);
  const bad = depsWithoutNode(t.dir, 'serve');
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^usage: scripts\/deps\.sh \[run\|test\|bench\]/);
  t.cleanup();
});
