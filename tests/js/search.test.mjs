// search.test.mjs -- `smriti search` as a person and an agent see it: the
// CLI's marked snippets and --json, the HTTP route GET /v4/search with its
// errors, and the MCP tool through the official SDK client, all giving the
// same document for the same data.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { tempDb, ok, run, SMRITI_FULL } from './helpers.mjs';
import { startServer, expectStatus, request, assertError } from './http-helpers.mjs';

let t;
before(() => {
  t = tempDb();
  ok(t.db, ['space', 'create', 'infra']);
  ok(t.db, ['commit', '--replace', 'infra', '--title', 'Event bus', '--decision', 'Use Kafka for events', '--author', 'ann']);
  ok(t.db, ['commit', '--replace', 'infra', '--title', 'Simpler', '--decision', 'Drop Kafka; use Postgres LISTEN/NOTIFY', '--author', 'bo']);
  ok(t.db, ['space', 'create', 'web']);
  ok(t.db, ['commit', '--replace', 'web', '--title', 'Frontend', '--decision', 'Plain ES modules, no bundler']);
});
after(() => t.cleanup());

test('the CLI shows matches (marked on a terminal only: cli-conventions) and says where an item appeared and whether HEAD holds it', () => {
  const out = ok(t.db, ['search', 'kafka']);
  assert.match(out, /^infra {2}decisions {2}[0-9a-f]{12} {2}\(bo, .*\) {2}in HEAD\n {4}Drop Kafka; use Postgres LISTEN\/NOTIFY$/m);
  assert.match(out, /^infra {2}decisions {2}[0-9a-f]{12} {2}\(ann, .*\) {2}no longer in HEAD\n {4}Use Kafka for events$/m);
  const res = ok(t.db, ['search', 'kafka', '--author', 'ann', '--json']);
  assert.equal(res.total, 1);
  assert.equal(res.results[0].in_head, false);
  assert.equal(res.results[0].first.author, 'ann');
  assert.equal(ok(t.db, ['search', 'plain', '--space', 'infra', '--json']).total, 0);
  assert.equal(ok(t.db, ['search', 'plain', '--space', 'web', '--json']).total, 1);
  assert.equal(ok(t.db, ['search', 'mod*', '--field', 'decisions', '--json']).total, 1);
  assert.equal(ok(t.db, ['search', 'kafka', '--since', '2999-01-01', '--json']).total, 0);
  assert.match(ok(t.db, ['search', 'nothing-like-this']), /^no matches$/m);
});

test('hostile queries get results or a clear error, never a database error', () => {
  for (const q of ['NEAR(kafka events)', '"unclosed', 'title:kafka OR ^x', "'; DROP TABLE commits; --", 'kafka*"*']) {
    const r = run(t.db, ['search', q, '--json']);
    assert.equal(r.code, 0, `${q}: ${r.stderr}`);
  }
  const empty = run(t.db, ['search', '"*()"']);
  assert.equal(empty.code, 2);
  assert.match(empty.stderr, /nothing to search for/);
  const big = run(t.db, ['search', 'x'.repeat(10240)]);
  assert.equal(big.code, 2);
  assert.match(big.stderr, /the limit is 4096/);
  assert.equal(run(t.db, ['search', 'kafka', '--field', 'nope']).code, 2);
  assert.equal(run(t.db, ['search', 'kafka', '--space', 'nope']).code, 3);
  assert.equal(run(t.db, ['search']).code, 2);
});

