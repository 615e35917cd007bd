// pg.test.mjs -- Smriti on PostgreSQL end to end: the CLI with
// SMRITI_DB=postgres://..., two `smriti serve` processes on one database with
// many concurrent writers (no lost update, gap-free turn numbers), and
// PostgreSQL going away and coming back under load (a clear 503 meanwhile,
// recovery without restarting Smriti).
//
// Needs SMRITI_TEST_PG (a postgres:// URL of a database this test may create
// schemas in; scripts/pg-cluster.sh start prints one); skipped without it.
// Each test works in a schema of its own.  The restart tests start a private
// throwaway cluster with scripts/pg-cluster.sh so other tests keep theirs.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, execFile } from 'node:child_process';
import { mkdtempSync, chmodSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT, run, ok, SMRITI } from './helpers.mjs';
import { startServer, request, expectStatus } from './http-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';

const PG = process.env.SMRITI_TEST_PG;
const skip = PG ? false : 'SMRITI_TEST_PG is not set (export SMRITI_TEST_PG=$(scripts/pg-cluster.sh start))';
const CLUSTER = path.join(ROOT, 'scripts/pg-cluster.sh');
const execFileP = promisify(execFile);

function psql(url, sql) {
  const r = spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', url, '-c', sql], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`psql ${sql}: ${r.stderr}`);
  return r.stdout.trim();
}

let schemas = 0;
// A fresh schema on base; { dsn, cleanup() }.
function freshDb(base = PG) {
  const schema = `smriti_e2e_${process.pid}_${++schemas}_${Math.floor(Math.random() * 1e6)}`;
  psql(base, `CREATE SCHEMA ${schema}`);
  const sep = base.includes('?') ? '&' : '?';
  return {
    dsn: `${base}${sep}options=-csearch_path%3D${schema}`,
    cleanup: () => { try { psql(base, `DROP SCHEMA ${schema} CASCADE`); } catch { /* cluster gone */ } },
  };
}

// A private cluster (scripts/pg-cluster.sh in a temp dir): { url, dir, restart(), halt(), crash(), resume(), stop() }.
async function privateCluster() {
  const dir = mkdtempSync(path.join(tmpdir(), 'smriti-pgtest-'));
  chmodSync(dir, 0o755);
  const cdir = path.join(dir, 'pg');
  const cl = (cmd) => execFileP(CLUSTER, [cmd, cdir], { encoding: 'utf8' });
  const url = (await cl('start')).stdout.trim();
  return {
    url,
    restart: () => cl('restart'),
    halt: () => cl('halt'),
    crash: () => cl('crash'),
    resume: () => cl('resume'),
    async stop() { await cl('stop').catch(() => {}); rmSync(dir, { recursive: true, force: true }); },
  };
}

// Runs every clean-up step even when one throws (a server that did not stop
// cleanly), then reports the first failure.
async function cleanupAll(steps) {
  let first = null;
  for (const step of steps) {
    try { await step(); } catch (e) { first ??= e; }
  }
  if (first) throw first;
}

// All checkpoints of a Space from HEAD back, via one server.
async function history(srv, space) {
  return expectStatus(srv, 'GET', `/v4/repos/${encodeURIComponent(space)}/commits?limit=0`, 200);
}

function titlesOf(list) {
  return new Set(list.map((c) => c.title));
}

