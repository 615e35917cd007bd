// noparent-writes.test.mjs -- a write that names no parent goes on the HEAD
// of its moment, however many writers race (issue 24 item 4, issue 30):
// 32 writers on one Space, through every route that takes such a write
// (POST /chat/commit, /api/ops/checkpoint.create and .update, PATCH
// /v4/repos/{id}/head, MCP's write_checkpoint and update_checkpoint over
// Streamable HTTP and stdio with the official SDK client, the CLI local and
// remote), on SQLite and on PostgreSQL (with SMRITI_TEST_PG).  Every write is
// acknowledged, none gets a 409 / exit 4, and afterwards every acknowledged
// checkpoint is on HEAD's first-parent chain, which holds exactly them and
// the root.  A write that names a stale parent still gets its 409.  The
// search index stays exact under the race: an item every racer carries is
// indexed once, by the checkpoint that first had it.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawn, spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { tempDb, ok, run, childEnv, stress, SMRITI_FULL } from './helpers.mjs';
import { startServer, request } from './http-helpers.mjs';

const WRITERS = 32;
// Under the sanitizers a fifth of the writes each (helpers.mjs stress()), still
// 32 racing writers.
const writes = stress;
const SHARED = 'every racer carries this decision';

// Backends: SQLite always, PostgreSQL when SMRITI_TEST_PG names a cluster.
const PG = process.env.SMRITI_TEST_PG;
function psql(url, sql) {
  const r = spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', url, '-c', sql], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`psql ${sql}: ${r.stderr}`);
  return r.stdout.trim();
}
let schemas = 0;
const backends = {
  sqlite: () => {
    const t = tempDb();
    return { db: t.db, cleanup: t.cleanup };
  },
  postgres: () => {
    const schema = `smriti_noparent_${process.pid}_${++schemas}`;
    psql(PG, `CREATE SCHEMA ${schema}`);
    const sep = PG.includes('?') ? '&' : '?';
    return {
      db: `${PG}${sep}options=-csearch_path%3D${schema}`,
      cleanup: () => psql(PG, `DROP SCHEMA ${schema} CASCADE`),
    };
  },
};

// HEAD's first-parent chain (checkpoint documents), HEAD first, walked from the whole history.
function chainDocs(db, space) {
  const all = ok(db, ['log', space, '--json'], { bin: SMRITI_FULL });
  const byHash = new Map(all.map((c) => [c.commit_hash, c]));
  const out = [];
  for (let c = all[0]; c; c = byHash.get(c.parent_hash)) out.push(c);
  return out;
}
const chain = (db, space) => chainDocs(db, space).map((c) => c.commit_hash);

// A Space with a root checkpoint that lacks SHARED; returns the root's hash.
function seed(db, space) {
  ok(db, ['space', 'create', space], { bin: SMRITI_FULL });
  return ok(db, ['commit', space, '-m', 'root', '--decision', 'root decision', '--json'],
    { bin: SMRITI_FULL }).commit_hash;
}

// Runs write(w, i) for WRITERS writers, `each` writes apiece, all at once;
// resolves to the hashes acknowledged.  write() resolves to {ok, hash, said}.
async function race(each, write) {
  const failures = [];
  const hashes = [];
  await Promise.all(Array.from({ length: WRITERS }, async (_, w) => {
    for (let i = 0; i < each; i++) {
      const r = await write(w, i);
      if (r.ok) hashes.push(r.hash);
      else failures.push(`writer ${w} write ${i}: ${r.said}`);
    }
  }));
  assert.deepEqual(failures, [], `${failures.length} of ${WRITERS * each} writes were refused`);
  return hashes;
}

// Every acknowledged write is on HEAD's chain, which is exactly them and the root.
function assertChained(db, space, root, hashes) {
  const c = chain(db, space);
  assert.equal(new Set(hashes).size, hashes.length, 'every write made its own checkpoint');
  assert.equal(c.length, hashes.length + 1, 'HEAD\'s first-parent chain holds every write');
  assert.equal(c[c.length - 1], root);
  const on = new Set(c);
  for (const h of hashes) assert.ok(on.has(h), `${h} is on HEAD's chain`);
}