test('GET /v4/search and the MCP tool answer what the CLI answers', async () => {
  const cli = ok(t.db, ['search', 'kafka', '--json']);
  assert.equal(cli.total, 2);
  const server = await startServer(t.db);
  try {
    const http = await expectStatus(server, 'GET', '/v4/search?q=kafka', 200);
    assert.deepEqual(http, cli);
    const one = await expectStatus(server, 'GET', '/v4/search?q=kafka&space=infra&limit=1', 200);
    assert.equal(one.results.length, 1);
    assert.equal(one.total, 2);
    assertError(await request(server, 'GET', '/v4/search?q=%22%22'), 400);
    assertError(await request(server, 'GET', `/v4/search?q=${'x'.repeat(5000)}`), 413);
    assertError(await request(server, 'GET', '/v4/search?q=kafka&space=nope'), 404);
    const doc = await expectStatus(server, 'GET', '/openapi.json', 200);
    assert.ok(doc.paths['/v4/search'].get);
    const blame = await expectStatus(server, 'GET', '/v4/blame?ref=infra', 200);
    assert.deepEqual(blame, ok(t.db, ['blame', 'infra', '--json']));
    assert.equal(blame.items.find((i) => i.field === 'decisions').introduced.author, 'bo');
    assertError(await request(server, 'GET', '/v4/blame?ref=nope'), 404);
  } finally {
    await server.stop();
  }
  const transport = new StdioClientTransport({ command: SMRITI_FULL, args: ['mcp'], env: { SMRITI_DB: t.db } });
  const client = new Client({ name: 'search-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    const res = await client.callTool({ name: 'search', arguments: { query: 'kafka' } });
    assert.notEqual(res.isError, true, JSON.stringify(res.content));
    assert.deepEqual(res.structuredContent, cli);
    const blame = await client.callTool({ name: 'blame', arguments: { ref: 'infra~1' } });
    assert.deepEqual(blame.structuredContent, ok(t.db, ['blame', 'infra~1', '--json']));
    const bad = await client.callTool({ name: 'search', arguments: { query: '!!!' } });
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /nothing to search for/);
  } finally {
    await client.close();
  }
});

