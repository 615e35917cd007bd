// cli.test.mjs -- end-to-end tests of the agent CLI: the real binary against
// a temporary SQLite database, its JSON contract, human output, exit codes,
// and bad input that must change nothing.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDb, run, ok, SMRITI } from './helpers.mjs';

// A full dump of the database, to prove that a failed command wrote nothing.
function dump(db) {
  return execFileSync('sqlite3', [db, '.dump'], { encoding: 'utf8' })
    .split('\n').filter((l) => !l.startsWith('INSERT INTO servers ')).join('\n')  // a server's heartbeat moves;
}

function assertUnchanged(t, db, args, { code, stderr, input } = {}) {
  const before = dump(db);
  const r = run(db, args, { input });
  assert.equal(r.code, code, `exit code of ${args.join(' ')}: ${r.stderr}`);
  assert.equal(r.stdout, '', 'nothing on stdout');
  assert.match(r.stderr, /^smriti: /);
  assert.equal(r.stderr.trim().split('\n').length <= 2, true, 'a short error');
  if (stderr) assert.match(r.stderr, stderr);
  assert.equal(dump(db), before, 'database unchanged');
}

describe('spaces', () => {
  let t;
  before(() => { t = tempDb(); });
  after(() => t.cleanup());

  test('create, list, rename, delete', () => {
    const sp = ok(t.db, ['space', 'create', 'alpha', '--description', 'first line', '--json']);
    assert.equal(sp.name, 'alpha');
    assert.equal(sp.description, 'first line');
    assert.equal(sp.head, null);
    assert.match(sp.id, /^[0-9a-f-]{36}$/);
    assert.match(ok(t.db, ['space', 'create', 'beta']), /created space 'beta'/);
    const list = ok(t.db, ['space', 'list', '--json']);
    assert.deepEqual(list.map((s) => s.name), ['alpha', 'beta']);
    assert.match(ok(t.db, ['space', 'list']), /alpha\s+\(empty\)\s+first line/);
    const renamed = ok(t.db, ['space', 'rename', 'beta', 'gamma', '--json']);
    assert.equal(renamed.name, 'gamma');
    assert.equal(run(t.db, ['space', 'rename', 'gamma', 'alpha']).code, 4);
    assert.equal(run(t.db, ['space', 'create', 'alpha']).code, 4);
    assertUnchanged(t, t.db, ['space', 'delete', 'gamma'], { code: 2, stderr: /--yes/ });
    assert.match(ok(t.db, ['space', 'delete', 'gamma', '--yes']), /deleted space 'gamma'/);
    assert.equal(run(t.db, ['space', 'delete', 'gamma', '--yes']).code, 3);
    assert.deepEqual(ok(t.db, ['space', 'list', '--json']).map((s) => s.name), ['alpha']);
  });

  test('bad names are refused', () => {
    for (const bad of ['', 'a~b', 'a^2', 'a/b', 'tab\there', ' lead', 'x'.repeat(101)]) {
      assertUnchanged(t, t.db, ['space', 'create', bad], { code: 2 });
    }
    assertUnchanged(t, t.db, ['space', 'create', 'wordy', '--description', 'd'.repeat(10001)],
      { code: 2, stderr: /description is longer than 10000 characters/ });
  });
});

