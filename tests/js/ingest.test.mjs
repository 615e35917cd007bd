// ingest.test.mjs -- end-to-end tests of `smriti ingest`: each transcript
// format of tests/fixtures/ingest/ becomes a session whose stored turns
// match exactly, from a file or stdin; unknown, empty, oversized and
// malformed input exit 2 with a clear message and write nothing.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDb, run, ok } from './helpers.mjs';
import { startServer, request } from './http-helpers.mjs';

const FIXTURES = path.join(ROOT, 'tests/fixtures/ingest');
const fixture = (name) => path.join(FIXTURES, name);

// The database as text, but for the servers' heartbeats (a running server
// moves its own every second: docs/scale-out.md, leases).
function dump(db) {
  return execFileSync('sqlite3', [db, '.dump'], { encoding: 'utf8' })
    .split('\n').filter((l) => !l.startsWith('INSERT INTO servers ')).join('\n');
}

// The stored turns of a session, oldest first.
function turns(db, sessionId) {
  const out = execFileSync('sqlite3', ['-json', db,
    `SELECT sequence_number AS seq, role, content, provider FROM turns
     WHERE session_id = '${sessionId}' ORDER BY sequence_number`], { encoding: 'utf8' });
  return out.trim() ? JSON.parse(out) : [];
}

const U = (content) => ({ role: 'user', content });
const A = (content) => ({ role: 'assistant', content });

const EXPECTED = {
  'plain.txt': { format: 'text', title: 'I want to build a small garden shed. Which wood should I use?', turns: [
    U('I want to build a small garden shed. Which wood should I use?'),
    A('Cedar is a good choice: it resists rot and insects.\n\nPressure-treated pine is cheaper but needs sealing every two years.'),
    U('How big should the foundation be?'),
    A('Make the foundation 10 cm wider than the shed on every side.'),
  ] },
  'labels.txt': { format: 'text', title: 'Write a haiku about tea.', turns: [
    U('Write a haiku about tea.'),
    A('Steam curls from the cup\nleaves unfold in amber warmth\nmorning finds its voice'),
    U('Now one about coffee, as Python code.'),
    A('Here it is:\n```python\nprint("dark roast at dawn")\n# User: this is not a label, it is inside a code block\n```'),
    U('Thanks!'),
  ] },
  'headings.md': { format: 'markdown', title: 'Planning a bike tour', turns: [
    U('We have five days in the Alps. Where should we start?'),
    A('Start in **Innsbruck**: it has good train links.\n\n- Day 1: Innsbruck to Seefeld\n- Day 2: Seefeld to Garmisch'),
    U('Is that too hard for beginners?'),
    A('~~~text\n## User\nThis heading is inside a fence and stays content.\n~~~\nThe climbs are moderate; rent e-bikes if unsure.'),
  ] },
  'bold.md': { format: 'markdown', title: 'Translate "good morning" into Hindi.', turns: [
    U('Translate "good morning" into Hindi.'),
    A('सुप्रभात (suprabhāt).'),
    U('And "thank you"?'),
    A('धन्यवाद (dhanyavād).'),
  ] },
  'chatgpt.json': { format: 'chatgpt', title: 'Sourdough starter help', turns: [
    U('My sourdough starter smells like nail polish remover. Is it dead?'),
    A('No, it is hungry: the smell is acetone from a starving starter.\n\nFeed it twice a day for a few days.'),
    U('Here is a photo. Does it look active?'),
    A('Yes, the bubbles show it is active again.'),
  ] },
  'claude.json': { format: 'claude', title: 'Choosing a houseplant', turns: [
    U('Which houseplant survives a dark room?'),
    A('A ZZ plant or a snake plant.\n\nBoth tolerate low light and rare watering.'),
    U('How often do I water a ZZ plant?'),
    A('Every two to three weeks, when the soil is dry.'),
  ] },
};

