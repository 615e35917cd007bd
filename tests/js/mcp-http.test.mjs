// mcp-http.test.mjs -- MCP's Streamable HTTP transport at /mcp on
// `smriti serve`: the official SDK client (StreamableHTTPClientTransport)
// calling every tool against a real server on loopback, the handoff loop
// shared with the stdio server and the CLI on one database, and the
// transport's refusals (method, Accept, Content-Type, protocol version,
// Origin, bearer token, malformed bodies) seen over raw HTTP.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { tempDb, ok, SMRITI_FULL } from './helpers.mjs';
import { startServer, request } from './http-helpers.mjs';

const validator = new AjvJsonSchemaValidator();
const ACCEPT = 'application/json, text/event-stream';

function dump(db) {
  return execFileSync('sqlite3', [db, '.dump'], { encoding: 'utf8' })
    .split('\n').filter((l) => !l.startsWith('INSERT INTO servers ')).join('\n')  // a server's heartbeat moves;
}

async function connect(server, headers = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`),
    { requestInit: { headers } });
  const client = new Client({ name: 'http-agent', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function call(client, tools, name, args) {
  const tool = tools.find((t) => t.name === name);
  assert.ok(tool, `${name} listed`);
  const res = await client.callTool({ name, arguments: args });
  assert.notEqual(res.isError, true, `${name}: ${JSON.stringify(res.content)}`);
  const check = validator.getValidator(tool.outputSchema)(res.structuredContent);
  assert.ok(check.valid, `${name} output matches its outputSchema: ${check.errorMessage}`);
  assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent);
  return res.structuredContent;
}

// A raw JSON-RPC POST to /mcp with the headers a conforming client sends.
function post(server, body, headers = {}) {
  return request(server, 'POST', '/mcp', {
    body, headers: { Accept: ACCEPT, 'Content-Type': 'application/json', ...headers },
  });
}

describe('mcp over Streamable HTTP with the SDK client', () => {
  let t, server, client, tools;
  before(async () => {
    t = tempDb();
    server = await startServer(t.db);
    client = await connect(server);
    tools = (await client.listTools()).tools;
  });
  after(async () => {
    await client.close();
    await server.stop();
    t.cleanup();
  });

  test('initialize and tools/list over HTTP', () => {
    assert.equal(client.getServerVersion().name, 'smriti');
    const names = tools.map((x) => x.name);
    for (const n of ['list_spaces', 'create_space', 'read_head', 'show_checkpoint', 'log', 'diff',
      'write_checkpoint', 'restore', 'fork', 'review']) assert.ok(names.includes(n), `${n} listed`);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object');
      assert.equal(tool.outputSchema.type, 'object');
    }
  });

  test('every tool over HTTP, and a stale parent is a tool error that writes nothing', async () => {
    await call(client, tools, 'create_space', { name: 'web' });
    const a = await call(client, tools, 'write_checkpoint', { space: 'web', title: 'a', decisions: ['x'] });
    const head = await call(client, tools, 'read_head', { space: 'web' });
    assert.deepEqual(head, a);
    const b = await call(client, tools, 'write_checkpoint', { space: 'web', parent: head.commit_hash, title: 'b',
      decisions: ['x', 'y'] });
    assert.equal(b.parent_hash, a.commit_hash);

    const before = dump(t.db);
    const logBefore = (await call(client, tools, 'log', { ref: 'web' })).checkpoints.length;
    const res = await client.callTool({ name: 'write_checkpoint', arguments: { space: 'web', parent: a.commit_hash, title: 'late' } });
    assert.equal(res.isError, true);
    assert.equal(res.structuredContent, undefined);
    assert.match(res.content[0].text, /conflict/);
    assert.ok(res.content[0].text.includes(b.commit_hash), 'names the current HEAD');
    assert.equal((await call(client, tools, 'read_head', { space: 'web' })).commit_hash, b.commit_hash);
    assert.equal((await call(client, tools, 'log', { ref: 'web' })).checkpoints.length, logBefore);
    assert.equal(dump(t.db), before, 'database unchanged');

    assert.deepEqual(await call(client, tools, 'show_checkpoint', { ref: a.commit_hash.slice(0, 8) }), a);
    const d = await call(client, tools, 'diff', { from: a.commit_hash, to: b.commit_hash });
    assert.deepEqual(d.decisions.added.map((x) => x.text), ['y']);
    const r = await call(client, tools, 'restore', { space: 'web', ref: a.commit_hash });
    assert.equal(r.parent_hash, b.commit_hash);
    const f = await call(client, tools, 'fork', { ref: a.commit_hash, into: 'web-2' });
    assert.equal(f.head, a.commit_hash);
    const spaces = (await call(client, tools, 'list_spaces', {})).spaces.map((s) => s.name);
    assert.deepEqual(spaces.sort(), ['web', 'web-2']);
    const review = await call(client, tools, 'review', { ref: 'web', llm: false });
    assert.equal(review.commit_hash, r.commit_hash);
  });

  test('the CLI and the HTTP MCP server see the same state', async () => {
    const viaMcp = (await client.callTool({ name: 'read_head', arguments: { space: 'web' } })).structuredContent;
    assert.deepEqual(ok(t.db, ['head', 'web', '--json']), viaMcp);
  });

  test('resources over HTTP', async () => {
    const { resources } = await client.listResources();
    assert.deepEqual(resources.map((x) => x.uri), ['smriti://spaces/web/head', 'smriti://spaces/web-2/head']);
    const head = (await client.callTool({ name: 'read_head', arguments: { space: 'web' } })).structuredContent;
    const js = (await client.readResource({ uri: 'smriti://spaces/web/head.json' })).contents[0];
    assert.deepEqual(JSON.parse(js.text), head);
    const md = (await client.readResource({ uri: `smriti://checkpoints/${head.commit_hash}` })).contents[0];
    assert.equal(md.mimeType, 'text/markdown');
    assert.match(md.text, /^# a\n/);
    await assert.rejects(client.readResource({ uri: 'smriti://spaces/none/head' }),
      (e) => e instanceof McpError && e.code === -32002);
  });

  test('unknown tool: JSON-RPC -32602', async () => {
    await assert.rejects(client.callTool({ name: 'nope', arguments: {} }),
      (e) => e instanceof McpError && e.code === -32602);
  });
});