describe('checkpoints', () => {
  let t, first, second;
  before(() => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'demo']);
    writeFileSync(path.join(t.dir, 'plan.md'), '# Plan\nnaïve café ✓\n');
  });
  after(() => t.cleanup());

  test('create with every kind of field', () => {
    first = ok(t.db, ['checkpoint', 'create', 'demo', '--title', 'Pick a store',
      '--summary', 'Compared options', '--decision', 'Use SQLite', '--decision', 'Write C',
      '--assumption', 'One machine', '--task', 'Write schema', '--question', 'When PostgreSQL?',
      '--entity', 'SQLite', '--artifact', `plan=@${path.join(t.dir, 'plan.md')}`,
      '--meta', 'tool=test', '--author', 'ada', '--json']);
    assert.match(first.commit_hash, /^[0-9a-f]{64}$/);
    assert.equal(first.parent_hash, null);
    assert.equal(first.space, 'demo');
    assert.deepEqual(first.decisions, [{ text: 'Use SQLite' }, { text: 'Write C' }]);
    assert.deepEqual(first.assumptions, [{ text: 'One machine' }]);
    assert.deepEqual(first.tasks, [{ text: 'Write schema', status: 'open' }]);
    assert.deepEqual(first.open_questions, [{ text: 'When PostgreSQL?' }]);
    assert.deepEqual(first.entities, [{ name: 'SQLite' }]);
    assert.deepEqual(first.artifacts, [{ name: 'plan', kind: 'text', content: '# Plan\nnaïve café ✓\n' }]);
    assert.deepEqual(first.metadata, { tool: 'test' });
    assert.equal(first.author, 'ada');
    assert.match(first.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    for (const k of ['commit_hash', 'parent_hash', 'space', 'title', 'summary', 'decisions', 'assumptions',
      'tasks', 'open_questions', 'entities', 'artifacts', 'metadata', 'author', 'created_at']) {
      assert.ok(k in first, `has ${k}`);
    }
  });

  test('commit alias goes on top of HEAD; --from-json merges with flags', () => {
    const doc = { title: 'From JSON', decisions: ['Use SQLite', { text: 'Ship a CLI' }],
      tasks: [{ text: 'Write schema', status: 'done' }], metadata: { source: 'file' } };
    writeFileSync(path.join(t.dir, 'c.json'), JSON.stringify(doc));
    second = ok(t.db, ['commit', 'demo', '--from-json', path.join(t.dir, 'c.json'),
      '--decision', 'Add tests', '--json']);
    assert.equal(second.parent_hash, first.commit_hash);
    assert.deepEqual(second.decisions.map((d) => d.text), ['Use SQLite', 'Ship a CLI', 'Add tests']);
    assert.equal(second.tasks[0].status, 'done');
    assert.equal(second.author, 'tester', 'author defaults to $USER');
    const fromStdin = ok(t.db, ['commit', 'demo', '--from-json', '-', '--json'],
      { input: JSON.stringify({ title: 'stdin', summary: 's' }) });
    assert.equal(fromStdin.parent_hash, second.commit_hash);
    const line = ok(t.db, ['commit', 'demo', '-m', 'Human output']);
    assert.match(line, /^\[demo [0-9a-f]{12}\] Human output\n new title\n$/);
  });

  test('head, show, log and ancestry references', () => {
    const head = ok(t.db, ['head', 'demo', '--json']);
    assert.equal(head.title, 'Human output');
    assert.deepEqual(ok(t.db, ['show', 'demo~3', '--json']), { ...first });
    assert.deepEqual(ok(t.db, ['show', first.commit_hash.slice(0, 8), '--json']).commit_hash, first.commit_hash);
    assert.equal(ok(t.db, ['show', `${second.commit_hash.slice(0, 10)}~1`, '--json']).commit_hash, first.commit_hash);
    const log = ok(t.db, ['log', 'demo', '--json']);
    assert.deepEqual(log.map((c) => c.title), ['Human output', 'stdin', 'From JSON', 'Pick a store']);
    assert.equal(ok(t.db, ['log', 'demo', '--limit', '2', '--json']).length, 2);
    const text = ok(t.db, ['log', 'demo']);
    assert.match(text.split('\n')[0], /^[0-9a-f]{12} \d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}Human output {2}\(tester\)$/);
    const shown = ok(t.db, ['show', 'demo~3']);
    assert.match(shown, /^checkpoint [0-9a-f]{64}\nSpace: {3}demo\n/);
    assert.match(shown, /Decisions:\n {2}1\. Use SQLite\n {2}2\. Write C\n/);
    assert.match(shown, /Tasks:\n {2}1\. \[ \] Write schema\n/);
    assert.match(shown, /Artifacts:\n {2}1\. plan \(text, \d+ bytes\)/);
  });

  test('diff field by field', () => {
    const d = ok(t.db, ['diff', 'demo~3', 'demo~2', '--json']);
    assert.equal(d.from, first.commit_hash);
    assert.equal(d.to, second.commit_hash);
    assert.deepEqual(d.title, { from: 'Pick a store', to: 'From JSON' });
    assert.deepEqual(d.decisions.added.map((x) => x.text), ['Ship a CLI', 'Add tests']);
    assert.deepEqual(d.decisions.removed.map((x) => x.text), ['Write C']);
    assert.equal(d.tasks.changed[0].to.status, 'done');
    const text = ok(t.db, ['diff', 'demo~3', 'demo~2']);
    assert.match(text, /\+ decisions: Ship a CLI/);
    assert.match(text, /- decisions: Write C/);
    assert.match(text, /~ tasks: Write schema \(open -> done\)/);
    assert.equal(ok(t.db, ['diff', 'demo', 'demo', '--json']).identical, true);
  });

  test('a stale --parent exits 4, names HEAD and writes nothing', () => {
    const head = ok(t.db, ['head', 'demo', '--json']);
    assertUnchanged(t, t.db, ['commit', 'demo', '-m', 'late', '--parent', first.commit_hash],
      { code: 4, stderr: new RegExp(head.commit_hash) });
    const next = ok(t.db, ['commit', 'demo', '-m', 'on time', '--parent', head.commit_hash.slice(0, 12), '--json']);
    assert.equal(next.parent_hash, head.commit_hash);
  });

  test('restore puts an old state on top of HEAD', () => {
    const head = ok(t.db, ['head', 'demo', '--json']);
    const r = ok(t.db, ['restore', 'demo', first.commit_hash, '--json']);
    assert.equal(r.parent_hash, head.commit_hash);
    assert.equal(r.title, first.title);
    assert.deepEqual(r.decisions, first.decisions);
    assert.deepEqual(r.artifacts, first.artifacts);
    assert.equal(r.metadata.restored_from, first.commit_hash);
  });

  test('fork shares ancestry with the same hashes', () => {
    const sp = ok(t.db, ['fork', 'demo~4', '--into', 'demo-alt', '--json']);
    assert.equal(sp.name, 'demo-alt');
    assert.equal(sp.head, second.commit_hash);
    const log = ok(t.db, ['log', 'demo-alt', '--json']);
    assert.deepEqual(log.map((c) => c.commit_hash), [second.commit_hash, first.commit_hash]);
    assert.ok(log.every((c) => c.space === 'demo-alt'));
    assert.equal(run(t.db, ['fork', 'demo', '--into', 'demo-alt']).code, 4);
    const fsck = ok(t.db, ['fsck', '--json']);
    assert.equal(fsck.ok, true);
    assert.equal(fsck.spaces, 2);
    assert.match(ok(t.db, ['fsck']), /checked \d+ checkpoints in 2 spaces: ok/);
  });
});

