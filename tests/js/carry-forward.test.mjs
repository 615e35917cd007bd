// carry-forward.test.mjs -- `smriti commit` writes on top of the parent's
// state: the example keeps the trip's dates, each change is said,
// and every bad --drop / --done / --reopen / duplicate add is refused with
// exit 2 and nothing written.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { tempDb, run, ok } from './helpers.mjs';

const dump = (db) => execFileSync('sqlite3', [db, '.dump'], { encoding: 'utf8' })
    .split('\n').filter((l) => !l.startsWith('INSERT INTO servers ')).join('\n')  // a server's heartbeat moves;

describe('commit starts from the parent', () => {
  let t;
  before(() => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'trip']);
  });
  after(() => t.cleanup());

  test('the README example keeps the dates', () => {
    ok(t.db, ['checkpoint', 'create', 'trip', '--title', 'Dates fixed', '--decision', 'Travel 3-10 April',
      '--assumption', 'Blossoms early April', '--task', 'Book flights', '--question', 'Ryokan or hotel?',
      '--entity', 'Kyoto']);
    const out = ok(t.db, ['commit', 'trip', '-m', 'Flights booked', '--decision', 'Fly via Helsinki']);
    assert.match(out, /^\[trip [0-9a-f]{12}\] Flights booked\n \+1 decision, new title\n$/);
    const head = ok(t.db, ['show', 'trip', '--json']);
    assert.deepEqual(head.decisions.map((d) => d.text), ['Travel 3-10 April', 'Fly via Helsinki']);
    assert.deepEqual(head.assumptions.map((d) => d.text), ['Blossoms early April']);
    assert.deepEqual(head.tasks, [{ text: 'Book flights', status: 'open' }]);
    assert.deepEqual(head.open_questions.map((d) => d.text), ['Ryokan or hotel?']);
    assert.deepEqual(head.entities.map((d) => d.name), ['Kyoto']);
  });

  test('drop, done, reopen by text or by the number show prints', () => {
    assert.match(ok(t.db, ['show', 'trip']), /Decisions:\n {2}1\. Travel 3-10 April\n {2}2\. Fly via Helsinki\n/);
    const out = ok(t.db, ['commit', 'trip', '--done', '1', '--drop', 'question=Ryokan or hotel?',
      '--decision', 'Ryokan in Gion', '--decision', 'Rail pass']);
    assert.match(out, /\n \+2 decisions, 1 task done, -1 question\n$/);
    let head = ok(t.db, ['head', 'trip', '--json']);
    assert.equal(head.tasks[0].status, 'done');
    assert.deepEqual(head.open_questions, []);
    ok(t.db, ['commit', 'trip', '--reopen', 'Book flights', '--drop', 'decision=4', '--summary', 'Back to it']);
    head = ok(t.db, ['head', 'trip', '--json']);
    assert.equal(head.tasks[0].status, 'open');
    assert.deepEqual(head.decisions.map((d) => d.text), ['Travel 3-10 April', 'Fly via Helsinki', 'Ryokan in Gion']);
    assert.equal(head.summary, 'Back to it');
    assert.equal(head.title, 'Flights booked');
  });

  test('--replace writes exactly what is given', () => {
    const c = ok(t.db, ['commit', 'trip', '--replace', '-m', 'Fresh start', '--decision', 'Only this', '--json']);
    assert.deepEqual(c.decisions, [{ text: 'Only this' }]);
    assert.deepEqual(c.tasks, []);
    ok(t.db, ['restore', 'trip', 'trip~1']);
  });

  test('each bad --drop, --done, --reopen or duplicate add is refused and writes nothing', () => {
    const cases = [
      [['--drop', 'decision=Take the ferry'], /no decision 'Take the ferry' in the parent checkpoint \(it has 3 decisions\)/],
      [['--drop', 'decision=9'], /no decision at position 9/],
      [['--drop', 'decision=0'], /no decision at position 0/],
      [['--drop', 'colour=red'], /unknown field 'colour'/],
      [['--drop', 'decision'], /--drop wants FIELD=TEXT/],
      [['--drop', 'decision='], /--drop wants FIELD=TEXT/],
      [['--done', 'Book hotel'], /no task 'Book hotel'/],
      [['--done', '2'], /no task at position 2 in the parent checkpoint \(it has 1 task\)/],
      [['--reopen', 'Book flights'], /task 'Book flights' is already open/],
      [['--decision', 'Fly via Helsinki'], /decision 'Fly via Helsinki' is already there/],
      [['--task', 'Pack', '--task', 'Pack'], /task 'Pack' is already there/],
      [['--drop', 'task=1', '--done', '1'], /task 'Book flights' is dropped by this change/],
      [['--replace', '--done', '1'], /do not go with --replace/],
      [[], /nothing to change/],
    ];
    for (const [args, message] of cases) {
      const before = dump(t.db);
      const r = run(t.db, ['commit', 'trip', ...(args.length ? ['-m', 'never written'] : []), ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.equal(r.stdout, '');
      assert.equal(dump(t.db), before, `${args.join(' ')} wrote something`);
    }
  });

  test('--parent makes the change a compare-and-swap', () => {
    const head = ok(t.db, ['head', 'trip', '--json']);
    ok(t.db, ['commit', 'trip', '--decision', 'Someone else was first']);
    const before = dump(t.db);
    const r = run(t.db, ['commit', 'trip', '--decision', 'Late', '--parent', head.commit_hash]);
    assert.equal(r.code, 4);
    assert.match(r.stderr, /parent is stale: HEAD is now/);
    assert.equal(dump(t.db), before);
    const fresh = ok(t.db, ['head', 'trip', '--json']);
    ok(t.db, ['commit', 'trip', '--decision', 'Late', '--parent', fresh.commit_hash.slice(0, 10)]);
    assert.ok(ok(t.db, ['head', 'trip', '--json']).decisions.some((d) => d.text === 'Late'));
    assert.equal(ok(t.db, ['fsck', '--json']).ok, true);
  });
});
