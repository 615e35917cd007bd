// review.test.mjs -- end-to-end tests of `smriti review`: the real lean
// binary on a temporary database, the typed findings of the deterministic
// pass in --json, the grouped human output, and proof that reviewing leaves
// the checkpoint (and the whole database) exactly as it was.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDb, run, ok } from './helpers.mjs';
import { startServer } from './http-helpers.mjs';

// The database as text, but for the servers' heartbeats (a running server
// moves its own every second: docs/scale-out.md, leases).
function dump(db) {
  return execFileSync('sqlite3', [db, '.dump'], { encoding: 'utf8' })
    .split('\n').filter((l) => !l.startsWith('INSERT INTO servers ')).join('\n');
}

const CHECKPOINT = {
  title: 'Storage plan',
  summary: 'Choosing storage for the invoice service',
  decisions: [
    'Use Postgres',
    'Use SQLite instead of Postgres',
    'Cache invoices in Redis because reads dominate',
    'We will use Postgres.',
    'Ship the beta on Monday',
  ],
  assumptions: ['The team knows SQL'],
  tasks: ['Benchmark invoice reads in Grafana'],
  open_questions: ['Which database should we use?', 'When is the public launch?'],
  entities: [
    { name: 'Postgres', kind: 'database' },
    { name: 'Redis' },
    { name: 'Grafana', kind: 'tool' },
    { name: 'Kafka', kind: 'queue' },
  ],
};

const item = (field, index, text) => ({ field, index, text });

