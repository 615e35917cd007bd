// bundle.test.mjs -- `smriti export` and `smriti import` from the command
// line: a bundle moves a store's history to another store byte for byte,
// importing twice adds nothing, and a bundle with one byte changed is
// refused with nothing written.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { tempDb, ok, run } from './helpers.mjs';

let t;
before(() => {
  t = tempDb('from.db');
  ok(t.db, ['space', 'create', 'trip']);
  ok(t.db, ['commit', '--replace', 'trip', '--title', 'Kyoto', '--decision', 'Go in April']);
  ok(t.db, ['commit', '--replace', 'trip', '--title', 'Osaka too', '--decision', 'Go in April', '--task', 'book ryokan']);
  ok(t.db, ['space', 'create', 'work']);
  ok(t.db, ['commit', '--replace', 'work', '--title', 'Plan', '--summary', 'ünïcödé ✓']);
});
after(() => t.cleanup());

const dump = (db) => execFileSync('sqlite3', [db, '.dump'], { encoding: 'utf8' })
    .split('\n').filter((l) => !l.startsWith('INSERT INTO servers ')).join('\n')  // a server's heartbeat moves;

test('export -> import -> export gives the same bundle; importing again adds nothing', () => {
  const file = path.join(t.dir, 'b.json');
  ok(t.db, ['export', '--all', '-o', file]);
  const to = path.join(t.dir, 'to.db');
  assert.match(ok(to, ['import', file]), /^created space 'trip': 2 checkpoints, 0 sessions, 0 turns, 3 reflog entries added$/m);
  const again = ok(to, ['import', file, '--json']);
  assert.equal(again.checkpoints, 0);
  assert.equal(ok(to, ['export', '--all']), readFileSync(file, 'utf8'));
  assert.equal(ok(to, ['show', 'trip@{1}', '--json']).title, 'Kyoto');
  assert.equal(ok(t.db, ['export', 'work']), `${JSON.stringify(JSON.parse(ok(t.db, ['export', 'work'])))}\n`);
  assert.equal(JSON.parse(ok(t.db, ['export', 'work'])).spaces.length, 1);
});

test('a bundle with one byte changed is refused and nothing is written', () => {
  const text = ok(t.db, ['export', '--all']);
  const to = tempDb('bad.db');
  try {
    ok(to.db, ['space', 'create', 'bystander']);
    const before = dump(to.db);
    const i = text.indexOf('ryokan');
    const bad = path.join(to.dir, 'bad.json');
    writeFileSync(bad, `${text.slice(0, i)}R${text.slice(i + 1)}`);
    const r = run(to.db, ['import', bad]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /checkpoint [0-9a-f]{12} does not hash to its commit_hash.*nothing was imported/);
    assert.equal(dump(to.db), before);
    // a byte of the reflog, which no checkpoint hash covers: the bundle's sha256 does
    const j = text.indexOf('commit (initial)');
    writeFileSync(bad, `${text.slice(0, j)}C${text.slice(j + 1)}`);
    const r2 = run(to.db, ['import', bad]);
    assert.equal(r2.code, 2);
    assert.match(r2.stderr, /does not match its sha256.*nothing was imported/);
    assert.equal(dump(to.db), before);
    writeFileSync(bad, text.slice(0, 100));
    assert.equal(run(to.db, ['import', bad]).code, 2);
    assert.equal(dump(to.db), before);
  } finally {
    to.cleanup();
  }
});

test('usage errors', () => {
  assert.equal(run(t.db, ['export']).code, 2);
  assert.equal(run(t.db, ['export', 'trip', '--all']).code, 2);
  assert.equal(run(t.db, ['export', 'nope']).code, 3);
  assert.equal(run(t.db, ['import']).code, 2);
});
