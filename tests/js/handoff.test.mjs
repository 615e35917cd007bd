// handoff.test.mjs -- hand-off notes (issue 26) through every transport, on
// SQLite and (with SMRITI_TEST_PG) PostgreSQL: a note left with the CLI,
// HTTP or MCP is read back with HEAD by the CLI (`smriti head`, --json),
// HTTP (GET /repos/{id}/head) and MCP (the official SDK: read_head and the
// HEAD resource); restore and hand off is one call; a note outlives a move
// of HEAD and says where it was left; bad notes change nothing; no
// checkpoint hash changes.  Also the deleted-Space listing the UI uses.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { tempDb, ok, run, SMRITI_FULL } from './helpers.mjs';
import { startServer, request } from './http-helpers.mjs';

const validator = new AjvJsonSchemaValidator();
const NOTE = 'do not drop the foreign keys';
let schemas = 0;

function pgDb(base) {
  const schema = `smriti_handoff_${process.pid}_${++schemas}_${Math.floor(Math.random() * 1e6)}`;
  const psql = (sql) => {
    const r = spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', base, '-c', sql], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`psql ${sql}: ${r.stderr}`);
  };
  psql(`CREATE SCHEMA ${schema}`);
  const sep = base.includes('?') ? '&' : '?';
  return {
    db: `${base}${sep}options=-csearch_path%3D${schema}`,
    cleanup: () => { try { psql(`DROP SCHEMA ${schema} CASCADE`); } catch { /* cluster gone */ } },
  };
}

function serverEnv(extra) {
  const env = { ...extra };
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) if (process.env[k]) env[k] = process.env[k];
  return env;
}

async function callTool(client, tools, name, args) {
  const tool = tools.find((t) => t.name === name);
  assert.ok(tool, `${name} listed`);
  const res = await client.callTool({ name, arguments: args });
  assert.notEqual(res.isError, true, `${name}: ${JSON.stringify(res.content)}`);
  const check = validator.getValidator(tool.outputSchema)(res.structuredContent);
  assert.ok(check.valid, `${name} output matches its outputSchema: ${check.errorMessage}`);
  return res.structuredContent;
}

// A Space with three checkpoints; returns their hashes, oldest first.
function seed(db, space) {
  ok(db, ['space', 'create', space]);
  return ['one', 'two', 'three'].map((t) =>
    ok(db, ['checkpoint', 'create', space, '--title', t, '--decision', `keep ${t}`, '--json']).commit_hash);
}

