// mcp-modern.test.mjs -- MCP 2026-07-28 (stateless, no initialize) with the
// official SDK v2 client (@modelcontextprotocol/client) pinned to that
// revision, over Streamable HTTP (`smriti serve`'s /mcp) and over stdio
// (`smriti mcp`): server/discover, every tool called once, results marked
// complete with cache hints, and a subscriptions/listen stream that receives
// notifications/resources/updated when the CLI writes to the same database
// in another process.  Raw requests check what the SDK does not exercise:
// the mirrored headers checked against the body, the renumbered errors, the
// unsupported-revision answer.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { tempDb, ok, SMRITI_FULL } from './helpers.mjs';
import { startServer, request } from './http-helpers.mjs';

const MODERN = '2026-07-28';
const PG = process.env.SMRITI_TEST_PG;
const ACCEPT = 'application/json, text/event-stream';
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

function sanitizerEnv(extra) {
  const env = { ...extra };
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) if (process.env[k]) env[k] = process.env[k];
  return env;
}

function modernClient(name) {
  return new Client({ name, version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
}

// Waits until pred() holds, or fails after ms.
async function until(pred, ms, what) {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

// Calls every tool once, in an order where each has what it needs.
async function everyTool(client, space) {
  const tools = (await client.listTools()).tools;
  const called = new Set();
  const call = async (name, args) => {
    const res = await client.callTool({ name, arguments: args });
    assert.notEqual(res.isError, true, `${name}: ${JSON.stringify(res.content)}`);
    called.add(name);
    return res.structuredContent;
  };
  await call('create_space', { name: space });
  const a = await call('write_checkpoint', { space, title: 'a', decisions: ['use SQLite'] });
  const b = (await call('update_checkpoint', { space, add: { decisions: ['use WAL'] } })).checkpoint;
  assert.equal((await call('read_head', { space })).commit_hash, b.commit_hash);
  await call('show_checkpoint', { ref: a.commit_hash });
  assert.ok((await call('log', { ref: space })).checkpoints.length >= 2);
  await call('diff', { from: a.commit_hash, to: b.commit_hash });
  await call('fork', { ref: a.commit_hash, into: `${space}-fork` });
  await call('write_checkpoint', { space: `${space}-fork`, parent: a.commit_hash, title: 'f',
    decisions: ['use SQLite', 'use PostgreSQL too'] });
  await call('merge', { space, ref: `${space}-fork` });
  await call('restore', { space, ref: a.commit_hash });
  await call('hand_off', { space, note: 'over to you' });
  await call('review', { ref: space, llm: false });
  await call('blame', { ref: space });
  await call('search', { query: 'SQLite' });
  await call('list_spaces', {});
  assert.deepEqual(tools.map((t) => t.name).filter((n) => !called.has(n)), [], 'every listed tool called');
  return tools;
}

describe('MCP 2026-07-28 over Streamable HTTP with the SDK v2 client', () => {
  let t, server, client;
  const updates = [];
  before(async () => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'watched']);
    ok(t.db, ['checkpoint', 'create', 'watched', '--title', 'start', '--decision', 'a']);
    server = await startServer(t.db, { args: ['--quiet'] });
    client = modernClient('modern-http');
    client.setNotificationHandler('notifications/resources/updated', (n) => updates.push(n.params));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  });
  after(async () => {
    await client?.close();
    await server?.stop();
    t?.cleanup();
  });

  test('server/discover offers 2026-07-28 and the connection is modern', async () => {
    assert.equal(client.getProtocolEra(), 'modern');
    const d = await client.discover();
    assert.deepEqual(d.supportedVersions, [MODERN]);
    assert.equal(d.capabilities.resources.subscribe, true);
    assert.equal(client.getServerVersion().name, 'smriti', 'serverInfo in the result\'s _meta');
  });

  test('every tool, once, statelessly', async () => {
    const tools = await everyTool(client, 'web');
    const again = (await client.listTools({}, { cacheMode: 'bypass' })).tools;
    assert.deepEqual(again.map((x) => x.name), tools.map((x) => x.name), 'tools/list is deterministic');
  });

  test('a listen stream hears a CLI write, tagged with its subscription id', async () => {
    const uri = 'smriti://spaces/watched/head';
    const sub = await client.listen({ resourceSubscriptions: [uri, 'smriti://spaces/none/head'] });
    assert.deepEqual(sub.honoredFilter.resourceSubscriptions, [uri], 'an unknown Space is not honored');
    await new Promise((r) => setTimeout(r, 700));
    assert.equal(updates.length, 0, 'nothing moved yet');
    ok(t.db, ['checkpoint', 'create', 'watched', '--title', 'by the cli', '--decision', 'b']);
    await until(() => updates.length >= 1, 5000, 'notifications/resources/updated');
    assert.equal(updates[0].uri, uri);
    assert.ok('io.modelcontextprotocol/subscriptionId' in updates[0]._meta);
    await sub.close();
    assert.equal(await sub.closed, 'local');
  });
});

