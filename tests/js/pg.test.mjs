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

// A private cluster (scripts/pg-cluster.sh in a temp dir): { url, dir, restart(), halt(), resume(), stop() }.
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
    assert.equal(fsck.checkpoints, 4);

    assert.deepEqual(ok(db.dsn, ['space', 'list', '--json']).map((s) => s.name), ['trip', 'trip-alt']);
    ok(db.dsn, ['space', 'rename', 'trip-alt', 'trip-b']);
    assert.equal(run(db.dsn, ['space', 'create', 'trip']).code, 4);
    assert.equal(run(db.dsn, ['head', 'nosuch']).code, 3);
    ok(db.dsn, ['space', 'delete', 'trip-b', '--yes']);
    assert.deepEqual(ok(db.dsn, ['space', 'list', '--json']).map((s) => s.name), ['trip']);
  });

  test('the same data is stored as JSONB and as the exact text that was hashed', () => {
    const row = psql(db.dsn, "SELECT decisions->0->>'text' FROM commits ORDER BY id LIMIT 1");
    assert.equal(row, 'Travel 3-10 April');
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
