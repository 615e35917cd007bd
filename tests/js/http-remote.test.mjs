// http-remote.test.mjs -- the CLI against a server (SMRITI_URL / --remote)
// gives the same output and exit codes as the CLI on the local store.
//
// Local and remote runs use the SAME database file, which the server has
// open, so reads can be compared byte for byte.  Writes cannot be: two
// writes get different timestamps and so different hashes, ids and names.
// Each write is therefore made twice, once locally into one Space and once
// remotely into a twin Space with a name of the same length, and the outputs
// are compared after hashes, ids, times and the two names are replaced by
// placeholders in order of appearance.  Errors that write nothing (unknown
// Space, stale parent, usage) are compared byte for byte.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb, run, SMRITI } from './helpers.mjs';
import { startServer } from './http-helpers.mjs';

let tmp;
let srv;

before(async () => {
  tmp = tempDb();
  srv = await startServer(tmp.db, { args: ['--quiet'] });
  const local = (args) => {
    const r = run(tmp.db, args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  };
  local(['space', 'create', 'shared', '--description', 'read by both']);
  local(['commit', 'shared', '-m', 'one', '--decision', 'use C', '--task', 'write tests',
    '--entity', 'smriti', '--meta', 'tool=test']);
  local(['commit', 'shared', '-m', 'two', '--assumption', 'loopback only',
    '--question', 'which port?', '--summary', 'second step']);
  local(['commit', 'shared', '--replace', '-m', 'three', '--decision', 'use C', '--decision', 'use SQLite']);
  local(['space', 'create', 'empty']);
});

after(async () => {
  await srv?.stop();
  tmp?.cleanup();
});

const local = (args) => run(tmp.db, args);
const remote = (args, env = {}) => run(tmp.db, args, { env: { SMRITI_URL: srv.url, ...env } });

function same(args) {
  const l = local(args);
  const r = remote(args);
  assert.equal(r.code, l.code, `${args.join(' ')}: exit ${r.code} remote vs ${l.code} local\n${r.stderr}`);
  assert.equal(r.stdout, l.stdout, `${args.join(' ')}: stdout differs`);
  assert.equal(r.stderr, l.stderr, `${args.join(' ')}: stderr differs`);
  return l;
}

// Replaces what differs between two equivalent writes by placeholders.
function normalize(text, names) {
  const seen = new Map();
  const tag = (key, prefix) => {
    if (!seen.has(key)) seen.set(key, `<${prefix}${seen.size}>`);
    return seen.get(key);
  };
  let t = text;
  for (const n of names) t = t.split(n).join('<NAME>');
  t = t.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (m) => tag(m, 'ID'));
  t = t.replace(/\b[0-9a-f]{64}\b/g, (m) => tag(m.slice(0, 12), 'H'));
  t = t.replace(/\b[0-9a-f]{12}\b/g, (m) => tag(m, 'H'));
  t = t.replace(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?Z?/g, '<TIME>');
  return t;
}

// Runs a write locally with mine() and remotely with theirs(): equal shapes.
function twin(localArgs, remoteArgs, names) {
  const l = local(localArgs);
  const r = remote(remoteArgs);
  assert.equal(r.code, l.code, `${remoteArgs.join(' ')}: exit ${r.code} vs ${l.code}\n${r.stderr}${l.stderr}`);
  assert.equal(normalize(r.stdout, names), normalize(l.stdout, names), `${remoteArgs.join(' ')}: stdout`);
  assert.equal(normalize(r.stderr, names), normalize(l.stderr, names), `${remoteArgs.join(' ')}: stderr`);
  return { l, r };
}