describe('MCP 2026-07-28 listen streams and the server\'s life', () => {
  test('a server that stops ends each listen with its result (graceful), and exits cleanly', async () => {
    const t = tempDb();
    ok(t.db, ['space', 'create', 'w']);
    const server = await startServer(t.db, { args: ['--quiet'] });
    const clients = [];
    try {
      const subs = [];
      for (let i = 0; i < 2; i++) {
        const c = modernClient(`stopper-${i}`);
        clients.push(c);
        await c.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
        subs.push(await c.listen({ resourceSubscriptions: ['smriti://spaces/w/head'] }));
      }
      await subs[1].close();         // one ends from the client's side first
      assert.equal(await subs[1].closed, 'local');
      await server.stop();
      assert.equal(await subs[0].closed, 'graceful');
    } finally {
      for (const c of clients) await c.close();
      t.cleanup();
    }
  });
});

describe('MCP 2026-07-28 listen across servers on one PostgreSQL', () => {
  test('a write through one server reaches a listen on another', {
    skip: PG ? false : 'SMRITI_TEST_PG is not set',
  }, async () => {
    const schema = `smriti_mcpmod_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
    const psql = (sql) => spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', PG, '-c', sql], { encoding: 'utf8' });
    assert.equal(psql(`CREATE SCHEMA ${schema}`).status, 0);
    const dsn = `${PG}${PG.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`;
    const servers = [];
    const clients = [];
    try {
      for (let i = 0; i < 2; i++) servers.push(await startServer(dsn, { args: ['--quiet'] }));
      for (const s of servers) {
        const c = modernClient('pg');
        clients.push(c);
        await c.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
      }
      const [writer, listener] = clients;
      const uri = 'smriti://spaces/shared/head';
      const updates = [];
      listener.setNotificationHandler('notifications/resources/updated', (n) => updates.push(n.params.uri));
      await writer.callTool({ name: 'create_space', arguments: { name: 'shared' } });
      const sub = await listener.listen({ resourceSubscriptions: [uri] });
      assert.deepEqual(sub.honoredFilter.resourceSubscriptions, [uri]);
      const res = await writer.callTool({ name: 'write_checkpoint',
        arguments: { space: 'shared', title: 'from the other server', decisions: ['x'] } });
      assert.notEqual(res.isError, true);
      await until(() => updates.length >= 1, 10000, 'the update on the other server');
      assert.deepEqual(updates, [uri]);
      await sub.close();
    } finally {
      for (const c of clients) await c.close();
      for (const s of servers) await s.stop();
      psql(`DROP SCHEMA ${schema} CASCADE`);
    }
  });
});

describe('MCP 2026-07-28 over stdio with the SDK v2 client', () => {
  let t, client;
  const updates = [];
  before(async () => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'watched']);
    client = modernClient('modern-stdio');
    client.setNotificationHandler('notifications/resources/updated', (n) => updates.push(n.params));
    await client.connect(new StdioClientTransport({
      command: SMRITI_FULL, args: ['mcp'], env: sanitizerEnv({ SMRITI_DB: t.db }), stderr: 'pipe',
    }));
  });
  after(async () => {
    await client?.close();
    t?.cleanup();
  });

  test('server/discover and every tool', async () => {
    assert.equal(client.getProtocolEra(), 'modern');
    assert.deepEqual((await client.discover()).supportedVersions, [MODERN]);
    await everyTool(client, 'local');
  });

  test('a listen hears a CLI write; after close, nothing more', async () => {
    const uri = 'smriti://spaces/watched/head';
    const sub = await client.listen({ resourceSubscriptions: [uri] });
    assert.deepEqual(sub.honoredFilter.resourceSubscriptions, [uri]);
    ok(t.db, ['checkpoint', 'create', 'watched', '--title', 'by the cli', '--decision', 'b']);
    await until(() => updates.length >= 1, 5000, 'notifications/resources/updated');
    assert.equal(updates[0].uri, uri);
    await sub.close();
    const n = updates.length;
    ok(t.db, ['checkpoint', 'create', 'watched', '--title', 'unheard', '--decision', 'c']);
    await new Promise((r) => setTimeout(r, 1200));
    assert.equal(updates.length, n);
  });
});

describe('MCP 2026-07-28 requests as sent (raw HTTP)', () => {
  let t, server;
  before(async () => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'raw']);
    server = await startServer(t.db, { args: ['--quiet'] });
  });
  after(async () => {
    await server?.stop();
    t?.cleanup();
  });

  function post(body, headers = {}) {
    return request(server, 'POST', '/mcp', {
      body, headers: { Accept: ACCEPT, 'Content-Type': 'application/json', ...headers },
    });
  }
  const mirror = (method, name) => ({ 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method,
    ...(name ? { 'Mcp-Name': name } : {}) });

  test('no initialize needed; results carry resultType and cache hints', async () => {
    const r = await post({ jsonrpc: '2.0', id: 1, method: 'resources/list', params: { _meta: META } },
      mirror('resources/list'));
    assert.equal(r.status, 200);
    assert.equal(r.json.result.resultType, 'complete');
    assert.equal(r.json.result.ttlMs, 0);
    assert.equal(r.json.result.cacheScope, 'private');
    const tl = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: META } },
      mirror('tools/list'));
    assert.ok(tl.json.result.ttlMs > 0);
    assert.equal(tl.json.result.cacheScope, 'public');
    assert.equal(r.headers['mcp-session-id'], undefined, 'no session');
  });

  test('headers must match the body: -32020 with 400', async () => {
    const body = { jsonrpc: '2.0', id: 3, method: 'tools/call',
      params: { name: 'list_spaces', arguments: {}, _meta: META } };
    let r = await post(body, mirror('tools/call', 'read_head'));
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, -32020);
    assert.equal(r.json.id, 3);
    r = await post(body, mirror('tools/list', 'list_spaces'));
    assert.equal(r.json.error.code, -32020);
    r = await post(body, { 'MCP-Protocol-Version': MODERN });
    assert.equal(r.json.error.code, -32020, 'missing Mcp-Method');
    r = await post(body, { ...mirror('tools/call', 'list_spaces'), 'MCP-Protocol-Version': '2025-11-25' });
    assert.equal(r.json.error.code, -32020, 'header revision differs from _meta');
    r = await post(body, mirror('tools/call', `=?base64?${Buffer.from('list_spaces').toString('base64')}?=`));
    assert.equal(r.status, 200, 'a base64 Mcp-Name is decoded');
    assert.equal(r.json.result.isError, false);
  });

  test('renumbered errors: missing resource -32602, unknown method 404, bad revision -32022', async () => {
    const uri = 'smriti://spaces/none/head';
    let r = await post({ jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri, _meta: META } },
      mirror('resources/read', uri));
    assert.equal(r.json.error.code, -32602);
    r = await post({ jsonrpc: '2.0', id: 5, method: 'resources/subscribe', params: { uri, _meta: META } },
      mirror('resources/subscribe'));
    assert.equal(r.status, 404);
    assert.equal(r.json.error.code, -32601);
    const old = { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' };
    r = await post({ jsonrpc: '2.0', id: 6, method: 'tools/list', params: { _meta: old } },
      { 'MCP-Protocol-Version': '2099-01-01', 'Mcp-Method': 'tools/list' });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, -32022);
    assert.ok(r.json.error.data.supported.includes(MODERN));
  });

  test('a 2025-11-25 request on the same endpoint is served as before', async () => {
    const r = await post({ jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: '2025-11-25',
      capabilities: {}, clientInfo: { name: 'old', version: '1' } } });
    assert.equal(r.json.result.protocolVersion, '2025-11-25');
    assert.equal(r.json.result.capabilities.resources.subscribe, false);
    assert.equal(r.json.result.resultType, undefined);
  });
});