describe('bad input is refused and changes nothing', () => {
  let t;
  before(() => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'demo']);
    ok(t.db, ['commit', 'demo', '-m', 'base', '--decision', 'x']);
    writeFileSync(path.join(t.dir, 'bad.json'), '{"title": "unterminated');
    writeFileSync(path.join(t.dir, 'types.json'), '{"title": 7}');
    writeFileSync(path.join(t.dir, 'list.json'), '{"decisions": "not a list"}');
    writeFileSync(path.join(t.dir, 'array.json'), '[1,2]');
    writeFileSync(path.join(t.dir, 'latin1.json'), Buffer.from([0x7b, 0x22, 0x74, 0x69, 0x74, 0x6c, 0x65, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]));
    writeFileSync(path.join(t.dir, 'binary.bin'), Buffer.from([0xff, 0xfe, 0x00, 0x41]));
    writeFileSync(path.join(t.dir, 'status.json'), '{"tasks":[{"text":"a","status":"later"}]}');
  });
  after(() => t.cleanup());

  const f = (name) => path.join(t.dir, name);
  test('malformed JSON', () => assertUnchanged(t, t.db, ['commit', 'demo', '--from-json', f('bad.json')], { code: 2, stderr: /cannot parse/ }));
  test('wrongly typed JSON', () => {
    assertUnchanged(t, t.db, ['commit', 'demo', '--from-json', f('types.json')], { code: 2, stderr: /'checkpoint.title' must be a string/ });
    assertUnchanged(t, t.db, ['commit', 'demo', '--from-json', f('list.json')], { code: 2, stderr: /must be an array/ });
    assertUnchanged(t, t.db, ['commit', 'demo', '--from-json', f('array.json')], { code: 2, stderr: /object/ });
    assertUnchanged(t, t.db, ['commit', 'demo', '--from-json', f('status.json')], { code: 2, stderr: /tasks\[0\].status' must be one of: open, done/ });
  });
  test('invalid UTF-8 in JSON, in arguments and in artifacts', () => {
    assertUnchanged(t, t.db, ['commit', 'demo', '--from-json', f('latin1.json')], { code: 2 });
    // Node encodes argv as UTF-8, so raw bytes go through the shell's printf.
    const before = dump(t.db);
    const r = spawnSync('sh', ['-c', 'exec "$0" commit demo -m "$(printf \'a\\377\')"', SMRITI],
      { encoding: 'utf8', env: { PATH: process.env.PATH, SMRITI_DB: t.db } });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /--title is not valid UTF-8/);
    assert.equal(dump(t.db), before);
    assertUnchanged(t, t.db, ['commit', 'demo', '-m', 'x', '--artifact', `bin=@${f('binary.bin')}`], { code: 2, stderr: /not UTF-8 text/ });
  });
  test('an empty checkpoint', () => {
    assertUnchanged(t, t.db, ['commit', 'demo'], { code: 2, stderr: /nothing to change/ });
    assertUnchanged(t, t.db, ['commit', 'demo', '--replace', '--title', '   '], { code: 2, stderr: /empty checkpoint/ });
  });
  test('unknown space or ref', () => {
    assertUnchanged(t, t.db, ['commit', 'nope', '-m', 'x'], { code: 3, stderr: /no space 'nope'/ });
    assertUnchanged(t, t.db, ['head', 'nope'], { code: 3 });
    assertUnchanged(t, t.db, ['show', 'deadbeef'], { code: 3, stderr: /no checkpoint matches 'deadbeef'/ });
    assertUnchanged(t, t.db, ['show', 'demo~5'], { code: 3, stderr: /past the first checkpoint/ });
    assertUnchanged(t, t.db, ['log', 'nope'], { code: 3 });
    assertUnchanged(t, t.db, ['restore', 'demo', 'nope'], { code: 3 });
    assertUnchanged(t, t.db, ['commit', 'demo', '-m', 'x', '--parent', 'beefbeef'], { code: 4, stderr: /not a checkpoint/ });
  });
  test('an ambiguous prefix', () => {
    // Two rows whose hashes share a prefix, planted directly: the CLI must refuse to guess.
    const head = ok(t.db, ['head', 'demo', '--json']);
    // shares 6 characters with HEAD and differs at the 7th
    const seventh = head.commit_hash[6] === '0' ? '1' : '0';
    const fake = head.commit_hash.slice(0, 6) + seventh + '0'.repeat(57);
    execFileSync('sqlite3', [t.db, `INSERT INTO commits (repo_id, commit_hash, title, summary, decisions, assumptions, tasks, open_questions, entities, artifacts, metadata_, author, created_at) SELECT repo_id, '${fake}', 't', '', '[]', '[]', '[]', '[]', '[]', '[]', '{}', '', created_at FROM commits LIMIT 1`]);
    assertUnchanged(t, t.db, ['show', head.commit_hash.slice(0, 6)], { code: 2, stderr: /ambiguous/ });
    assert.equal(ok(t.db, ['show', head.commit_hash.slice(0, 7), '--json']).commit_hash, head.commit_hash);
  });
  test('a missing artifact file', () => {
    assertUnchanged(t, t.db, ['commit', 'demo', '-m', 'x', '--artifact', `a=@${f('missing.txt')}`], { code: 2, stderr: /cannot open/ });
    assertUnchanged(t, t.db, ['commit', 'demo', '-m', 'x', '--artifact', 'no-at-sign'], { code: 2, stderr: /NAME=@FILE/ });
  });
  test('usage errors', () => {
    assertUnchanged(t, t.db, ['frobnicate'], { code: 2, stderr: /not a smriti command/ });
    assertUnchanged(t, t.db, ['log', 'demo', '--limit', 'many'], { code: 2 });
    assertUnchanged(t, t.db, ['diff', 'demo'], { code: 2 });
    assertUnchanged(t, t.db, ['commit', 'demo', '--bogus'], { code: 2 });
  });
});

describe('help', () => {
  test('every command answers --help with its usage and exit 0', () => {
    const t = tempDb();
    for (const cmd of ['space', 'checkpoint', 'commit', 'head', 'show', 'log', 'diff', 'restore', 'fork', 'fsck']) {
      const r = run(t.db, [cmd, '--help']);
      assert.equal(r.code, 0, cmd);
      assert.match(r.stdout, /^usage: smriti /, cmd);
    }
    const r = run(t.db, ['help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Exit codes: 0 ok/);
    t.cleanup();
  });

  test('the default database lives under XDG_DATA_HOME', () => {
    const t = tempDb();
    const r = run(undefined, ['space', 'create', 'x'], { env: { SMRITI_DB: '', XDG_DATA_HOME: path.join(t.dir, 'xdg') } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(dump(path.join(t.dir, 'xdg', 'smriti', 'smriti.db')), /INSERT INTO repos/);
    t.cleanup();
  });
});