function suite(kind, makeDb, bin) {
  describe(`hand-off notes on ${kind}`, () => {
    let t;
    before(() => { t = makeDb(); });
    after(() => t.cleanup());
    const cli = (args) => ok(t.db, args, { bin });
    const cliRun = (args) => run(t.db, args, { bin });

    test('CLI: a note on HEAD is read back by `smriti head`, text and --json; hashes do not change', () => {
      const [, , c3] = seed(t.db, 'cli-note');
      const before = cli(['head', 'cli-note', '--json']);
      assert.equal(before.handoff, undefined, 'no note yet: no handoff key');
      const r = cli(['handoff', 'cli-note', '-m', NOTE, '--author', 'alice', '--json']);
      assert.equal(r.restored, false);
      assert.equal(r.handoff.note, NOTE);
      assert.equal(r.handoff.checkpoint, c3);
      assert.equal(r.handoff.author, 'alice');
      const head = cli(['head', 'cli-note', '--json']);
      assert.equal(head.commit_hash, c3, 'HEAD did not move: a note is not a checkpoint');
      assert.deepEqual(head.handoff, { ...r.handoff, on_head: true });
      const { handoff, ...rest } = head;
      assert.deepEqual(rest, before, 'the checkpoint document is what it was');
      assert.equal(cli(['fsck', '--json']).ok, true);
      const text = cli(['head', 'cli-note']);
      assert.match(text, /Hand-off note \(alice, /);
      assert.match(text, new RegExp(NOTE));
      assert.doesNotMatch(text, /HEAD has moved/);
      assert.ok(handoff);
    });

    test('CLI: --restore restores an earlier checkpoint and hands it off in one command', () => {
      const [c1, , c3] = seed(t.db, 'cli-restore');
      const r = cli(['handoff', 'cli-restore', c1, '-m', 'start again from one', '--restore', '--json']);
      assert.equal(r.restored, true);
      assert.equal(r.checkpoint.parent_hash, c3);
      assert.equal(r.checkpoint.metadata.restored_from, c1);
      assert.equal(r.checkpoint.title, 'one');
      const head = cli(['head', 'cli-restore', '--json']);
      assert.equal(head.commit_hash, r.checkpoint.commit_hash);
      assert.equal(head.handoff.note, 'start again from one');
      assert.equal(head.handoff.on_head, true);
      const reflog = cli(['reflog', 'cli-restore', '--json']);
      assert.equal(reflog[0].action, 'restore');
    });

    test('CLI: after HEAD moves the note stays, saying where it was left', () => {
      const [, , c3] = seed(t.db, 'cli-moved');
      cli(['handoff', 'cli-moved', '-m', NOTE]);
      cli(['checkpoint', 'create', 'cli-moved', '--title', 'four']);
      const head = cli(['head', 'cli-moved', '--json']);
      assert.equal(head.title, 'four');
      assert.equal(head.handoff.note, NOTE);
      assert.equal(head.handoff.checkpoint, c3);
      assert.equal(head.handoff.on_head, false);
      assert.match(cli(['head', 'cli-moved']), /left on checkpoint [0-9a-f]{12}; HEAD has moved since/);
      cli(['handoff', 'cli-moved', '-m', 'newer note']);
      const again = cli(['head', 'cli-moved', '--json']);
      assert.equal(again.handoff.note, 'newer note', 'the newest note is the one shown');
      assert.equal(again.handoff.on_head, true);
    });

    test('CLI: bad input is refused and changes nothing', () => {
      const [c1] = seed(t.db, 'cli-bad');
      const stale = cliRun(['handoff', 'cli-bad', c1, '-m', NOTE]);
      assert.equal(stale.code, 4, stale.stderr);
      assert.match(stale.stderr, /is not HEAD of 'cli-bad'/);
      const blank = cliRun(['handoff', 'cli-bad', '-m', '   ']);
      assert.equal(blank.code, 2);
      assert.match(blank.stderr, /note is empty/);
      const big = cliRun(['handoff', 'cli-bad', '-m', 'x'.repeat(8193)]);
      assert.equal(big.code, 2);
      assert.match(big.stderr, /at most 8192/);
      assert.equal(cliRun(['handoff', 'cli-bad']).code, 2, 'no -m: usage');
      assert.equal(cliRun(['handoff', 'nope', '-m', NOTE]).code, 3);
      const head = cli(['head', 'cli-bad', '--json']);
      assert.equal(head.handoff, undefined, 'nothing was written');
      assert.equal(cli(['log', 'cli-bad', '--json']).length, 3);
    });

    test('HTTP and MCP (official SDK) read the note with HEAD; HTTP and MCP write one', async () => {
      const [c1, , c3] = seed(t.db, 'wire');
      const server = await startServer(t.db, { env: { SMRITI_DB: t.db } });
      const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`));
      const client = new Client({ name: 'next-agent', version: '1.0.0' });
      try {
        await client.connect(transport);
        const tools = (await client.listTools()).tools;
        // written over HTTP
        const w = await request(server, 'POST', '/v4/repos/wire/handoff', { body: { note: NOTE, author: 'bob' } });
        assert.equal(w.status, 201, w.text);
        assert.equal(w.json.handoff.checkpoint, c3);
        const h1 = await request(server, 'GET', '/repos/wire/head');
        assert.equal(h1.status, 200);
        assert.equal(h1.json.handoff.note, NOTE);
        assert.equal(h1.json.handoff.author, 'bob');
        assert.equal(h1.json.handoff.on_head, true);
        const m1 = await callTool(client, tools, 'read_head', { space: 'wire' });
        assert.deepEqual(m1.handoff, h1.json.handoff);
        const res = await client.readResource({ uri: 'smriti://spaces/wire/head' });
        assert.match(res.contents[0].text, /Hand-off note/);
        assert.match(res.contents[0].text, new RegExp(NOTE));
        const resJson = await client.readResource({ uri: 'smriti://spaces/wire/head.json' });
        assert.equal(JSON.parse(resJson.contents[0].text).handoff.note, NOTE);
        // a stale ref over HTTP: 409, nothing written
        const stale = await request(server, 'POST', '/v4/repos/wire/handoff', { body: { note: 'x', ref: c1 } });
        assert.equal(stale.status, 409);
        // restore and hand off over MCP, in one call
        const r = await callTool(client, tools, 'hand_off', { space: 'wire', ref: c1, restore: true, note: 'back to one' });
        assert.equal(r.restored, true);
        assert.equal(r.checkpoint.metadata.restored_from, c1);
        const m2 = await callTool(client, tools, 'read_head', { space: 'wire' });
        assert.equal(m2.commit_hash, r.checkpoint.commit_hash);
        assert.equal(m2.handoff.note, 'back to one');
        assert.equal(m2.handoff.on_head, true);
        // and the CLI on the same database sees it
        assert.equal(cli(['head', 'wire', '--json']).handoff.note, 'back to one');
        // an empty note over MCP is a tool error, and writes nothing
        const bad = await client.callTool({ name: 'hand_off', arguments: { space: 'wire', note: ' ' } });
        assert.equal(bad.isError, true);
        assert.equal((await request(server, 'GET', '/repos/wire/head')).json.handoff.note, 'back to one');
      } finally {
        await client.close();
        await server.stop();
      }
    });

    test('MCP over stdio (official SDK) reads a note the CLI left', async () => {
      seed(t.db, 'stdio');
      cli(['handoff', 'stdio', '-m', NOTE]);
      const transport = new StdioClientTransport({ command: SMRITI_FULL, args: ['mcp'], env: serverEnv({ SMRITI_DB: t.db }) });
      const client = new Client({ name: 'stdio-agent', version: '1.0.0' });
      try {
        await client.connect(transport);
        const tools = (await client.listTools()).tools;
        const m = await callTool(client, tools, 'read_head', { space: 'stdio' });
        assert.equal(m.handoff.note, NOTE);
        assert.equal(m.handoff.on_head, true);
      } finally {
        await client.close();
      }
    });

    test('space.deleted (what the UI lists) names a deleted Space; fork ID@{1} recovers it', async () => {
      const [, , c3] = seed(t.db, 'gone');
      cli(['space', 'delete', 'gone', '--yes']);
      const server = await startServer(t.db);
      try {
        const r = await request(server, 'POST', '/api/ops/space.deleted', { body: {} });
        assert.equal(r.status, 200, r.text);
        const e = r.json.result.find((x) => x.name === 'gone');
        assert.ok(e, r.text);
        assert.equal(e.head, c3);
        assert.match(e.deleted_at, /^\d{4}-/);
        const f = await request(server, 'POST', '/api/ops/fork', { body: { ref: `${e.id}@{1}`, into: 'gone' } });
        assert.equal(f.status, 200, f.text);
      } finally {
        await server.stop();
      }
      assert.equal(cli(['head', 'gone', '--json']).commit_hash, c3);
    });
  });
}

suite('SQLite', () => tempDb(), SMRITI_FULL);
if (process.env.SMRITI_TEST_PG) suite('PostgreSQL', () => pgDb(process.env.SMRITI_TEST_PG), SMRITI_FULL);
