// leases.test.mjs -- servers as leases, not ages (issue 29, part 2;
// docs/scale-out.md, "When a server dies"): each `smriti serve` beats in
// the servers table, and once a server's heartbeat has stopped for its lease
// (SMRITI_LEASE_S) another server takes over what it left running.  Real
// servers, kill -9 of one, the fake provider streaming:
//  - PostgreSQL, two servers: the killed server's reply becomes
//    interrupted within the lease (plus a margin) and the session takes a
//    new message at once; its running and queued draft jobs fail; a
//    server that is alive keeps its replies while it streams many at once.
//  - SQLite, one server: the next start takes over once the lease lapsed,
//    keeping the text the killed server had streamed.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { SANITIZED, tempDb } from './helpers.mjs';
import { startServer, request, expectStatus, openStream } from './http-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';
import { providerEnv, ingestSession, waitRequests, EXTRACTED } from './draft-helpers.mjs';

const PG = process.env.SMRITI_TEST_PG;
const skip = PG ? false : 'SMRITI_TEST_PG is not set (export SMRITI_TEST_PG=$(scripts/pg-cluster.sh start))';
const LEASE_S = 2;
// what a takeover may take beyond the lease: one heartbeat round and the
// takeover's writes, with room for a loaded machine and the sanitizers
const MARGIN_MS = SANITIZED ? 8000 : 4000;

let fake;

before(async () => {
  fake = await startFakeProvider({ port: 0 });
});

after(async () => {
  await fake?.close();
});

function psql(url, sql) {
  const r = spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', url, '-c', sql], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`psql ${sql}: ${r.stderr}`);
  return r.stdout.trim();
}

let schemas = 0;
// A fresh schema on the test cluster: { dsn, cleanup() }.
function freshPg() {
  const schema = `smriti_lease_${process.pid}_${++schemas}_${Math.floor(Math.random() * 1e6)}`;
  psql(PG, `CREATE SCHEMA ${schema}`);
  const sep = PG.includes('?') ? '&' : '?';
  return {
    dsn: `${PG}${sep}options=-csearch_path%3D${schema}`,
    schema,
    cleanup: () => { try { psql(PG, `DROP SCHEMA ${schema} CASCADE`); } catch { /* gone */ } },
  };
}

const env = (extra = {}) => providerEnv(fake, {
  SMRITI_LEASE_S: String(LEASE_S), SMRITI_PROVIDER_RETRIES: '0', ...extra,
});

const serve = (db, extra = {}) => startServer(db, { args: ['--quiet'], env: env(extra) });

