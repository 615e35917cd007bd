// mcp-subscribe.test.mjs -- resources/subscribe on a Space's HEAD over stdio
// with the official SDK client: notifications/resources/updated arrive when
// HEAD moves, whoever moved it (the CLI in another process, a write through
// `smriti serve` on the same database), stop after unsubscribe, and are not
// offered over stateless HTTP.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { tempDb, ok, SMRITI_FULL } from './helpers.mjs';
import { startServer, request, expectStatus } from './http-helpers.mjs';

const URI = 'smriti://spaces/demo/head';
let tmp;
let client;
let transport;
const updates = [];

function sanitizerEnv(extra) {
  const env = { ...extra };
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) if (process.env[k]) env[k] = process.env[k];
  return env;
}

// Resolves once `count` updates have arrived, or rejects after ms.
function updatesReach(count, ms = 5000) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const tick = () => {
      if (updates.length >= count) return resolve(Date.now() - t0);
      if (Date.now() - t0 > ms) return reject(new Error(`only ${updates.length} updates after ${ms} ms`));
      setTimeout(tick, 25);
    };
    tick();
  });
}

before(async () => {
  tmp = tempDb();
  ok(tmp.db, ['space', 'create', 'demo']);
  ok(tmp.db, ['checkpoint', 'create', 'demo', '--title', 'start', '--decision', 'a']);
  transport = new StdioClientTransport({
    command: SMRITI_FULL, args: ['mcp'], env: sanitizerEnv({ SMRITI_DB: tmp.db }), stderr: 'pipe',
  });
  client = new Client({ name: 'watcher', version: '1.0.0' });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
  await client.connect(transport);
});

after(async () => {
  await client?.close();
  tmp?.cleanup();
});

test('the server offers subscriptions over stdio', () => {
  assert.equal(client.getServerCapabilities().resources.subscribe, true);
});

test('a CLI write in another process notifies the subscriber', async () => {
  await client.subscribeResource({ uri: URI });
  await new Promise((r) => setTimeout(r, 700));
  assert.equal(updates.length, 0, 'nothing moved yet');
  ok(tmp.db, ['checkpoint', 'create', 'demo', '--title', 'by the cli', '--decision', 'b']);
  const ms = await updatesReach(1);
  assert.deepEqual(updates, [URI]);
  assert.ok(ms < 2000, `took ${ms} ms`);
});

test('a write through the HTTP server on the same database notifies too', async () => {
  const srv = await startServer(tmp.db, { args: ['--quiet'] });
  try {
    await expectStatus(srv, 'POST', '/chat/commit', 201,
      { body: { repo_id: 'demo', title: 'by the ui', decisions: ['c'] } });
    await updatesReach(2);
    const head = await client.readResource({ uri: `${URI}.json` });
    assert.match(head.contents[0].text, /by the ui/);
  } finally {
    await srv.stop();
  }
});

test('unknown Spaces cannot be subscribed; unsubscribe stops the notifications', async () => {
  await assert.rejects(client.subscribeResource({ uri: 'smriti://spaces/nosuch/head' }), /-32002|not found/);
  await client.unsubscribeResource({ uri: URI });
  const n = updates.length;
  ok(tmp.db, ['checkpoint', 'create', 'demo', '--title', 'unwatched', '--decision', 'd']);
  await new Promise((r) => setTimeout(r, 1200));
  assert.equal(updates.length, n);
});

test('stateless HTTP does not offer subscriptions', async () => {
  const srv = await startServer(tmp.db, { args: ['--quiet'] });
  try {
    const headers = { Accept: 'application/json, text/event-stream' };
    const init = await request(srv, 'POST', '/mcp', { headers, body: { jsonrpc: '2.0', id: 1,
      method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } } });
    assert.equal(init.json.result.capabilities.resources.subscribe, false);
    const sub = await request(srv, 'POST', '/mcp', { headers, body: { jsonrpc: '2.0', id: 2,
      method: 'resources/subscribe', params: { uri: URI } } });
    assert.equal(sub.json.error.code, -32601);
  } finally {
    await srv.stop();
  }
});