describe('the CLI on PostgreSQL', { skip }, () => {
  let db;
  before(() => { db = freshDb(); });
  after(() => db?.cleanup());

  test('core commands work through the lean binary, and hashes verify', () => {
    const sp = ok(db.dsn, ['space', 'create', 'trip', '--description', 'Kyoto — 京都 ✓', '--json']);
    assert.equal(sp.name, 'trip');
    assert.equal(sp.description, 'Kyoto — 京都 ✓');
    assert.equal(sp.head, null);
    const first = ok(db.dsn, ['checkpoint', 'create', 'trip', '--title', 'Dates fixed — तिथि',
      '--decision', 'Travel 3-10 April', '--assumption', 'Blossoms peak early April 🌸',
      '--task', 'Book flights', '--question', 'Ryokan or hotel?', '--entity', 'Kyoto',
      '--meta', 'tool=pg-test', '--author', 'ada', '--json']);
    assert.match(first.commit_hash, /^[0-9a-f]{64}$/);
    assert.equal(first.parent_hash, null);
    assert.deepEqual(first.decisions, [{ text: 'Travel 3-10 April' }]);
    const fields = { title: 'Floats and order', metadata: { z: 0.1, a: 1e-7, big: 1.5e300, n: [1, 2.5] } };
    const second = ok(db.dsn, ['checkpoint', 'create', 'trip', '--from-json', '-',
      '--parent', first.commit_hash, '--json'], { input: JSON.stringify(fields) });
    assert.equal(second.parent_hash, first.commit_hash);
    assert.deepEqual(Object.keys(second.metadata), ['z', 'a', 'big', 'n']);
    const head = ok(db.dsn, ['head', 'trip', '--json']);
    assert.deepEqual(head, second);
    assert.deepEqual(ok(db.dsn, ['show', second.commit_hash.slice(0, 10), '--json']), second);

    // a writer with a stale parent gets exit 4 and writes nothing
    const stale = run(db.dsn, ['commit', 'trip', '-m', 'late', '--parent', first.commit_hash]);
    assert.equal(stale.code, 4, stale.stderr);
    assert.match(stale.stderr, new RegExp(`parent is stale: HEAD is now ${second.commit_hash.slice(0, 12)}`));
    const log = ok(db.dsn, ['log', 'trip', '--json']);
    assert.deepEqual(log.map((c) => c.commit_hash), [second.commit_hash, first.commit_hash]);

    const diff = ok(db.dsn, ['diff', 'trip~1', 'trip', '--json']);
    assert.equal(typeof diff, 'object');
    const restored = ok(db.dsn, ['restore', 'trip', 'trip~1', '--json']);
    assert.equal(restored.parent_hash, second.commit_hash);
    assert.deepEqual(restored.decisions, first.decisions);
    const fork = ok(db.dsn, ['fork', first.commit_hash, '--into', 'trip-alt', '--json']);
    assert.equal(fork.head, first.commit_hash);
    assert.deepEqual(ok(db.dsn, ['log', 'trip-alt', '--json']).map((c) => c.commit_hash),
      [first.commit_hash]);
    const fsck = ok(db.dsn, ['fsck', '--json']);
    assert.equal(fsck.ok, true, JSON.stringify(fsck));
    assert.equal(fsck.checkpoints, 3);   // trip's three; trip-alt holds one of them

    assert.deepEqual(ok(db.dsn, ['space', 'list', '--json']).map((s) => s.name), ['trip', 'trip-alt']);
    ok(db.dsn, ['space', 'rename', 'trip-alt', 'trip-b']);
    assert.equal(run(db.dsn, ['space', 'create', 'trip']).code, 4);
    assert.equal(run(db.dsn, ['head', 'nosuch']).code, 3);
    ok(db.dsn, ['space', 'delete', 'trip-b', '--yes']);
    assert.deepEqual(ok(db.dsn, ['space', 'list', '--json']).map((s) => s.name), ['trip']);
  });

  test('each item is stored once, as the exact text that was hashed, and queryable as JSON', () => {
    // the first Checkpoint's first chunk (after its six counts) is its decisions'
    const row = psql(db.dsn, "SELECT i.body::jsonb->>'text' FROM commits c JOIN chunks k ON k.id = c.lists[7]" +
      ' JOIN items i ON i.id = k.ids[1] ORDER BY c.id LIMIT 1');
    assert.equal(row, 'Travel 3-10 April');
    assert.equal(psql(db.dsn, `SELECT count(*) FROM items WHERE body = '{"text":"Travel 3-10 April"}'`), '1');
    // every migration applied, once each, in order
    assert.equal(psql(db.dsn, 'SELECT max(version) = count(*) AND count(*) = count(DISTINCT version) FROM schema_migrations'), 't');
  });

  test('an unreachable database is a clear error', () => {
    const r = run('postgres://smriti@127.0.0.1:1/none?connect_timeout=2', ['space', 'list']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^smriti: cannot connect to the database: /);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });
});