test('a checkpoint several Spaces hold (forks share history) is one result naming those Spaces, on every transport', async () => {
  const f = tempDb();
  try {
    ok(f.db, ['space', 'create', 'pay']);
    ok(f.db, ['commit', '--replace', 'pay', '--title', 'Plan', '--decision', 'Keep the foreign keys', '--author', 'ann']);
    ok(f.db, ['commit', '--replace', 'pay', '--title', 'Step 30', '--decision', 'Drop the foreign keys', '--author', 'bo']);
    ok(f.db, ['fork', 'pay', '--into', 'pay-b']);
    ok(f.db, ['fork', 'pay', '--into', 'pay-c']);
    ok(f.db, ['fork', 'pay~1', '--into', 'pay-d']);
    // one shared history: each checkpoint is one row, whatever the forks
    const rows = spawnSync('sqlite3', [f.db, 'SELECT count(*) FROM commits'], { encoding: 'utf8' });
    assert.equal(rows.stdout.trim(), '2');
    const cli = ok(f.db, ['search', 'foreign', '--json']);
    // two checkpoints hold a match: each is listed once
    assert.equal(cli.total, 2);
    assert.equal(cli.results.length, 2);
    const drop = cli.results.find((r) => r.text === 'Drop the foreign keys');
    const keep = cli.results.find((r) => r.text === 'Keep the foreign keys');
    assert.deepEqual(drop.spaces, [{ space: 'pay', in_head: true }, { space: 'pay-b', in_head: true }, { space: 'pay-c', in_head: true }]);
    assert.deepEqual(keep.spaces.map((s) => s.space), ['pay', 'pay-b', 'pay-c', 'pay-d']);
    assert.deepEqual(keep.spaces.map((s) => s.in_head), [false, false, false, true]);
    assert.equal(keep.space, 'pay');
    assert.equal(keep.in_head, false);
    // a Space filter keeps to the Spaces named
    const one = ok(f.db, ['search', 'foreign', '--space', 'pay-d', '--json']);
    assert.equal(one.total, 1);
    assert.deepEqual(one.results[0].spaces, [{ space: 'pay-d', in_head: true }]);
    // the CLI names every Space once per result, and which HEADs still hold it
    const text = ok(f.db, ['search', 'foreign']);
    assert.match(text, /^pay, pay-b, pay-c {2}decisions {2}[0-9a-f]{12} {2}\(bo, .*\) {2}in HEAD$/m);
    assert.match(text, /^pay, pay-b, pay-c, pay-d {2}decisions {2}[0-9a-f]{12} {2}\(ann, .*\) {2}in HEAD of pay-d$/m);
    assert.equal(text.match(/Drop the foreign keys/g).length, 1);
    const server = await startServer(f.db);
    try {
      assert.deepEqual(await expectStatus(server, 'GET', '/v4/search?q=foreign', 200), cli);
      const limited = await expectStatus(server, 'GET', '/v4/search?q=foreign&limit=1', 200);
      assert.equal(limited.results.length, 1);
      assert.equal(limited.total, 2);
    } finally {
      await server.stop();
    }
    const transport = new StdioClientTransport({ command: SMRITI_FULL, args: ['mcp'], env: { SMRITI_DB: f.db } });
    const client = new Client({ name: 'search-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const res = await client.callTool({ name: 'search', arguments: { query: 'foreign' } });
      assert.notEqual(res.isError, true, JSON.stringify(res.content));
      assert.deepEqual(res.structuredContent, cli);
    } finally {
      await client.close();
    }
  } finally {
    f.cleanup();
  }
});

// A Space's matches with forks of it only below them, or deleted: its own result, naming it alone.
test('a match no fork reaches names its Space alone, whatever forks sit below it or were deleted', () => {
  const f = tempDb();
  try {
    ok(f.db, ['space', 'create', 'solo']);
    ok(f.db, ['commit', '--replace', 'solo', '--title', 'Plan', '--decision', 'Keep it simple']);
    ok(f.db, ['fork', 'solo', '--into', 'solo-old']);
    ok(f.db, ['commit', '--replace', 'solo', '--title', 'Step 2', '--decision', 'Drop the foreign keys']);
    ok(f.db, ['fork', 'solo', '--into', 'solo-gone']);
    ok(f.db, ['space', 'delete', 'solo-gone', '--yes']);
    ok(f.db, ['commit', '--replace', 'solo', '--title', 'Step 3', '--decision', 'Drop the foreign keys now']);
    const spaces = (answer) => Object.fromEntries(answer.results.map((r) => [r.text, r.spaces]));
    const cli = ok(f.db, ['search', 'foreign', '--json']);
    assert.equal(cli.total, 2);
    assert.deepEqual(spaces(cli), {
      'Drop the foreign keys': [{ space: 'solo', in_head: false }],
      'Drop the foreign keys now': [{ space: 'solo', in_head: true }],
    });
    // a fork at the first match holds it, and not the one after
    ok(f.db, ['fork', 'solo~1', '--into', 'solo-mid']);
    assert.deepEqual(spaces(ok(f.db, ['search', 'foreign', '--json'])), {
      'Drop the foreign keys': [{ space: 'solo', in_head: false }, { space: 'solo-mid', in_head: true }],
      'Drop the foreign keys now': [{ space: 'solo', in_head: true }],
    });
  } finally {
    f.cleanup();
  }
});

// Ranking counts a checkpoint's item once, however many Spaces hold it: forking a history changes
// which Spaces a result names, never its score, the order, the total or `truncated`.
test('forks change which Spaces a result names, never its score, order, total or truncated', () => {
  const f = tempDb();
  try {
    ok(f.db, ['space', 'create', 'calc']);
    ok(f.db, ['commit', '--replace', 'calc', '--title', 'Plan', '--decision', 'Cache the latency figures',
      '--decision', 'Measure latency and throughput']);
    ok(f.db, ['commit', '--replace', 'calc', '--title', 'Step', '--decision', 'Latency budget of 20 ms']);
    ok(f.db, ['space', 'create', 'other']);
    ok(f.db, ['commit', '--replace', 'other', '--title', 'Elsewhere', '--decision', 'latency latency everywhere']);
    const ranked = (a) => ({ ...a, results: a.results.map(({ spaces, space, in_head, ...r }) => r) });
    const before = ok(f.db, ['search', 'latency', '--json']);
    assert.equal(before.total, 4);
    const forks = ['calc-0', 'calc-1', 'calc-2', 'calc-3', 'calc-4', 'calc-5'];
    for (const name of forks) ok(f.db, ['fork', 'calc', '--into', name]);
    const after = ok(f.db, ['search', 'latency', '--json']);
    assert.deepEqual(ranked(after), ranked(before));
    assert.equal(after.truncated, false);
    const budget = after.results.find((r) => r.text === 'Latency budget of 20 ms');
    assert.deepEqual(budget.spaces.map((s) => s.space), ['calc', ...forks]);
    assert.equal(budget.space, 'calc');
    // a fork that drops an item and writes it again has a result of its own, first written there
    ok(f.db, ['commit', '--replace', 'calc-2', '--title', 'Drop', '--decision', 'Nothing to see']);
    const back = ok(f.db, ['commit', '--replace', 'calc-2', '--title', 'Back', '--decision',
      'Latency budget of 20 ms', '--json']);
    const again = ok(f.db, ['search', 'budget', '--json']);
    assert.equal(again.total, 2);
    const mine = again.results.find((r) => r.commit_hash === back.commit_hash);
    assert.deepEqual(mine.spaces, [{ space: 'calc-2', in_head: true }]);
    assert.equal(mine.first.commit_hash, back.commit_hash);
    const shared = again.results.find((r) => r.commit_hash !== back.commit_hash);
    assert.deepEqual(shared.spaces.map((s) => [s.space, s.in_head]),
      [['calc', true], ['calc-0', true], ['calc-1', true], ['calc-2', true], ['calc-3', true],
        ['calc-4', true], ['calc-5', true]]);   // calc-2's HEAD holds the words again
    // the Space that wrote them deleted: its forks still hold them, and name only themselves
    const written = ok(f.db, ['search', 'latency', '--json']);
    ok(f.db, ['space', 'delete', 'calc', '--yes']);
    const orphaned = ok(f.db, ['search', 'latency', '--json']);
    assert.deepEqual(ranked(orphaned), ranked(written));
    assert.deepEqual(orphaned.results.find((r) => r.text === 'Latency budget of 20 ms' &&
      r.commit_hash !== back.commit_hash).spaces.map((s) => s.space), forks);
    ok(f.db, ['space', 'delete', 'other', '--yes']);
    assert.equal(ok(f.db, ['search', 'everywhere', '--json']).total, 0);
  } finally {
    f.cleanup();
  }
});

// until bounds the time an item was written, as since does from the other end, on every transport.
test('--until, until= and the tool\'s until keep to what was written by then; a since after it is refused', async () => {
  const d = tempDb();
  try {
    ok(d.db, ['space', 'create', 'cache']);
    const early = ok(d.db, ['commit', '--replace', 'cache', '--title', 'Early', '--decision', 'Use Redis early', '--json']);
    // the next checkpoint lands in a later second than the first (a DATE names one second)
    await new Promise((res) => setTimeout(res, 1100));
    ok(d.db, ['commit', '--replace', 'cache', '--title', 'Later', '--decision', 'Use Redis later']);
    const second = `${early.created_at.slice(0, 19)}Z`;
    const cli = ok(d.db, ['search', 'redis', '--until', second, '--json']);
    assert.deepEqual(cli.results.map((r) => r.text), ['Use Redis early']);
    assert.equal(ok(d.db, ['search', 'redis', '--json']).total, 2);
    assert.equal(ok(d.db, ['search', 'redis', '--until', 'yesterday', '--json']).total, 0);
    assert.deepEqual(ok(d.db, ['search', 'redis', '--since', second, '--until', second, '--json'])
      .results.map((r) => r.text), ['Use Redis early']);
    const swapped = run(d.db, ['search', 'redis', '--since', 'now', '--until', second]);
    assert.equal(swapped.code, 2);
    assert.match(swapped.stderr, /since .* is after until/);
    assert.equal(run(d.db, ['search', 'redis', '--until', 'soon']).code, 2);
    assert.match(ok(d.db, ['search', '--help']), /--until DATE/);
    const server = await startServer(d.db);
    try {
      assert.deepEqual(await expectStatus(server, 'GET', `/v4/search?q=redis&until=${second}`, 200), cli);
      assertError(await request(server, 'GET', `/v4/search?q=redis&since=now&until=${second}`), 400);
      const doc = await expectStatus(server, 'GET', '/openapi.json', 200);
      assert.ok(doc.paths['/v4/search'].get.parameters.some((x) => x.name === 'until'));
    } finally {
      await server.stop();
    }
    const transport = new StdioClientTransport({ command: SMRITI_FULL, args: ['mcp'], env: { SMRITI_DB: d.db } });
    const client = new Client({ name: 'search-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const tool = (await client.listTools()).tools.find((x) => x.name === 'search');
      assert.ok(tool.inputSchema.properties.until);
      const res = await client.callTool({ name: 'search', arguments: { query: 'redis', until: second } });
      assert.notEqual(res.isError, true, JSON.stringify(res.content));
      assert.deepEqual(res.structuredContent, cli);
    } finally {
      await client.close();
    }
  } finally {
    d.cleanup();
  }
});

// The same forks on PostgreSQL: the same results, Spaces and HEAD flags (hashes and times aside).
test('PostgreSQL groups a checkpoint several Spaces hold as SQLite does', { skip: process.env.SMRITI_TEST_PG ? false : 'SMRITI_TEST_PG is not set' }, () => {
  const PG = process.env.SMRITI_TEST_PG;
  const schema = `smriti_search_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
  const psql = (sql) => spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', PG, '-c', sql], { encoding: 'utf8' });
  const t2 = tempDb();
  assert.equal(psql(`CREATE SCHEMA ${schema}`).status, 0);
  const seed = (db) => {
    const o = { bin: SMRITI_FULL };
    ok(db, ['space', 'create', 'pay'], o);
    ok(db, ['commit', '--replace', 'pay', '--title', 'Plan', '--decision', 'Keep the foreign keys', '--author', 'ann'], o);
    ok(db, ['commit', '--replace', 'pay', '--title', 'Step 30', '--decision', 'Drop the foreign keys', '--author', 'bo'], o);
    ok(db, ['fork', 'pay', '--into', 'pay-b'], o);
    ok(db, ['fork', 'pay~1', '--into', 'pay-d'], o);
    return ok(db, ['search', 'foreign', '--json'], o).results
      .map((r) => ({ text: r.text, field: r.field, space: r.space, in_head: r.in_head, spaces: r.spaces }));
  };
  try {
    const lite = seed(t2.db);
    const pg = seed(`${PG}${PG.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`);
    assert.equal(lite.length, 2);
    assert.deepEqual(pg, lite);
  } finally {
    psql(`DROP SCHEMA ${schema} CASCADE`);
    t2.cleanup();
  }
});

test('on PostgreSQL a page of results reads its checkpoints in one call of the store, not a round trip each', { skip: process.env.SMRITI_TEST_PG ? false : 'SMRITI_TEST_PG is not set' }, () => {
  const PG = process.env.SMRITI_TEST_PG;
  const schema = `smriti_search_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
  const psql = (sql) => spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', PG, '-c', sql], { encoding: 'utf8' });
  assert.equal(psql(`CREATE SCHEMA ${schema}`).status, 0);
  const db = `${PG}${PG.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`;
  const o = { bin: SMRITI_FULL };
  try {
    ok(db, ['space', 'create', 'zoo'], o);
    const hashes = [];
    for (let i = 1; i <= 5; i++) hashes.push(ok(db, ['commit', 'zoo', '-m', `Step ${i}`, '--decision', `Zebra number ${i}`, '-q'], o).trim());
    const r = spawnSync(SMRITI_FULL, ['search', 'zebra', '--json'], { env: { ...process.env, SMRITI_DB: db, SMRITI_STORE_TRACE: '1' }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).results.map((x) => [x.text, x.commit_hash, x.in_head]),
      [5, 4, 3, 2, 1].map((i) => [`Zebra number ${i}`, hashes[i - 1], true]));
    const calls = r.stderr.split('\n').map((l) => l.match(/^smriti: store \d+: (\w+) /)?.[1]).filter(Boolean);
    assert.equal(calls.filter((c) => c === 'checkpoints_each').length, 1, r.stderr);
    // HEAD's alone (for in_head): not the results' own one by one
    assert.equal(calls.filter((c) => c === 'checkpoint_get').length, 1, r.stderr);
  } finally {
    psql(`DROP SCHEMA ${schema} CASCADE`);
  }
});