describe('mcp HTTP transport rules (raw requests)', () => {
  let t, server;
  before(async () => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'raw']);
    server = await startServer(t.db);
  });
  after(async () => {
    await server.stop();
    t.cleanup();
  });

  const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };

  test('a request gets 200 application/json echoing its id', async () => {
    const r = await post(server, { jsonrpc: '2.0', id: 0, method: 'ping' });
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /^application\/json/);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 0, result: {} });
    assert.equal(r.headers['mcp-session-id'], undefined, 'stateless: no session');
  });

  test('notifications and client responses get 202', async () => {
    let r = await post(server, { jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(r.status, 202);
    r = await post(server, { jsonrpc: '2.0', id: 5, result: {} });
    assert.equal(r.status, 202);
  });

  test('GET and DELETE: 405 with Allow: POST', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await request(server, method, '/mcp', { headers: { Accept: 'text/event-stream' } });
      assert.equal(r.status, 405, method);
      assert.equal(r.headers.allow, 'POST');
    }
  });

  test('Accept must allow both JSON and an event stream: 406', async () => {
    for (const accept of [null, 'application/json', 'text/event-stream', 'text/html']) {
      const r = await post(server, ping, { Accept: accept });
      assert.equal(r.status, 406, `Accept: ${accept}`);
      assert.equal(r.json.error.code, -32000);
      assert.equal(r.json.id, null);
    }
    assert.equal((await post(server, ping, { Accept: '*/*' })).status, 200);
    assert.equal((await post(server, ping, { Accept: 'application/*, text/*;q=0.5' })).status, 200);
  });

  test('a body that is not JSON: 415 for the wrong type, 400 for bad JSON', async () => {
    let r = await post(server, JSON.stringify(ping), { 'Content-Type': 'text/plain' });
    assert.equal(r.status, 415);
    r = await post(server, '{"jsonrpc":"2.0",');
    assert.equal(r.status, 400);
    r = await post(server, { jsonrpc: '2.0', id: 3 });
    assert.equal(r.status, 400);
    assert.deepEqual([r.json.id, r.json.error.code], [3, -32600]);
  });

  test('MCP-Protocol-Version: supported values pass, others get 400', async () => {
    for (const v of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']) {
      assert.equal((await post(server, ping, { 'MCP-Protocol-Version': v })).status, 200, v);
    }
    for (const v of ['2026-07-28', 'banana', '']) {
      const r = await post(server, ping, { 'MCP-Protocol-Version': v });
      assert.equal(r.status, 400, `version '${v}'`);
    }
  });

  test('Origin: a foreign origin gets 403, the server\'s own passes', async () => {
    let r = await post(server, ping, { Origin: 'http://evil.example' });
    assert.equal(r.status, 403);
    r = await post(server, ping, { Origin: `http://127.0.0.1:${server.port}` });
    assert.equal(r.status, 200);
    r = await post(server, ping, { Origin: `http://localhost:${server.port}` });
    assert.equal(r.status, 200);
  });

  test('a write refused at the transport writes nothing', async () => {
    const before = dump(t.db);
    const call = { jsonrpc: '2.0', id: 9, method: 'tools/call',
      params: { name: 'write_checkpoint', arguments: { space: 'raw', title: 'sneaky' } } };
    assert.equal((await post(server, call, { Origin: 'http://evil.example' })).status, 403);
    assert.equal((await post(server, call, { Accept: 'application/json' })).status, 406);
    assert.equal((await post(server, call, { 'MCP-Protocol-Version': 'x' })).status, 400);
    assert.equal(dump(t.db), before);
    const r = await post(server, call);
    assert.equal(r.status, 200);
    assert.equal(r.json.result.structuredContent.title, 'sneaky');
  });

  test('JSON-RPC errors inside a valid POST come back with 200', async () => {
    let r = await post(server, { jsonrpc: '2.0', id: 'u', method: 'tools/frobnicate' });
    assert.deepEqual([r.status, r.json.id, r.json.error.code], [200, 'u', -32601]);
    r = await post(server, { jsonrpc: '2.0', id: 'w', method: 'tools/call', params: { name: 'read_head', arguments: { space: 1 } } });
    assert.equal(r.status, 200);
    assert.equal(r.json.result.isError, true);
  });
});