describe('reads are identical byte for byte', () => {
  const reads = [
    ['space', 'list'], ['head', 'shared'], ['show', 'shared~1'], ['show', 'shared~2'],
    ['log', 'shared'], ['log', 'shared', '--limit', '2'], ['log', 'shared~1'],
    ['diff', 'shared~2', 'shared'], ['diff', 'shared', 'shared'], ['fsck'], ['fsck', 'shared'],
  ];
  for (const args of reads) {
    test(args.join(' '), () => {
      assert.equal(same(args).code, 0);
      assert.equal(same([...args, '--json']).code, 0);
    });
  }

  test('by hash and by prefix', () => {
    const head = local(['head', 'shared', '--json']).json();
    assert.equal(same(['show', head.commit_hash]).code, 0);
    assert.equal(same(['show', head.commit_hash.slice(0, 8), '--json']).code, 0);
    assert.equal(same(['log', head.commit_hash.slice(0, 10), '--limit', '1']).code, 0);
  });

  test('--remote URL works like SMRITI_URL', () => {
    const l = local(['log', 'shared', '--json']);
    const r = run(tmp.db, ['--remote', srv.url, 'log', 'shared', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, l.stdout);
  });
});

describe('errors give the same message and exit code', () => {
  const cases = [
    [['head', 'nosuch'], 3], [['head', 'empty'], 3], [['show', 'deadbeef'], 3],
    [['show', 'shared~9'], 3], [['log', 'nosuch'], 3], [['diff', 'shared', 'nosuch'], 3],
    [['fsck', 'nosuch'], 3], [['space', 'rename', 'nosuch', 'other'], 3],
    [['space', 'delete', 'nosuch', '--yes'], 3], [['restore', 'nosuch', 'shared'], 3],
    [['fork', 'nosuch', '--into', 'x'], 3], [['commit', 'nosuch', '-m', 'x'], 3],
    [['space', 'create', 'shared'], 4], [['space', 'rename', 'empty', 'shared'], 4],
    [['fork', 'shared', '--into', 'empty'], 4],
    [['space', 'create', 'bad/name'], 2], [['commit', 'shared'], 2],
    [['head'], 2], [['log', 'shared', '--limit', 'x'], 2], [['space', 'bogus'], 2],
    [['diff', 'shared'], 2], [['show', '--bogus'], 2],
  ];
  for (const [args, code] of cases) {
    test(`${args.join(' ')} exits ${code}`, () => {
      const before = local(['log', 'shared', '--json']).stdout + local(['space', 'list', '--json']).stdout;
      assert.equal(same(args).code, code);
      assert.equal(same([...args, '--json']).code, code);
      const after = local(['log', 'shared', '--json']).stdout + local(['space', 'list', '--json']).stdout;
      assert.equal(after, before, 'a failed command wrote something');
    });
  }

  test('checkpoint create with a stale --parent is a conflict (exit 4), nothing written', () => {
    const log = local(['log', 'shared', '--json']).json();
    const stale = log[1].commit_hash;
    for (const args of [
      ['checkpoint', 'create', 'shared', '--title', 'late', '--parent', stale],
      ['commit', 'shared', '-m', 'late', '--parent', stale.slice(0, 10), '--json'],
      ['commit', 'shared', '-m', 'late', '--parent', 'f'.repeat(64)],
    ]) {
      const l = same(args);
      assert.equal(l.code, 4);
      assert.ok(l.stderr.includes(log[0].commit_hash), l.stderr);
    }
    assert.deepEqual(local(['log', 'shared', '--json']).json(), log);
  });

  test('an unreachable server exits 1, a missing token 6 (not allowed), each with a message', async () => {
    const down = run(tmp.db, ['head', 'shared'], { env: { SMRITI_URL: 'http://127.0.0.1:1' } });
    assert.equal(down.code, 1);
    assert.match(down.stderr, /cannot reach server/);
    const t = tempDb();
    const guarded = await startServer(t.db, { args: ['--quiet'], env: { SMRITI_TOKEN: 'remote-tok' } });
    try {
      const env = { SMRITI_URL: guarded.url };
      const no = run(t.db, ['space', 'list'], { env });
      assert.equal(no.code, 6);
      assert.match(no.stderr, /bearer token/);
      const yes = run(t.db, ['space', 'create', 'tok', '--json'], { env: { ...env, SMRITI_TOKEN: 'remote-tok' } });
      assert.equal(yes.code, 0, yes.stderr);
      assert.equal(yes.json().name, 'tok');
    } finally {
      await guarded.stop();
      t.cleanup();
    }
  });
});

describe('writes have the same shape locally and remotely', () => {
  test('space create / rename, checkpoint create, restore, fork, delete', () => {
    const names = ['wl', 'wr', 'fl', 'fr', 'zl', 'zr'];
    twin(['space', 'create', 'wl'], ['space', 'create', 'wr'], names);
    twin(['space', 'create', 'zl', '--json'], ['space', 'create', 'zr', '--json'], names);
    const mk = (sp, json) => ['checkpoint', 'create', sp, '--title', 'first', '--summary', 's',
      '--decision', 'd1', '--assumption', 'a1', '--task', 't1', '--question', 'q1',
      '--entity', 'e1', '--meta', 'k=v', '--author', 'agent', ...(json ? ['--json'] : [])];
    twin(mk('wl', false), mk('wr', false), names);
    twin(mk('wl', true), mk('wr', true), names);
    // a matching --parent is accepted on both sides
    const lh = local(['head', 'wl', '--json']).json().commit_hash;
    const rh = local(['head', 'wr', '--json']).json().commit_hash;
    twin(['commit', 'wl', '-m', 'next', '--parent', lh], ['commit', 'wr', '-m', 'next', '--parent', rh], names);
    twin(['restore', 'wl', 'wl~1'], ['restore', 'wr', 'wr~1'], names);
    twin(['restore', 'wl', 'wl~2', '--json'], ['restore', 'wr', 'wr~2', '--json'], names);
    twin(['log', 'wl'], ['log', 'wr'], names);
    twin(['fork', 'wl~1', '--into', 'fl'], ['fork', 'wr~1', '--into', 'fr'], names);
    twin(['log', 'fl', '--json'], ['log', 'fr', '--json'], names);
    twin(['space', 'rename', 'zl', 'zl'], ['space', 'rename', 'zr', 'zr'], names);
    twin(['space', 'delete', 'fl', '--yes'], ['space', 'delete', 'fr', '--yes'], names);
    twin(['space', 'delete', 'zl', '--yes', '--json'], ['space', 'delete', 'zr', '--yes', '--json'], names);
    const spaces = local(['space', 'list', '--json']).json().map((s) => s.name).sort();
    assert.deepEqual(spaces, ['empty', 'shared', 'wl', 'wr']);
    assert.equal(same(['fsck']).code, 0);
  });

  test('commit on top of the parent and merge, conflicts included', () => {
    const names = ['ml', 'mr', 'mlf', 'mrf'];
    twin(['space', 'create', 'ml'], ['space', 'create', 'mr'], names);
    twin(['commit', 'ml', '-m', 'base', '--task', 't1'], ['commit', 'mr', '-m', 'base', '--task', 't1'], names);
    twin(['commit', 'ml', '--done', '1', '--decision', 'd'], ['commit', 'mr', '--done', '1', '--decision', 'd'], names);
    twin(['commit', 'ml', '--drop', 'task=9'], ['commit', 'mr', '--drop', 'task=9'], names);
    twin(['fork', 'ml~1', '--into', 'mlf'], ['fork', 'mr~1', '--into', 'mrf'], names);
    twin(['commit', 'mlf', '-m', 'other', '--summary', 'other'], ['commit', 'mrf', '-m', 'other', '--summary', 'other'], names);
    twin(['commit', 'ml', '-m', 'mine', '--summary', 'mine'], ['commit', 'mr', '-m', 'mine', '--summary', 'mine'], names);
    twin(['merge', 'ml', 'mlf'], ['merge', 'mr', 'mrf'], names);               // exit 4, conflicts listed
    twin(['merge', 'ml', 'mlf', '--json'], ['merge', 'mr', 'mrf', '--json'], names);
    twin(['merge', 'ml', 'mlf', '--theirs'], ['merge', 'mr', 'mrf', '--theirs'], names);
    twin(['merge', 'mlf', 'ml', '--json'], ['merge', 'mrf', 'mr', '--json'], names);
    twin(['log', 'ml', '--graph'], ['log', 'mr', '--graph'], names);
  });
});