// Polls GET path on srv until pick(json) holds; resolves to [json, ms waited].
async function waitUntil(srv, path, pick, timeoutMs) {
  const t0 = Date.now();
  for (;;) {
    const got = await expectStatus(srv, 'GET', path, 200);
    if (pick(got)) return [got, Date.now() - t0];
    if (Date.now() - t0 > timeoutMs) throw new Error(`${path} never got there: ${JSON.stringify(got)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// Starts a reply on srv that the fake holds after two deltas; { gen, seen, stream }.
async function heldReply(srv, sid, hold) {
  fake.script([{ reply: 'kept words then the lost rest', deltas: 5, hold, pause_after: 2 }]);
  const stream = await openStream(srv, 'POST', '/v4/chat/send',
    { body: { session_id: sid, message: 'are you there?', provider: 'openai', model: 'm' } });
  const gen = (await stream.next()).data.generation;
  const seen = (await stream.next()).data.text + (await stream.next()).data.text;
  return { gen, seen, stream };
}

describe('PostgreSQL: two servers, one killed', { skip }, () => {
  test('its reply becomes interrupted within the lease, and the session takes a message at once', async (t) => {
    const db = freshPg();
    const a = await serve(db.dsn);
    const b = await serve(db.dsn);
    try {
      await expectStatus(a, 'POST', '/v4/repos', 201, { body: { name: 'k' } });
      const s = await expectStatus(a, 'POST', '/v4/repos/k/sessions', 201, { body: {} });
      const { gen } = await heldReply(a, s.id, 'pg-kill');
      // while a beats, b leaves its reply alone
      await new Promise((r) => setTimeout(r, LEASE_S * 1000 * 1.5));
      assert.equal((await expectStatus(b, 'GET', `/v4/generations/${gen.id}`, 200)).status, 'running');
      assert.equal((await request(b, 'POST', '/v4/chat/send', { body: { session_id: s.id, message: 'x', provider: 'openai', model: 'm' } })).status, 409);
      await a.stop('SIGKILL');
      const [g, waited] = await waitUntil(b, `/v4/generations/${gen.id}`,
        (x) => x.status !== 'running', LEASE_S * 1000 + MARGIN_MS);
      assert.equal(g.status, 'interrupted');
      assert.match(g.error, /lease lapsed/);
      assert.ok(waited <= LEASE_S * 1000 + MARGIN_MS, `taken over after ${waited} ms`);
      t.diagnostic(`taken over ${waited} ms after the kill (lease ${LEASE_S} s)`);
      fake.release('pg-kill');
      // the session is not stuck: the same message again reuses the kept question
      fake.script([{ reply: 'here now' }]);
      const r = await request(b, 'POST', '/v4/chat/send', { body: { session_id: s.id, message: 'are you there?', provider: 'openai', model: 'm' } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.assistant_turn.content, 'here now');
      assert.match(b.log(), /taking over its work/);
      // the dead server's row went with its work; b's stays
      assert.equal(psql(PG, `SELECT count(*) FROM ${db.schema}.servers`), '1');
    } finally {
      await a.stop('SIGKILL');
      await b.stop();
      db.cleanup();
    }
  });

  test('the interrupted reply keeps the text the killed server had streamed', async () => {
    const db = freshPg();
    const a = await serve(db.dsn);
    const b = await serve(db.dsn);
    try {
      await expectStatus(a, 'POST', '/v4/repos', 201, { body: { name: 'k' } });
      const s = await expectStatus(a, 'POST', '/v4/repos/k/sessions', 201, { body: {} });
      const { gen, seen } = await heldReply(a, s.id, 'pg-text');
      await new Promise((r) => setTimeout(r, 1500));   // stored at least every second
      await a.stop('SIGKILL');
      await waitUntil(b, `/v4/generations/${gen.id}`, (x) => x.status !== 'running', LEASE_S * 1000 + MARGIN_MS);
      fake.release('pg-text');
      const sess = await expectStatus(b, 'GET', `/v4/sessions/${s.id}`, 200);
      assert.deepEqual(sess.turns.map((t) => [t.role, t.status]), [['user', 'complete'], ['assistant', 'interrupted']]);
      assert.equal(sess.turns[1].content, seen);
    } finally {
      await a.stop('SIGKILL');
      await b.stop();
      db.cleanup();
    }
  });

  // The killed server streamed events it had not yet written for the others
  // (it writes them every SMRITI_RELAY_FLUSH_MS, here the longest, 1000):
  // a client that saw them and resumes on the other server must still get
  // the end, numbered after the last event it has, not a stream that closes
  // with nothing (its end numbered among the lost events, which it skips).
  test('a client resuming past events lost with the killed server gets the interrupted end after its last id', async (t) => {
    const db = freshPg();
    const a = await serve(db.dsn, { SMRITI_RELAY_FLUSH_MS: '1000' });
    const b = await serve(db.dsn);
    try {
      await expectStatus(a, 'POST', '/v4/repos', 201, { body: { name: 'k' } });
      const s = await expectStatus(a, 'POST', '/v4/repos/k/sessions', 201, { body: {} });
      const { gen, stream } = await heldReply(a, s.id, 'pg-lost');
      const stored = Number(psql(PG, `SELECT COALESCE(MAX(last_seq), 0) FROM ${db.schema}.generation_events`));
      await a.stop('SIGKILL');
      stream.close();
      t.diagnostic(`the killed server had written ${stored} of the 3 events the client saw`);
      const again = await openStream(b, 'GET', `/v4/generations/${gen.id}`, { headers: { 'Last-Event-ID': '3' } });
      assert.equal(again.status, 200);
      const rest = await again.all();
      assert.equal(rest.length, 1, JSON.stringify(rest));
      assert.equal(rest[0].id, 4);
      assert.equal(rest[0].event, 'error');
      assert.equal(rest[0].data.error.code, 'interrupted');
      // a client that had every event but the lost ones is told the same way
      const late = await openStream(b, 'GET', `/v4/generations/${gen.id}`, { headers: { 'Last-Event-ID': '3' } });
      const end = await late.all();
      assert.deepEqual(end.map((e) => [e.id, e.event]), [[4, 'error']]);
      // and a server that never followed it, once the reply is over (its end rebuilt from the store)
      const c = await serve(db.dsn);
      try {
        const after = await (await openStream(c, 'GET', `/v4/generations/${gen.id}`,
          { headers: { 'Last-Event-ID': '3' } })).all();
        assert.deepEqual(after.map((e) => [e.id, e.event, e.data.error?.code]), [[4, 'error', 'interrupted']]);
      } finally {
        await c.stop();
      }
      fake.release('pg-lost');
    } finally {
      await a.stop('SIGKILL');
      await b.stop();
      db.cleanup();
    }
  });

  test('its running and queued draft jobs fail; the other server drafts on', async () => {
    const db = freshPg();
    fake.reset();
    const a = await serve(db.dsn, { SMRITI_DRAFT_WORKERS: '1' });
    const b = await serve(db.dsn);
    try {
      await expectStatus(a, 'POST', '/v4/repos', 201, { body: { name: 'd' } });
      const s = await ingestSession(a, 'd');
      fake.script([{ json: EXTRACTED, delay_ms: 60000 }]);
      const running = await expectStatus(a, 'POST', '/v5/checkpoints/draft', 202, { body: { session_id: s.id } });
      await waitRequests(fake, 1);
      const queued = await expectStatus(a, 'POST', '/v5/checkpoints/draft', 202, { body: { session_id: s.id } });
      await waitUntil(b, `/v5/checkpoints/draft/${running.job_id}`, (j) => j.status === 'running', 10000);
      await a.stop('SIGKILL');
      for (const id of [running.job_id, queued.job_id]) {
        const [job] = await waitUntil(b, `/v5/checkpoints/draft/${id}`, (j) => j.status !== 'queued' && j.status !== 'running',
          LEASE_S * 1000 + MARGIN_MS);
        assert.equal(job.status, 'failed', JSON.stringify(job));
        assert.equal(job.error, 'the server running this job stopped before it finished; start a new draft');
      }
      fake.reset();
      fake.script([{ json: EXTRACTED }]);
      const again = await expectStatus(b, 'POST', '/v5/checkpoints/draft', 202, { body: { session_id: s.id } });
      const [done] = await waitUntil(b, `/v5/checkpoints/draft/${again.job_id}`, (j) => j.status === 'done' || j.status === 'failed', 30000);
      assert.equal(done.status, 'done', JSON.stringify(done));
    } finally {
      await a.stop('SIGKILL');
      await b.stop();
      db.cleanup();
    }
  });

  test('a server that is alive keeps its replies while it streams many at once', async () => {
    const db = freshPg();
    fake.reset();
    const a = await serve(db.dsn);
    const b = await serve(db.dsn);
    try {
      await expectStatus(a, 'POST', '/v4/repos', 201, { body: { name: 'busy' } });
      const n = SANITIZED ? 12 : 40;
      const sessions = [];
      for (let i = 0; i < n; i++) sessions.push(await expectStatus(a, 'POST', '/v4/repos/busy/sessions', 201, { body: {} }));
      // every reply streams for three leases, in many small deltas: the
      // provider loop and the finisher stay busy the whole time
      const span = LEASE_S * 1000 * 3;
      fake.script(sessions.map(() => ({ reply: 'word '.repeat(300), deltas: 300, trickle_ms: span })));
      const streams = await Promise.all(sessions.map((s) => openStream(a, 'POST', '/v4/chat/send',
        { body: { session_id: s.id, message: 'talk', provider: 'openai', model: 'm' } })));
      const ends = await Promise.all(streams.map(async (st) => (await st.all()).at(-1)));
      for (const e of ends) {
        assert.equal(e.event, 'done', JSON.stringify(e.data).slice(0, 300));
        assert.equal(e.data.generation.status, 'complete');
      }
      assert.doesNotMatch(b.log(), /taking over/);
      assert.equal(psql(PG, `SELECT count(*) FROM ${db.schema}.generations WHERE status <> 'complete'`), '0');
    } finally {
      await a.stop();
      await b.stop();
      db.cleanup();
    }
  });
});

describe('SQLite: one server, killed and started again', () => {
  test('the next start takes over once the lease lapsed; the session takes a message', async (t) => {
    const tmp = tempDb();
    const a = await serve(tmp.db);
    let b;
    try {
      await expectStatus(a, 'POST', '/v4/repos', 201, { body: { name: 'k' } });
      const s = await expectStatus(a, 'POST', '/v4/repos/k/sessions', 201, { body: {} });
      const { gen } = await heldReply(a, s.id, 'lite-kill');
      await a.stop('SIGKILL');
      b = await serve(tmp.db);
      const [g, waited] = await waitUntil(b, `/v4/generations/${gen.id}`,
        (x) => x.status !== 'running', LEASE_S * 1000 + MARGIN_MS);
      assert.equal(g.status, 'interrupted');
      assert.ok(waited <= LEASE_S * 1000 + MARGIN_MS, `taken over after ${waited} ms`);
      t.diagnostic(`taken over ${waited} ms after the next start (lease ${LEASE_S} s)`);
      fake.release('lite-kill');
      const sess = await expectStatus(b, 'GET', `/v4/sessions/${s.id}`, 200);
      assert.equal(sess.generation, null);
      assert.match(sess.turns[0].error, /lease lapsed/);
      fake.script([{ reply: 'here now' }]);
      const r = await request(b, 'POST', '/v4/chat/send', { body: { session_id: s.id, message: 'are you there?', provider: 'openai', model: 'm' } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.user_turn.sequence_number, 1);
    } finally {
      await b?.stop();
      tmp.cleanup();
    }
  });

  test('the interrupted reply keeps the text the killed server had streamed (stored at least every second)', async () => {
    const tmp = tempDb();
    const a = await serve(tmp.db);
    let b;
    try {
      await expectStatus(a, 'POST', '/v4/repos', 201, { body: { name: 'k' } });
      const s = await expectStatus(a, 'POST', '/v4/repos/k/sessions', 201, { body: {} });
      const { gen, seen } = await heldReply(a, s.id, 'lite-text');
      await new Promise((r) => setTimeout(r, 1500));   // stored at least every second
      await a.stop('SIGKILL');
      b = await serve(tmp.db);
      const [g] = await waitUntil(b, `/v4/generations/${gen.id}`,
        (x) => x.status !== 'running', LEASE_S * 1000 + MARGIN_MS);
      assert.equal(g.status, 'interrupted');
      fake.release('lite-text');
      const sess = await expectStatus(b, 'GET', `/v4/sessions/${s.id}`, 200);
      assert.deepEqual(sess.turns.map((x) => [x.role, x.status]), [['user', 'complete'], ['assistant', 'interrupted']]);
      assert.equal(sess.turns[1].content, seen);
    } finally {
      await b?.stop();
      tmp.cleanup();
    }
  });
});