describe('mcp HTTP with SMRITI_TOKEN', () => {
  test('the bearer token rule of the API applies to /mcp', async () => {
    const t = tempDb();
    const server = await startServer(t.db, { env: { SMRITI_TOKEN: 'sekrit-token-123' } });
    try {
      const r = await post(server, { jsonrpc: '2.0', id: 1, method: 'ping' });
      assert.equal(r.status, 401);
      assert.match(r.headers['www-authenticate'], /^Bearer/);
      const bad = await post(server, { jsonrpc: '2.0', id: 1, method: 'ping' }, { Authorization: 'Bearer wrong' });
      assert.equal(bad.status, 401);
      await assert.rejects(connect(server), 'the SDK client without the token is refused');

      const client = await connect(server, { Authorization: 'Bearer sekrit-token-123' });
      const tools = (await client.listTools()).tools;
      await call(client, tools, 'create_space', { name: 'tok' });
      assert.equal((await call(client, tools, 'list_spaces', {})).spaces[0].name, 'tok');
      await client.close();
    } finally {
      await server.stop();
      t.cleanup();
    }
  });
});

describe('smriti mcp against a server (SMRITI_URL)', () => {
  test('a stdio MCP server on another machine shares the Space through the HTTP API', async () => {
    const t = tempDb();
    const server = await startServer(t.db, { env: { SMRITI_TOKEN: 'shared-secret' } });
    const env = { SMRITI_URL: server.url, SMRITI_TOKEN: 'shared-secret' };
    for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) if (process.env[k]) env[k] = process.env[k];
    const stdio = new Client({ name: 'remote-agent', version: '1.0.0' });
    await stdio.connect(new StdioClientTransport({ command: SMRITI_FULL, args: ['mcp'], env, stderr: 'pipe' }));
    const web = await connect(server, { Authorization: 'Bearer shared-secret' });
    try {
      const tools = (await stdio.listTools()).tools;
      await call(stdio, tools, 'create_space', { name: 'shared' });
      const a = await call(stdio, tools, 'write_checkpoint', { space: 'shared', title: 'from stdio' });
      assert.equal(a.author, 'remote-agent');
      // another agent, over HTTP, reads that HEAD and builds on it
      const webTools = (await web.listTools()).tools;
      const head = await call(web, webTools, 'read_head', { space: 'shared' });
      assert.equal(head.commit_hash, a.commit_hash);
      const b = await call(web, webTools, 'write_checkpoint', { space: 'shared', parent: head.commit_hash, title: 'from http' });
      // the first agent's stale write is refused through the remote path too
      const res = await stdio.callTool({ name: 'write_checkpoint', arguments: { space: 'shared', parent: a.commit_hash, title: 'late' } });
      assert.equal(res.isError, true);
      assert.ok(res.content[0].text.includes(b.commit_hash));
      assert.equal(ok(t.db, ['head', 'shared', '--json']).commit_hash, b.commit_hash);
    } finally {
      await stdio.close();
      await web.close();
      await server.stop();
      t.cleanup();
    }
  });
});