describe('smriti ingest', () => {
  let t;
  before(() => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'backfill']);
  });
  after(() => t.cleanup());

  for (const [name, want] of Object.entries(EXPECTED)) {
    test(`${name} becomes a session with exactly its turns`, () => {
      const r = ok(t.db, ['ingest', fixture(name), '--space', 'backfill', '--json']);
      assert.equal(r.format, want.format);
      assert.equal(r.turns, want.turns.length);
      assert.equal(r.session.space, 'backfill');
      assert.equal(r.session.title, want.title);
      assert.equal(r.session.last_seq, want.turns.length);
      assert.match(r.session.id, /^[0-9a-f-]{36}$/);
      const stored = turns(t.db, r.session.id);
      assert.deepEqual(stored.map(({ role, content }) => ({ role, content })), want.turns);
      assert.deepEqual(stored.map((s) => s.seq), want.turns.map((_, i) => i + 1));
      assert.ok(stored.every((s) => s.provider === 'ingest'));
    });
  }

  test('stdin, an explicit format and a title', () => {
    const input = readFileSync(fixture('plain.txt'), 'utf8');
    const r = ok(t.db, ['ingest', '-', '--space', 'backfill', '--format', 'text',
      '--title', 'Shed chat', '--json'], { input });
    assert.equal(r.session.title, 'Shed chat');
    assert.equal(r.format, 'text');
    assert.deepEqual(turns(t.db, r.session.id).map(({ role, content }) => ({ role, content })),
      EXPECTED['plain.txt'].turns);
  });

  test('human output names the session', () => {
    const out = ok(t.db, ['ingest', fixture('claude.json'), '--space', 'backfill']);
    assert.match(out, /^ingested 4 turns \(claude\) into space 'backfill'\nsession [0-9a-f-]{36}: Choosing a houseplant\n$/);
  });

  test('bad input exits 2 with a clear message and writes nothing', () => {
    const file = (name, data) => {
      const p = path.join(t.dir, name);
      writeFileSync(p, data);
      return p;
    };
    const big = file('big.txt', 'User: ' + 'a'.repeat(5 * 1024 * 1024));
    const cases = [
      [[file('notes.txt', 'Some notes\nwithout any speaker labels.\n')], 2, /unknown transcript format/],
      [[file('other.json', '{"messages": []}')], 2, /neither a ChatGPT export .* nor a Claude export/],
      [[file('broken.json', '{"mapping": ')], 2, /not valid JSON/],
      [[file('empty.txt', '')], 2, /the transcript is empty/],
      [[file('blank.txt', 'User:\n\nAssistant:   \n')], 2, /has no turns/],
      [[big], 2, /larger than 5242880 bytes/],
      [[file('latin1.txt', Buffer.from([0x55, 0x73, 0x65, 0x72, 0x3a, 0x20, 0xe9, 0x0a]))], 2, /not UTF-8 text/],
      [[file('nul.txt', 'User: a\0b\n')], 2, /NUL byte/],
      [[file('many.json', '[{"chat_messages": []}, {"chat_messages": []}]')], 2, /holds 2 conversations/],
      [[fixture('headings.md'), '--format', 'text'], 2, /has no turns/],
      [[fixture('plain.txt'), '--format', 'pdf'], 2, /'format' must be one of: auto, text, markdown, chatgpt, claude \(not 'pdf'\)/],
      [[fixture('plain.txt')], 2, /--space SPACE/, true],
      [[path.join(t.dir, 'missing.txt')], 2, /cannot open/],
      [[fixture('plain.txt'), '--space', 'nosuch'], 3, /nosuch/, true],
      [[fixture('plain.txt'), fixture('bold.md')], 2, /exactly one FILE/],
    ];
    const before = dump(t.db);
    for (const [args, code, msg, noSpace] of cases) {
      const argv = ['ingest', ...args, ...(noSpace ? [] : ['--space', 'backfill'])];
      const r = run(t.db, argv);
      assert.equal(r.code, code, `${argv.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^smriti: /);
      assert.match(r.stderr, msg, argv.join(' '));
    }
    assert.equal(dump(t.db), before);
  });
});

describe('ingest and context packs through smriti serve', () => {
  let t, srv;
  before(async () => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'remote']);
    srv = await startServer(t.db);
  });
  after(async () => {
    await srv?.stop();
    t.cleanup();
  });

  test('the remote CLI ingests like the local one', () => {
    const r = ok(t.db, ['--remote', srv.url, 'ingest', fixture('chatgpt.json'), '--space', 'remote', '--json']);
    assert.equal(r.format, 'chatgpt');
    assert.deepEqual(turns(t.db, r.session.id).map(({ role, content }) => ({ role, content })),
      EXPECTED['chatgpt.json'].turns);
    const bad = run(t.db, ['--remote', srv.url, 'ingest', fixture('plain.txt'), '--space', 'remote', '--format', 'claude']);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /not valid JSON/);
  });

  test('operations over HTTP: errors carry their status and write nothing', async () => {
    const before = dump(t.db);
    const cases = [
      [{ space: 'remote', transcript: 'no labels' }, 422, 'unprocessable', /unknown transcript format/],
      [{ space: 'remote', transcript: '' }, 422, 'unprocessable', /empty/],
      [{ space: 'remote', transcript: 'User: ' + 'x'.repeat(5 * 1024 * 1024) }, 413, 'too_large', /larger than/],
      [{ space: 'remote', transcript: 'User: hi', format: 'pdf' }, 400, 'invalid_input', /'pdf'/],
      [{ space: 'nosuch', transcript: 'User: hi' }, 404, 'not_found', /nosuch/],
      [{ space: 'remote' }, 400, null, /transcript/],
    ];
    for (const [body, status, code, msg] of cases) {
      const r = await request(srv, 'POST', '/api/ops/ingest', { body });
      assert.equal(r.status, status, r.text.slice(0, 200));
      if (code) assert.equal(r.json.error.code, code);
      assert.match(r.json.error.message, msg);
    }
    assert.equal(dump(t.db), before);
  });

  test('context_pack of a stored session and of a pasted transcript', async () => {
    const made = await request(srv, 'POST', '/api/ops/ingest',
      { body: { space: 'remote', transcript: 'User: What is 2+2?\nAssistant: 4.', title: 'Sums' } });
    assert.equal(made.status, 200, made.text);
    const id = made.json.result.session.id;
    const pack = await request(srv, 'POST', '/api/ops/context_pack', { body: { session_id: id } });
    assert.equal(pack.status, 200, pack.text);
    assert.equal(pack.json.result.markdown,
      `# Context pack: Sums\n\n2 turns from session ${id}: 1 by the user, 1 by the assistant.`
      + ' It opens with: "What is 2+2?"\n\n## Conversation\n\n### User\n\nWhat is 2+2?\n\n'
      + '### Assistant\n\n4.\n');
    const pasted = await request(srv, 'POST', '/api/ops/context_pack',
      { body: { transcript: readFileSync(fixture('claude.json'), 'utf8') } });
    assert.equal(pasted.status, 200, pasted.text);
    assert.equal(pasted.json.result.title, 'Choosing a houseplant');
    assert.equal(pasted.json.result.source, 'a Claude export');
    assert.match(pasted.json.result.markdown, /^# Context pack: Choosing a houseplant\n/);
    const neither = await request(srv, 'POST', '/api/ops/context_pack', { body: {} });
    assert.equal(neither.status, 400);
    const unknown = await request(srv, 'POST', '/api/ops/context_pack', { body: { session_id: 'nope' } });
    assert.equal(unknown.status, 404);
  });

  test('the V1 routes: POST /v1/ingest and POST /v1/context-pack', async () => {
    const made = await request(srv, 'POST', '/v1/ingest',
      { body: { space: 'remote', transcript: 'Human: Which pot?\nClaude: Terracotta.', title: 'Pots' } });
    assert.equal(made.status, 201, made.text);
    assert.equal(made.json.turns, 2);
    assert.equal(made.json.format, 'text');
    assert.deepEqual(turns(t.db, made.json.session.id).map(({ role, content }) => ({ role, content })),
      [{ role: 'user', content: 'Which pot?' }, { role: 'assistant', content: 'Terracotta.' }]);
    const pack = await request(srv, 'POST', '/v1/context-pack', { body: { session_id: made.json.session.id } });
    assert.equal(pack.status, 200, pack.text);
    assert.match(pack.json.markdown, /^# Context pack: Pots\n/);
    assert.match(pack.json.markdown, /### Assistant\n\nTerracotta\.\n/);
    const before = dump(t.db);
    const bad = await request(srv, 'POST', '/v1/ingest', { body: { space: 'remote', transcript: '' } });
    assert.equal(bad.status, 422);
    assert.equal(dump(t.db), before);
  });
});
