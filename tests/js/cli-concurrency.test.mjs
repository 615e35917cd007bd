// cli-concurrency.test.mjs -- several CLI processes on one database file:
// racing writers on the same parent (exactly one wins, the other exits 4)
// and SIGKILL in the middle of a stream of commits (every acknowledged
// checkpoint survives, fsck stays clean).  Under the sanitizers the races and
// the kills run a fifth as many times (helpers.mjs stress()).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { tempDb, ok, run, childEnv, stress, SMRITI } from './helpers.mjs';

function runAsync(db, args) {
  return new Promise((resolve) => {
    const child = spawn(SMRITI, args, { env: childEnv({ SMRITI_DB: db }) });
    let stdout = '', stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, child }));
  });
}

test('two writers on the same parent: exactly one wins every time', async () => {
  const t = tempDb();
  ok(t.db, ['space', 'create', 'race']);
  let head = ok(t.db, ['commit', 'race', '-m', 'root', '--json']).commit_hash;
  const rounds = stress(40);
  for (let i = 0; i < rounds; i++) {
    const [a, b] = await Promise.all([
      runAsync(t.db, ['commit', 'race', '-m', `a${i}`, '--parent', head, '--json']),
      runAsync(t.db, ['commit', 'race', '-m', `b${i}`, '--parent', head, '--json']),
    ]);
    assert.deepEqual([a.code, b.code].sort(), [0, 4], `round ${i}: ${a.stderr} ${b.stderr}`);
    const loser = a.code === 4 ? a : b;
    const winner = a.code === 0 ? a : b;
    assert.match(loser.stderr, /parent is stale: HEAD is now/);
    head = JSON.parse(winner.stdout).commit_hash;
    assert.ok(loser.stderr.includes(head), 'the loser is told the winning HEAD');
  }
  const log = ok(t.db, ['log', 'race', '--json']);
  assert.equal(log.length, rounds + 1);
  assert.equal(log[0].commit_hash, head);
  assert.equal(ok(t.db, ['fsck', '--json']).ok, true);
  t.cleanup();
});

test('writers without --parent never lose a checkpoint', async () => {
  const t = tempDb();
  ok(t.db, ['space', 'create', 'pile']);
  const writers = 8, each = 5;
  const results = await Promise.all(Array.from({ length: writers }, (_, w) => (async () => {
    const hashes = [];
    for (let i = 0; i < each; i++) {
      const r = await runAsync(t.db, ['commit', 'pile', '-m', `w${w}-${i}`, '--json']);
      assert.equal(r.code, 0, r.stderr);
      hashes.push(JSON.parse(r.stdout).commit_hash);
    }
    return hashes;
  })()));
  const log = ok(t.db, ['log', 'pile', '--json']).map((c) => c.commit_hash);
  assert.equal(log.length, writers * each);
  for (const h of results.flat()) assert.ok(log.includes(h));
  assert.equal(ok(t.db, ['fsck', '--json']).ok, true);
  t.cleanup();
});

test('SIGKILL in the middle of a stream of commits loses no acknowledged checkpoint', async () => {
  const t = tempDb();
  ok(t.db, ['space', 'create', 'crash']);
  const acknowledged = [];
  let killed = 0;
  // Learn how long one commit takes on this build (sanitizers are slower), then
  // spread the kills over 0..1.5 times that.
  const started = Date.now();
  for (let i = 0; i < 3; i++) acknowledged.push(ok(t.db, ['commit', 'crash', '-m', `warm${i}`, '--json']).commit_hash);
  const span = Math.max(3, Math.round(((Date.now() - started) / 3) * 1.5));
  const kills = stress(80);
  for (let i = 0; i < kills; i++) {
    const child = spawn(SMRITI, ['commit', 'crash', '-m', `c${i}`, '--decision', `d${i}`, '--json'],
      { env: childEnv({ SMRITI_DB: t.db }) });
    let stdout = '';
    child.stdout.on('data', (d) => { stdout += d; });
    // Kill at varying points of the process's life: before, during or after its transaction.
    const timer = setTimeout(() => child.kill('SIGKILL'), Math.round(((i * 37) % 80) / 80 * span));
    const [code, signal] = await new Promise((res) => child.on('close', (c, s) => res([c, s])));
    clearTimeout(timer);
    if (signal === 'SIGKILL') killed++;
    if (code === 0) acknowledged.push(JSON.parse(stdout).commit_hash);
  }
  const log = ok(t.db, ['log', 'crash', '--json']).map((c) => c.commit_hash);
  for (const h of acknowledged) assert.ok(log.includes(h), `acknowledged ${h} survived`);
  assert.equal(ok(t.db, ['fsck', '--json']).ok, true);
  assert.ok(killed > 0, 'some writers were killed');
  assert.ok(acknowledged.length > 3, 'some writers finished');
  // the database still takes writes after the crashes
  assert.equal(run(t.db, ['commit', 'crash', '-m', 'after']).code, 0);
  t.cleanup();
});
