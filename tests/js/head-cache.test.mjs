// head-cache.test.mjs -- a server keeps the last HEAD document it read and
// renders it once (ops_head_doc, http/server.c), checking the store's data
// version on every read.  These tests hold it to its promise: a cached HEAD
// is never served after a write has been acknowledged to anyone -- a write
// through the same server, or a write by another process (the CLI) on the
// same SQLite file -- on HTTP and on MCP (stdio).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { tempDb, ok, childEnv, SMRITI, SMRITI_FULL } from './helpers.mjs';
import { startServer, request, expectStatus } from './http-helpers.mjs';

// `smriti commit` in a process of its own; resolves to its hash once it exited 0 (acknowledged).
function commitByProcess(db, space, title) {
  return new Promise((resolve, reject) => {
    const child = spawn(SMRITI, ['commit', space, '-m', title, '--json'], { env: childEnv({ SMRITI_DB: db }) });
    let out = '', err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out).commit_hash)
      : reject(new Error(`commit exited ${code}: ${err}`))));
  });
}

test('HTTP: a HEAD read after an acknowledged write, by this server or another process, sees it', async () => {
  const t = tempDb();
  ok(t.db, ['space', 'create', 'cached']);
  const id = ok(t.db, ['space', 'list', '--json'])[0].id;
  const srv = await startServer(t.db, { args: ['--quiet'] });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });   // one connection: one thread's cache
  const head = async (ref) => (await request(srv, 'GET', `/repos/${ref}/head`, { agent })).json.commit_hash;
  try {
    for (let i = 0; i < 12; i++) {
      let written;
      if (i % 2) {
        written = await commitByProcess(t.db, 'cached', `by the CLI ${i}`);
      } else {
        written = (await expectStatus(srv, 'POST', '/chat/commit', 201,
          { agent, body: { repo_id: 'cached', title: `through the server ${i}` } })).commit_hash;
      }
      for (const ref of ['cached', id, 'cached']) assert.equal(await head(ref), written, `round ${i}, ${ref}`);
    }
  } finally {
    agent.destroy();
    await srv.stop();
  }
});

test('HTTP under concurrent reads: no read that starts after a write was acknowledged returns an older HEAD', async () => {
  const t = tempDb();
  ok(t.db, ['space', 'create', 'busy']);
  const order = new Map([[ok(t.db, ['commit', 'busy', '-m', 'root', '--json']).commit_hash, 0]]);
  const srv = await startServer(t.db, { args: ['--quiet'] });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const acked = [];    // acked[k] = the time write k+1 was acknowledged
  const reads = [];
  let done = false;
  try {
    const readers = Array.from({ length: 4 }, async () => {
      while (!done) {
        const start = performance.now();
        const r = await request(srv, 'GET', '/repos/busy/head', { agent });
        assert.equal(r.status, 200, r.text);
        reads.push({ start, hash: r.json.commit_hash });
      }
    });
    for (let k = 1; k <= 15; k++) {
      const hash = await commitByProcess(t.db, 'busy', `write ${k}`);
      acked.push(performance.now());
      order.set(hash, k);
    }
    done = true;
    await Promise.all(readers);
  } finally {
    agent.destroy();
    await srv.stop();
  }
  assert.ok(reads.length > acked.length, `${reads.length} reads`);
  for (const r of reads) {
    assert.ok(order.has(r.hash), `read returned a HEAD that was never written: ${r.hash}`);
    const newest = acked.filter((at) => at < r.start).length;   // writes acknowledged before it began
    assert.ok(order.get(r.hash) >= newest, `a read begun after write ${newest} was acknowledged saw write ${order.get(r.hash)}`);
  }
});

test('MCP (stdio): read_head after a write by another process sees it', async () => {
  const t = tempDb();
  ok(t.db, ['space', 'create', 'agents']);
  const env = { SMRITI_DB: t.db };
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) if (process.env[k]) env[k] = process.env[k];
  const transport = new StdioClientTransport({ command: SMRITI_FULL, args: ['mcp'], env, stderr: 'pipe' });
  const client = new Client({ name: 'head-cache', version: '1.0.0' });
  await client.connect(transport);
  const readHead = async () => (await client.callTool({ name: 'read_head', arguments: { space: 'agents' } }))
    .structuredContent.commit_hash;
  try {
    for (let i = 0; i < 8; i++) {
      const written = await commitByProcess(t.db, 'agents', `elsewhere ${i}`);
      assert.equal(await readHead(), written, `round ${i}`);
      assert.equal(await readHead(), written, `round ${i}, again (cached)`);
    }
  } finally {
    await client.close();
  }
});