// Two servers on one database.
async function twoServers(dsn, env = {}) {
  const a = await startServer(dsn, { args: ['--workers', '4'], env });
  const b = await startServer(dsn, { args: ['--workers', '4'], env });
  return [a, b];
}

// One agent: read HEAD, write on top of it with that parent; n times.
async function agent(servers, space, name, n, results) {
  for (let i = 0; i < n; i++) {
    const srv = servers[(i + name.length) % servers.length];
    const head = await request(srv, 'GET', `/repos/${space}/head`);
    if (head.status !== 200) { results.push({ title: null, status: head.status, body: head.json }); continue; }
    const title = `${name} step ${i}`;
    const r = await request(servers[(i + 1) % servers.length], 'POST', '/chat/commit', {
      body: { repo_id: space, parent_commit_id: head.json.commit_hash, title, decisions: [title] },
    });
    results.push({ title, status: r.status, body: r.json, parent: head.json.commit_hash });
  }
}

describe('two servers on one PostgreSQL', { skip }, () => {
  let db;
  let servers;
  let fake;
  before(async () => {
    db = freshDb();
    fake = await startFakeProvider({ port: 0 });
    servers = await twoServers(db.dsn, {
      OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${fake.url}/v1`, SMRITI_PROVIDER_RETRIES: '0',
    });
  });
  after(() => cleanupAll([...(servers || []).map((s) => () => s.stop()),
    () => fake?.close(), () => db?.cleanup()]));

  test('concurrent writers with the parents they read: no lost update', async (t) => {
    const [a, b] = servers;
    await expectStatus(a, 'POST', '/v4/repos', 201, { body: { name: 'shared' } });
    const root = await expectStatus(b, 'POST', '/chat/commit', 201, { body: { repo_id: 'shared', title: 'root' } });
    const results = [];
    const agents = [];
    for (let i = 0; i < 16; i++) agents.push(agent(servers, 'shared', `agent-${i}`, 6, results));
    await Promise.all(agents);

    const won = results.filter((r) => r.status === 201);
    const lost = results.filter((r) => r.status === 409);
    assert.equal(won.length + lost.length, results.length,
      `only 201 and 409: ${JSON.stringify(results.filter((r) => r.status !== 201 && r.status !== 409))}`);
    assert.ok(won.length > 0 && lost.length > 0, `${won.length} won, ${lost.length} conflicts`);
    t.diagnostic(`${results.length} writes: ${won.length} acknowledged, ${lost.length} conflicts`);
    for (const r of lost) {
      assert.equal(r.body.error.code, 'conflict');
      assert.match(r.body.error.message, /^parent is stale: HEAD is now [0-9a-f]{12}/);
    }
    for (const r of won) assert.equal(r.body.parent_hash, r.parent);
    // every acknowledged checkpoint is in the one history, and nothing else is
    const log = await history(a, 'shared');
    assert.equal(log.length, won.length + 1);
    assert.deepEqual(titlesOf(log), new Set([...won.map((r) => r.title), 'root']));
    assert.equal(log.at(-1).commit_hash, root.commit_hash);
    for (let i = 0; i + 1 < log.length; i++) assert.equal(log[i].parent_hash, log[i + 1].commit_hash);
    assert.deepEqual(await history(b, 'shared'), log);
    const fsck = ok(db.dsn, ['fsck', '--json']);
    assert.equal(fsck.ok, true, JSON.stringify(fsck));
  });

  test('turns sent to one session through both servers get unique, gap-free numbers', async (t) => {
    const [a, b] = servers;
    await expectStatus(a, 'POST', '/v4/repos', 201, { body: { name: 'talk' } });
    const s = await expectStatus(b, 'POST', '/v4/repos/talk/sessions', 201, { body: {} });
    // chat.send writes the user turn only if the session has not moved on since it
    // was read (else 409, nothing written); a client then sends again, as told.
    let conflicts = 0;
    const sender = async (i) => {
      for (let attempt = 0; attempt < 200; attempt++) {
        const r = await request(servers[(i + attempt) % 2], 'POST', '/v4/chat/send', {
          body: { session_id: s.id, message: `message ${i}`, provider: 'openai', model: 'gpt-test' },
        });
        if (r.status !== 409) return r;
        assert.equal(r.json.error.code, 'conflict');
        conflicts++;
      }
      throw new Error(`message ${i} never got through`);
    };
    const replies = await Promise.all(Array.from({ length: 24 }, (_, i) => sender(i)));
    for (const r of replies) assert.equal(r.status, 200, r.text);
    t.diagnostic(`24 messages through two servers, ${conflicts} resent after a 409`);
    const got = await expectStatus(a, 'GET', `/v4/sessions/${s.id}`, 200);
    const seqs = got.turns.map((t) => t.sequence_number);
    assert.deepEqual(seqs, Array.from({ length: 48 }, (_, i) => i + 1), `${conflicts} conflicts`);
    const reported = replies.flatMap((r) => [r.json.user_turn.sequence_number,
      r.json.assistant_turn.sequence_number]);
    assert.deepEqual([...reported].sort((x, y) => x - y), seqs);
    const users = got.turns.filter((t) => t.role === 'user').map((t) => t.content).sort();
    assert.deepEqual(users, Array.from({ length: 24 }, (_, i) => `message ${i}`).sort());
    for (const r of replies) {
      assert.ok(r.json.assistant_turn.sequence_number > r.json.user_turn.sequence_number);
    }
  });
});

// The server's CPU time so far, in clock ticks (utime + stime of /proc/PID/stat).
function cpuTicks(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]);
}

describe('HEAD reads on PostgreSQL', { skip }, () => {
  let db;
  let servers;
  before(async () => {
    db = freshDb();
    servers = await twoServers(db.dsn, {});
  });
  after(() => cleanupAll([...(servers || []).map((s) => () => s.stop()), () => db?.cleanup()]));

  // A read waits for the server's reply by polling briefly before it blocks
  // (postgres.c, await_reply): only while a reply is awaited, so a server
  // with nothing to do uses no CPU however busy it just was.
  test('every read after a write sees it, through either server; then an idle server uses no CPU', async () => {
    const [a, b] = servers;
    await expectStatus(a, 'POST', '/v4/repos', 201, { body: { name: 'hot' } });
    let head = null;
    for (let i = 0; i < 60; i++) {
      const w = await expectStatus(servers[i % 2], 'POST', '/chat/commit', 201, {
        body: { repo_id: 'hot', parent_commit_id: head, title: `step ${i}` },
      });
      head = w.commit_hash;
      for (let k = 0; k < 5; k++) {
        const r = await expectStatus(servers[(i + k + 1) % 2], 'GET', '/repos/hot/head', 200);
        assert.equal(r.commit_hash, head, `read ${k} after write ${i}`);
      }
    }
    const before = [a, b].map((s) => cpuTicks(s.child.pid));
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const used = [a, b].map((s, i) => cpuTicks(s.child.pid) - before[i]);
    // a thread spinning through the 2 s would use about 200 ticks
    for (const t of used) assert.ok(t <= 5, `idle servers used ${used.join(' and ')} ticks in 2 s`);
  });
});

describe('PostgreSQL going away under two servers', { skip }, () => {
  let cluster;
  let db;
  let servers;
  before(async () => {
    cluster = await privateCluster();
    db = freshDb(cluster.url);
    servers = await twoServers(db.dsn);
    await expectStatus(servers[0], 'POST', '/v4/repos', 201, { body: { name: 'busy' } });
    await expectStatus(servers[1], 'POST', '/chat/commit', 201, { body: { repo_id: 'busy', title: 'root' } });
  });
  after(() => cleanupAll([...(servers || []).map((s) => () => s.stop()),
    () => db?.cleanup(), () => cluster?.stop()]));

  // Every server thread must work again: several requests to each server.
  async function allRecovered() {
    for (const srv of servers) {
      for (let i = 0; i < 12; i++) {
        const h = await request(srv, 'GET', '/repos/busy/head');
        assert.equal(h.status, 200, h.text);
        const c = await request(srv, 'POST', '/chat/commit', {
          body: { repo_id: 'busy', parent_commit_id: h.json.commit_hash, title: `after ${srv.port} ${i}` },
        });
        assert.equal(c.status, 201, c.text);
      }
    }
  }

  // Acknowledged writes are all there; a 503 write may or may not have landed; a 409 never did.
  async function acknowledgedKept(results) {
    const titles = titlesOf(await history(servers[0], 'busy'));
    for (const r of results) {
      if (r.status === 201) assert.ok(titles.has(r.title), `acknowledged '${r.title}' is in the history`);
      if (r.status === 409) assert.ok(!titles.has(r.title), `rejected '${r.title}' is not`);
    }
    const fsck = ok(db.dsn, ['fsck', '--json']);
    assert.equal(fsck.ok, true, JSON.stringify(fsck));
  }

  test('an outage answers 503 with a clear message, writes nothing, and ends by itself', async () => {
    const before = await history(servers[0], 'busy');
    await cluster.halt();
    for (const srv of servers) {
      for (let i = 0; i < 4; i++) {
        const h = await request(srv, 'GET', '/repos/busy/head');
        assert.equal(h.status, 503, h.text);
        assert.equal(h.json.error.code, 'unavailable');
        assert.match(h.json.error.message, /database/);
        const c = await request(srv, 'POST', '/chat/commit', {
          body: { repo_id: 'busy', parent_commit_id: before[0].commit_hash, title: 'during outage' },
        });
        assert.equal(c.status, 503, c.text);
        assert.match(c.json.error.message, /database/);
      }
    }
    await cluster.resume();
    const again = await history(servers[1], 'busy');
    assert.deepEqual(again, before);
    await allRecovered();
  });

  test('a restart under load: only 200/201/409/503, no lost update, then full recovery', async (t) => {
    const results = [];
    let stop = false;
    const loops = [];
    for (let i = 0; i < 8; i++) {
      loops.push((async () => {
        for (let k = 0; !stop; k++) await agent(servers, 'busy', `load-${i}-${k}`, 1, results);
      })());
    }
    await new Promise((r) => setTimeout(r, 300));
    await cluster.restart();
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await Promise.all(loops);

    const count = (st) => results.filter((r) => r.status === st).length;
    t.diagnostic(`${results.length} writes: ${count(201)} acknowledged, ${count(409)} conflicts, ${count(503)} unavailable`);
    const bad = results.filter((r) => ![200, 201, 409, 503].includes(r.status));
    assert.deepEqual(bad, [], 'no other statuses (no 500s)');
    for (const r of results.filter((x) => x.status === 503)) {
      assert.equal(r.body.error.code, 'unavailable');
      assert.match(r.body.error.message, /database/);
    }
    await allRecovered();
    await acknowledgedKept(results);
  });

  // Issue 16: not the server going away but one backend, killed in the middle
  // of its work (pg_terminate_backend), again and again under load.
  test('backends killed mid-transaction under load: every acknowledged write is there', async (t) => {
    const results = [];
    let stop = false;
    const loops = [];
    for (let i = 0; i < 8; i++) {
      loops.push((async () => {
        for (let k = 0; !stop; k++) await agent(servers, 'busy', `kill-${i}-${k}`, 1, results);
      })());
    }
    // every client backend of the database that is working (in a statement
    // or inside an open transaction), but not this psql
    const kill = `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()
        AND backend_type = 'client backend'
        AND state IN ('active', 'idle in transaction', 'idle in transaction (aborted)')`;
    let killed = 0;
    for (let round = 0; round < 40; round++) {
      const r = await execFileP('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', cluster.url, '-c', kill],
        { encoding: 'utf8' });
      killed += Number(r.stdout.trim());
      await new Promise((res) => setTimeout(res, 25));
    }
    stop = true;
    await Promise.all(loops);

    const count = (st) => results.filter((r) => r.status === st).length;
    t.diagnostic(`${killed} backends killed mid-work; ${results.length} writes: ${count(201)} acknowledged,`
      + ` ${count(409)} conflicts, ${count(503)} unavailable`);
    assert.ok(killed > 0, 'no backend was caught working');
    assert.ok(count(201) > 0, 'nothing was acknowledged');
    const bad = results.filter((r) => ![200, 201, 409, 503].includes(r.status));
    assert.deepEqual(bad, [], 'no other statuses (no 500s)');
    await allRecovered();
    await acknowledgedKept(results);
  });
});

// The events of a server-sent-events body, [{event, data}], data parsed.
function sseEvents(text) {
  const out = [];
  for (const block of text.split('\n\n')) {
    const e = { event: 'message', data: '' };
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) e.event = line.slice(6).trim();
      else if (line.startsWith('data:')) e.data += line.slice(5).replace(/^ /, '');
    }
    if (e.data) out.push({ event: e.event, data: JSON.parse(e.data) });
  }
  return out;
}

// Issue 25: PostgreSQL itself dying (an immediate shutdown: every backend
// ends at once, no checkpoint, crash recovery at the next start) and every
// Smriti connection cut while one of them is in its COMMIT, both under 8
// writers and chat replies streaming slowly through two servers.  What a
// client was told was saved must be there; a write answered 503 may or may
// not have landed; nothing else may be answered; both servers must serve
// every route again without a restart.
describe('PostgreSQL crashing and connections cut mid-COMMIT, under writers and streams', { skip }, () => {
  let cluster;
  let db;
  let servers;
  let fake;
  const sessions = [];
  before(async () => {
    cluster = await privateCluster();
    db = freshDb(cluster.url);
    fake = await startFakeProvider({ port: 0 });
    servers = await twoServers(db.dsn, {
      OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${fake.url}/v1`, SMRITI_PROVIDER_RETRIES: '0',
    });
    await expectStatus(servers[0], 'POST', '/v4/repos', 201, { body: { name: 'load' } });
    await expectStatus(servers[1], 'POST', '/chat/commit', 201, { body: { repo_id: 'load', title: 'root' } });
    for (let i = 0; i < 4; i++) {
      sessions.push(await expectStatus(servers[i % 2], 'POST', '/v4/repos/load/sessions', 201, { body: {} }));
    }
  });
  after(() => cleanupAll([...(servers || []).map((s) => () => s.stop()),
    () => fake?.close(), () => db?.cleanup(), () => cluster?.stop()]));

  // One streamed send: { status, body, events } (events when it was a stream).
  async function streamSend(srv, sid, message) {
    fake.script([{ reply: 'slowly one word at a time', deltas: 6, trickle_ms: 500 }]);
    const r = await request(srv, 'POST', '/v4/chat/send', {
      body: { session_id: sid, message, provider: 'openai', model: 'gpt-test' },
      headers: { Accept: 'text/event-stream' },
    });
    const stream = r.status === 200 && /event-stream/.test(r.headers['content-type']);
    return { status: r.status, body: r.json, message, sid, events: stream ? sseEvents(r.text) : null };
  }

  // 8 writers and one streaming client per session until fault() has
  // settled and a second more has passed.
  async function underLoad(fault) {
    const writes = [];
    const streams = [];
    let stop = false;
    const loops = [];
    for (let i = 0; i < 8; i++) {
      loops.push((async () => {
        for (let k = 0; !stop; k++) await agent(servers, 'load', `w-${i}-${k}-${Date.now()}`, 1, writes);
      })());
    }
    sessions.forEach((s, i) => loops.push((async () => {
      for (let k = 0; !stop; k++) streams.push(await streamSend(servers[(i + k) % 2], s.id, `m-${i}-${k}-${Date.now()}`));
    })()));
    await new Promise((r) => setTimeout(r, 700));
    const detail = await fault();
    await new Promise((r) => setTimeout(r, 1000));
    stop = true;
    await Promise.all(loops);
    return { writes, streams, detail };
  }

  // The turns a client was shown as stored, with the session they belong to.
  function acknowledgedTurns(streams) {
    const turns = [];
    for (const s of streams) {
      for (const e of s.events || []) {
        for (const k of ['user_turn', 'assistant_turn']) {
          if (e.data[k]) turns.push({ sid: s.sid, event: e.event, turn: e.data[k] });
        }
      }
    }
    return turns;
  }

  async function check(t, what, { writes, streams, detail }) {
    const count = (st) => writes.filter((r) => r.status === st).length;
    const sent = (st) => streams.filter((r) => r.status === st).length;
    const bad = writes.filter((r) => ![200, 201, 409, 503].includes(r.status));
    assert.deepEqual(bad, [], 'writes: only 200/201/409/503');
    // a send that meets its session's last reply not yet ended in the store
    // (its end waits for the database, gen_settle_later) is told 409 and writes nothing
    const badSends = streams.filter((r) => ![200, 503].includes(r.status)
      && !(r.status === 409 && /is already generating a reply/.test(r.body?.error?.message)));
    assert.deepEqual(badSends.map((r) => [r.status, r.body]), [], 'sends: only a stream, 409 or 503');
    for (const r of [...writes, ...streams].filter((x) => x.status === 503)) {
      assert.equal(r.body.error.code, 'unavailable', JSON.stringify(r.body));
      assert.match(r.body.error.message, /database/);
    }
    // every stream ends with its last event: done, or error saying what failed
    for (const s of streams.filter((x) => x.events)) {
      const last = s.events.at(-1);
      assert.ok(['done', 'error'].includes(last?.event), `stream ended with ${JSON.stringify(last)}`);
      if (last.event === 'error') assert.equal(typeof last.data.error.message, 'string');
    }
    // the servers recover by themselves: every thread writes and reads, every session answers
    for (const srv of servers) {
      for (let i = 0; i < 12; i++) {
        const h = await request(srv, 'GET', '/repos/load/head');
        assert.equal(h.status, 200, h.text);
        const c = await request(srv, 'POST', '/chat/commit', {
          body: { repo_id: 'load', parent_commit_id: h.json.commit_hash, title: `after ${what} ${srv.port} ${i}` },
        });
        assert.equal(c.status, 201, c.text);
      }
    }
    for (const [i, s] of sessions.entries()) {
      const r = await streamSend(servers[i % 2], s.id, `after ${what} ${i}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.events.at(-1).event, 'done', JSON.stringify(r.events.at(-1)));
    }
    // every acknowledged checkpoint is in the history, no refused one is
    const titles = titlesOf(await history(servers[0], 'load'));
    for (const r of writes) {
      if (r.status === 201) assert.ok(titles.has(r.title), `acknowledged '${r.title}' is in the history`);
      if (r.status === 409) assert.ok(!titles.has(r.title), `refused '${r.title}' is not`);
    }
    // every turn a stream showed is stored as shown
    const stored = new Map();
    for (const s of sessions) {
      for (const turn of (await expectStatus(servers[1], 'GET', `/v4/sessions/${s.id}`, 200)).turns) {
        stored.set(`${s.id}/${turn.sequence_number}`, turn);
      }
    }
    const shown = acknowledgedTurns(streams);
    for (const { sid, event, turn } of shown) {
      const got = stored.get(`${sid}/${turn.sequence_number}`);
      assert.ok(got, `turn ${turn.sequence_number} (${turn.role}, shown in '${event}') is stored`);
      assert.equal(got.role, turn.role);
      assert.equal(got.content, turn.content, `turn ${turn.sequence_number}: content as shown`);
    }
    const fsck = ok(db.dsn, ['fsck', '--json']);
    assert.equal(fsck.ok, true, JSON.stringify(fsck));
    const replies = shown.filter((x) => x.event === 'done' && x.turn.role === 'assistant').length;
    t.diagnostic(`${what}${detail ? ` (${detail})` : ''}: ${writes.length} writes, ${count(201)} acknowledged`
      + ` and found, ${count(409)} conflicts, ${count(503)} 503s; ${streams.length} streamed sends,`
      + ` ${sent(200)} streams, ${sent(503)} 503s, ${sent(409)} 409s, ${shown.length} turns shown as stored and found`
      + ` (${replies} complete replies)`);
    assert.ok(count(201) > 0, 'nothing was acknowledged');
    return { acknowledged: count(201), unavailable: count(503) + sent(503) };
  }

  // An immediate shutdown ends each backend with a WARNING (57P01), not an
  // error, before it hangs up; libpq keeps such an idle connection "OK"
  // until it reads the hang-up, so the next write went out on it and failed
  // in its COMMIT ("may or may not have been saved") with the database back.
  test('connections ended by an immediate shutdown while idle are replaced before the next write', async () => {
    for (const srv of servers) for (let i = 0; i < 8; i++) await expectStatus(srv, 'GET', '/repos/load/head', 200);
    await cluster.crash();
    await cluster.resume();
    for (const srv of servers) {
      for (let i = 0; i < 12; i++) {
        const h = await expectStatus(srv, 'GET', '/repos/load/head', 200);
        const c = await request(srv, 'POST', '/chat/commit', {
          body: { repo_id: 'load', parent_commit_id: h.commit_hash, title: `after the crash ${srv.port} ${i}` },
        });
        assert.equal(c.status, 201, `write ${i} through ${srv.port} with the database back: ${c.text}`);
      }
    }
  });

  // A reply whose end cannot be stored (the database went away while it
  // streamed) left its generation "running" in the database: every server
  // then refused the session's next message (409) for an hour.
  test('a reply that ends while the database is down: its session takes messages once it is back', async () => {
    const sid = sessions[0].id;
    fake.reset();                 /* the held step must be the next one taken */
    fake.script([{ reply: 'held back reply', deltas: 3, hold: 'pgdown', pause_after: 1 }]);
    const pending = request(servers[0], 'POST', '/v4/chat/send', {
      body: { session_id: sid, message: 'during the outage', provider: 'openai', model: 'gpt-test' },
      headers: { Accept: 'text/event-stream' },
    });
    for (let i = 0; i < 500 && fake.holds().pgdown?.waiting !== 1; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(fake.holds().pgdown?.waiting, 1, 'the reply never started');
    await cluster.halt();
    fake.release('pgdown');
    const events = sseEvents((await pending).text);
    const last = events.at(-1);
    assert.equal(last.event, 'error', JSON.stringify(last));
    assert.match(last.data.error.message, /database|stored/);
    await cluster.resume();
    let r;
    for (let i = 0; i < 30; i++) {
      r = await streamSend(servers[i % 2], sid, `after the outage ${i}`);
      if (r.status !== 409 && r.status !== 503) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.events.at(-1).event, 'done');
    const gen = await expectStatus(servers[1], 'GET', `/v4/generations/${last.data.generation.id}`, 200);
    assert.equal(gen.status, 'error');
  });

  test('pg_ctl stop -m immediate under load, then start: nothing acknowledged is lost', async (t) => {
    const load = await underLoad(async () => {
      await cluster.crash();
      await new Promise((r) => setTimeout(r, 800));
      await cluster.resume();
    });
    const { unavailable } = await check(t, 'immediate shutdown', load);
    assert.ok(unavailable > 0, 'the outage was not seen');
  });

  test('every Smriti connection terminated whenever one is in COMMIT: nothing acknowledged is lost', async (t) => {
    // One psql session watches pg_stat_activity for 3 s (a fresh snapshot
    // each turn); when a client backend is running COMMIT it terminates
    // every Smriti connection, the committing one included.
    const watch = `DO $$
      DECLARE n int := 0; rounds int := 0; t0 timestamptz := clock_timestamp();
      BEGIN
        WHILE clock_timestamp() - t0 < interval '3 seconds' LOOP
          PERFORM pg_stat_clear_snapshot();
          IF EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
                     AND application_name = 'smriti' AND state = 'active'
                     AND query ILIKE 'commit%') THEN
            n := n + (SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                      WHERE datname = current_database() AND pid <> pg_backend_pid()
                        AND application_name = 'smriti');
            rounds := rounds + 1;
          END IF;
          PERFORM pg_sleep(0.003);
        END LOOP;
        RAISE NOTICE 'cut % connections in % COMMITs', n, rounds;
      END $$`;
    let caught = '';
    const load = await underLoad(async () => {
      const r = await execFileP('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', cluster.url, '-c', watch],
        { encoding: 'utf8' });
      caught = (r.stderr.match(/cut \d+ connections in \d+ COMMITs/) || [''])[0];
      return caught;
    });
    assert.match(caught, /in [1-9]\d* COMMITs/, 'no COMMIT was caught');
    await check(t, 'connections cut in COMMIT', load);
  });
});