describe('smriti review', () => {
  let t, hash;
  before(() => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'plan']);
    const file = path.join(t.dir, 'c.json');
    writeFileSync(file, JSON.stringify(CHECKPOINT));
    hash = ok(t.db, ['checkpoint', 'create', 'plan', '--from-json', file, '--json']).commit_hash;
    ok(t.db, ['space', 'create', 'clean']);
    ok(t.db, ['checkpoint', 'create', 'clean', '--decision', 'Use Postgres',
      '--assumption', 'Postgres is available', '--question', 'When do we launch?',
      '--entity', 'Postgres']);
  });
  after(() => t.cleanup());

  test('--json lists typed findings with their items and pass', () => {
    const r = ok(t.db, ['review', 'plan', '--json']);
    assert.equal(r.commit_hash, hash);
    assert.equal(r.space, 'plan');
    assert.deepEqual(r.passes, [
      { source: 'deterministic', ran: true, findings: 6 },
      { source: 'llm', ran: false, reason: 'no provider configured' },
    ]);
    const brief = r.findings.map((f) => ({ type: f.type, items: f.items, source: f.source }));
    const det = 'deterministic';
    assert.deepEqual(brief, [
      { type: 'contradiction', source: det,
        items: [item('decisions', 0, 'Use Postgres'), item('decisions', 1, 'Use SQLite instead of Postgres')] },
      { type: 'contradiction', source: det,
        items: [item('decisions', 1, 'Use SQLite instead of Postgres'), item('decisions', 3, 'We will use Postgres.')] },
      { type: 'duplicate_decision', source: det,
        items: [item('decisions', 0, 'Use Postgres'), item('decisions', 3, 'We will use Postgres.')] },
      { type: 'hidden_assumption', source: det,
        items: [item('decisions', 2, 'Cache invoices in Redis because reads dominate')] },
      { type: 'resolved_question', source: det,
        items: [item('open_questions', 0, 'Which database should we use?'), item('decisions', 0, 'Use Postgres')] },
      { type: 'disconnected_entity', source: det, items: [item('entities', 3, 'Kafka')] },
    ]);
    assert.match(r.findings[3].message, /relies on 'reads dominate'/);
    for (const f of r.findings) assert.equal(typeof f.message, 'string');
  });

  test('human output groups findings by type and names the pass', () => {
    const out = ok(t.db, ['review', hash.slice(0, 10)]);
    assert.match(out, new RegExp(`^review of checkpoint ${hash.slice(0, 12)} in space 'plan'\n`));
    assert.match(out, /deterministic pass: ran, 6 findings\nllm pass: did not run \(no provider configured\)\n/);
    const order = ['Contradictions:', 'Duplicate decisions:', 'Hidden assumptions:',
      'Resolved questions:', 'Disconnected entities:'].map((h) => out.indexOf(`\n${h}\n`));
    assert.ok(order.every((i) => i > 0), out);
    assert.deepEqual([...order].sort((a, b) => a - b), order);
    assert.match(out, /- entity 'Kafka' is not mentioned .*\[deterministic\]\n {6}entities\[3\]: Kafka\n/);
    assert.match(out, /\n6 findings\n$/);
  });

  test('a consistent checkpoint has no findings', () => {
    const r = ok(t.db, ['review', 'clean', '--json']);
    assert.deepEqual(r.findings, []);
    assert.match(ok(t.db, ['review', 'clean']), /\nno findings\n$/);
  });

  test('review never changes the checkpoint or anything else', () => {
    const before = dump(t.db);
    const shown = ok(t.db, ['show', 'plan', '--json']);
    ok(t.db, ['review', 'plan', '--json']);
    ok(t.db, ['review', 'plan']);
    ok(t.db, ['review', `${hash}`, '--no-llm', '--json']);
    assert.equal(dump(t.db), before);
    assert.deepEqual(ok(t.db, ['show', 'plan', '--json']), shown);
    assert.equal(ok(t.db, ['head', 'plan', '--json']).commit_hash, hash);
    const fsck = ok(t.db, ['fsck', '--json']);
    assert.equal(fsck.ok, true);
    assert.deepEqual(fsck.problems, []);
  });

  test('--no-llm says the LLM pass was not requested', () => {
    const r = ok(t.db, ['review', 'plan', '--no-llm', '--json']);
    assert.deepEqual(r.passes[1], { source: 'llm', ran: false, reason: 'not requested' });
  });

  test('older checkpoints are reviewed by REF', () => {
    ok(t.db, ['checkpoint', 'create', 'plan', '--replace', '--decision', 'Avoid MySQL', '--decision', "Don't use MySQL"]);
    const now = ok(t.db, ['review', 'plan', '--json']);
    assert.deepEqual(now.findings.map((f) => f.type), ['duplicate_decision']);
    const old = ok(t.db, ['review', 'plan~1', '--json']);
    assert.equal(old.commit_hash, hash);
    assert.equal(old.findings.length, 6);
  });

  test('errors exit with the documented codes and write nothing', () => {
    const before = dump(t.db);
    const cases = [
      [['review', 'nosuch'], 3, /no space or checkpoint named 'nosuch'/],
      [['review', 'plan~99'], 3, /goes back past the first checkpoint/],
      // no REF and no project (smriti init) to take it from
      [['review'], 2, /name a REF, or run 'smriti init SPACE'/],
      [['review', 'plan', 'clean'], 2, /give one REF \(or none in a project\)/],
      [['review', 'plan', '--bogus'], 2, /unknown option '--bogus'/],
    ];
    for (const [args, code, msg] of cases) {
      const r = run(t.db, args);
      assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^smriti: /);
      assert.match(r.stderr, msg);
    }
    assert.equal(dump(t.db), before);
  });

  test('through smriti serve the output is the same as locally', async () => {
    const srv = await startServer(t.db);
    try {
      const before = dump(t.db);
      for (const args of [['review', hash, '--json'], ['review', hash], ['review', 'clean']]) {
        const remote = run(t.db, ['--remote', srv.url, ...args]);
        assert.equal(remote.code, 0, remote.stderr);
        assert.equal(remote.stdout, run(t.db, args).stdout);
      }
      const r = run(t.db, ['--remote', srv.url, 'review', 'nosuch']);
      assert.equal(r.code, 3);
      assert.match(r.stderr, /no space or checkpoint named 'nosuch'/);
      assert.equal(dump(t.db), before);
    } finally {
      await srv.stop();
    }
  });

  test('--help explains the command', () => {
    const out = ok(t.db, ['review', '--help']);
    assert.match(out, /^usage: smriti review REF/);
    assert.match(out, /never changed/);
  });
});