// SHARED was indexed once, by the first checkpoint that carried it.
function assertIndexedOnce(db, space) {
  const found = ok(db, ['search', SHARED, '--space', space, '--json'], { bin: SMRITI_FULL });
  const hits = found.results.filter((r) => r.text === SHARED);
  assert.equal(hits.length, 1, JSON.stringify(hits.map((r) => r.commit_hash)));
  const first = chainDocs(db, space).reverse()
    .find((c) => c.decisions.some((d) => (d.text ?? d) === SHARED));
  assert.equal(hits[0].commit_hash, first.commit_hash, 'indexed by the first checkpoint that had it');
}

// An HTTP answer as race() wants it (/api/ops wraps the operation's result in {result}).
function status(r, want) {
  const doc = r.json?.result ?? r.json;
  return r.status === want ? { ok: true, hash: (doc.checkpoint ?? doc).commit_hash }
    : { ok: false, said: `${r.status} ${r.text}` };
}

for (const [name, open] of Object.entries(backends)) {
  const skip = name === 'postgres' && !PG ? 'SMRITI_TEST_PG is not set' : false;

  describe(`writes without a parent on ${name}`, { skip }, () => {
    const dbs = [];
    const fresh = () => { const d = open(); dbs.push(d); return d.db; };
    after(() => { for (const d of dbs) d.cleanup(); });

    // Runs a server on a fresh database with a seeded Space, then body(srv, agent, db, root).
    async function withServer(body) {
      const db = fresh();
      const root = seed(db, 'pile');
      const srv = await startServer(db, { args: ['--workers', String(WRITERS), '--quiet'] });
      const agent = new http.Agent({ keepAlive: true, maxSockets: WRITERS });
      try {
        await body(srv, agent, db, root);
      } finally {
        agent.destroy();
        await srv.stop();
      }
    }

    test('32 writers through /chat/commit and /api/ops/checkpoint.create: no 409, all on HEAD\'s chain', () =>
      withServer(async (srv, agent, db, root) => {
        const state = (w, i) => ({ title: `w${w} ${i}`, decisions: [SHARED, `w${w} decided ${i}`] });
        const hashes = await race(writes(50), (w, i) => (w % 2
          ? request(srv, 'POST', '/chat/commit', { agent, body: { repo_id: 'pile', ...state(w, i) } })
            .then((r) => status(r, 201))
          : request(srv, 'POST', '/api/ops/checkpoint.create',
            { agent, body: { space: 'pile', checkpoint: state(w, i) } }).then((r) => status(r, 200))));
        assertChained(db, 'pile', root, hashes);
        assertIndexedOnce(db, 'pile');
        // a write that names a stale parent is still refused, and writes nothing
        const stale = await request(srv, 'POST', '/chat/commit',
          { body: { repo_id: 'pile', parent_commit_id: root, title: 'late' } });
        assert.equal(stale.status, 409, stale.text);
        assert.match(stale.json.error.message, /parent is stale: HEAD is now/);
        assert.equal(chain(db, 'pile').length, hashes.length + 1);
      }));

    test('32 writers patching HEAD (PATCH /v4/repos/{id}/head, /api/ops/checkpoint.update) among writers of whole states', () =>
      withServer(async (srv, agent, db, root) => {
        const hashes = await race(writes(25), (w, i) => {
          if (w % 4 === 0) {
            return request(srv, 'POST', '/chat/commit', { agent,
              body: { repo_id: 'pile', title: `w${w} ${i}`, decisions: [SHARED, `w${w} decided ${i}`] } })
              .then((r) => status(r, 201));
          }
          return w % 2
            ? request(srv, 'PATCH', '/v4/repos/pile/head', { agent, body: { summary: `w${w} patched ${i}` } })
              .then((r) => status(r, 201))
            : request(srv, 'POST', '/api/ops/checkpoint.update',
              { agent, body: { space: 'pile', title: `w${w} updated ${i}` } }).then((r) => status(r, 200));
        });
        assertChained(db, 'pile', root, hashes);
        const patch = await request(srv, 'PATCH', '/v4/repos/pile/head', { body: { parent: root, summary: 'late' } });
        assert.equal(patch.status, 409, patch.text);
        assert.match(patch.json.error.message, /parent is stale: HEAD is now/);
        assert.equal(chain(db, 'pile').length, hashes.length + 1);
      }));

    test('MCP clients over Streamable HTTP among 32 writers: write_checkpoint and update_checkpoint without parent', async () => {
      const db = fresh();
      const root = seed(db, 'pile');
      const srv = await startServer(db, { args: ['--workers', String(WRITERS), '--quiet'] });
      const clients = [];
      const agent = new http.Agent({ keepAlive: true, maxSockets: WRITERS });
      try {
        // 16 SDK clients; the other 16 writers post to /chat/commit, as fast as the
        // server takes them, so the MCP writes race as many writers as the server holds
        for (let w = 0; w < WRITERS / 2; w++) {
          const c = new Client({ name: `agent-${w}`, version: '1.0.0' });
          await c.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`)));
          clients.push(c);
        }
        const hashes = await race(writes(40), async (w, i) => {
          if (w >= WRITERS / 2) {
            return status(await request(srv, 'POST', '/chat/commit', { agent,
              body: { repo_id: 'pile', title: `w${w} ${i}`, decisions: [SHARED, `w${w} decided ${i}`] } }), 201);
          }
          const res = w % 4
            ? await clients[w].callTool({ name: 'write_checkpoint',
              arguments: { space: 'pile', title: `w${w} ${i}`, decisions: [SHARED, `w${w} decided ${i}`] } })
            : await clients[w].callTool({ name: 'update_checkpoint',
              arguments: { space: 'pile', add: { tasks: [`w${w} task ${i}`] } } });
          if (res.isError) return { ok: false, said: res.content[0].text };
          const out = res.structuredContent;
          return { ok: true, hash: (out.checkpoint ?? out).commit_hash };
        });
        assertChained(db, 'pile', root, hashes);
        assertIndexedOnce(db, 'pile');
        const stale = await clients[0].callTool({ name: 'write_checkpoint',
          arguments: { space: 'pile', parent: root, title: 'late' } });
        assert.equal(stale.isError, true);
        assert.match(stale.content[0].text, /parent is stale/);
      } finally {
        for (const c of clients) await c.close();
        agent.destroy();
        await srv.stop();
      }
    });

    test('MCP over stdio, one process per agent, and the CLI local and remote, all at once', async () => {
      const db = fresh();
      const root = seed(db, 'pile');
      const srv = await startServer(db, { args: ['--workers', String(WRITERS), '--quiet'] });
      const stdio = [];
      const env = childEnv({ SMRITI_DB: db });
      const cli = (extra, args) => new Promise((resolve) => {
        const child = spawn(SMRITI_FULL, args, { env: childEnv(extra) });
        let stdout = '', stderr = '';
        child.stdout.on('data', (d) => { stdout += d; });
        child.stderr.on('data', (d) => { stderr += d; });
        child.on('close', (code) => resolve(code === 0 ? { ok: true, hash: JSON.parse(stdout).commit_hash }
          : { ok: false, said: `exit ${code}: ${stderr}` }));
      });
      try {
        // writers 0-7: MCP over stdio; 8-15: the CLI on the database; 16-31: the CLI through the server
        for (let w = 0; w < 8; w++) {
          const c = new Client({ name: `stdio-${w}`, version: '1.0.0' });
          await c.connect(new StdioClientTransport({ command: SMRITI_FULL, args: ['mcp'], env, stderr: 'pipe' }));
          stdio.push(c);
        }
        const hashes = await race(3, async (w, i) => {
          const decisions = ['--decision', SHARED, '--decision', `w${w} decided ${i}`];
          if (w < 8) {
            const res = await stdio[w].callTool({ name: 'write_checkpoint',
              arguments: { space: 'pile', title: `w${w} ${i}`, decisions: [SHARED, `w${w} decided ${i}`] } });
            return res.isError ? { ok: false, said: res.content[0].text }
              : { ok: true, hash: res.structuredContent.commit_hash };
          }
          const where = w < 16 ? { SMRITI_DB: db } : { SMRITI_URL: srv.url };
          const exact = w % 2 ? ['--replace', ...decisions] : ['--task', `w${w} task ${i}`];
          return cli(where, ['commit', 'pile', '-m', `w${w} ${i}`, ...exact, '--json']);
        });
        assertChained(db, 'pile', root, hashes);
        assertIndexedOnce(db, 'pile');
        const stale = run(db, ['commit', 'pile', '-m', 'late', '--parent', root], { bin: SMRITI_FULL });
        assert.equal(stale.code, 4, stale.stderr);
        assert.match(stale.stderr, /parent is stale/);
      } finally {
        for (const c of stdio) await c.close();
        await srv.stop();
      }
    });
  });
}
