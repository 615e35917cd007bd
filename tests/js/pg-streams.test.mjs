// pg-streams.test.mjs -- two `smriti serve` on one PostgreSQL act as one for
// the parts a person watches (issue 29, docs/scale-out.md "Replies across
// servers"): a reply started on server A is resumed on server B after
// Last-Event-ID with exactly the events it lacked; a Stop sent to B stops the
// provider call held by A and the reply ends stopped with its partial text;
// B tells the text streamed so far; and a write through B reaches, on A, the
// version a page polls (/v4/changes), an MCP 2026-07-28 subscriptions/listen
// and a stdio resources/subscribe (the official SDK clients).  Latencies are
// printed (no timed assertion for speed; the bounds are generous for ASan).
//
// Needs SMRITI_TEST_PG (scripts/pg-cluster.sh start prints one); skipped
// without it.  The servers work in a schema of their own.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { SMRITI_FULL } from './helpers.mjs';
import { startServer, expectStatus, openStream } from './http-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';

const PG = process.env.SMRITI_TEST_PG;
const skip = PG ? false : 'SMRITI_TEST_PG is not set (export SMRITI_TEST_PG=$(scripts/pg-cluster.sh start))';
const BOUND_MS = 5000;      // "within a second", with room for ASan on a busy machine

function psql(sql) {
  const r = spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', PG, '-c', sql], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`psql ${sql}: ${r.stderr}`);
  return r.stdout.trim();
}

function sanitizerEnv(extra) {
  const env = { ...extra };
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) if (process.env[k]) env[k] = process.env[k];
  return env;
}

async function until(pred, ms, what) {
  const t0 = Date.now();
  while (!(await pred())) {
    if (Date.now() - t0 > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - t0;
}

const deltasText = (events) => events.filter((e) => e.event === 'delta').map((e) => e.data.text).join('');

describe('two servers on one PostgreSQL', { skip }, () => {
  let fake, schema, dsn, A, B;

  before(async () => {
    schema = `smriti_xs_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
    psql(`CREATE SCHEMA ${schema}`);
    dsn = `${PG}${PG.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`;
    fake = await startFakeProvider({ port: 0 });
    const env = {
      OPENAI_API_KEY: 'sk-test-openai-key-0123456789',
      OPENAI_BASE_URL: `${fake.url}/v1`,
      SMRITI_PROVIDER_RETRIES: '0',
      SMRITI_PROVIDER_TIMEOUT_MS: '20000',
    };
    A = await startServer(dsn, { args: ['--workers', '2', '--quiet'], env });
    B = await startServer(dsn, { args: ['--workers', '2', '--quiet'], env });
    await expectStatus(A, 'POST', '/v4/repos', 201, { body: { name: 'two' } });
  });

  after(async () => {
    await A?.stop();
    await B?.stop();
    await fake?.close();
    if (schema) psql(`DROP SCHEMA ${schema} CASCADE`);
  });

  const newSession = () => expectStatus(A, 'POST', '/v4/repos/two/sessions', 201, { body: {} });
  const send = (srv, sid, message) => openStream(srv, 'POST', '/v4/chat/send',
    { body: { session_id: sid, message, provider: 'openai', model: 'm' } });

  test('a stream started on A and resumed on B after Last-Event-ID gets exactly the rest', async () => {
    const s = await newSession();
    const reply = 'one two three four five six seven eight';
    fake.script([{ reply, deltas: 8, hold: 'resume', pause_after: 2, trickle_ms: 1200 }]);
    const st = await send(A, s.id, 'count to eight');
    const seen = [await st.next(), await st.next(), await st.next()];
    assert.deepEqual(seen.map((e) => e.id), [1, 2, 3]);
    assert.deepEqual(seen.map((e) => e.event), ['generation', 'delta', 'delta']);
    st.close();
    const genId = seen[0].data.generation.id;
    // B tells the text streamed so far (written at least every second)
    const text = await until(async () => (await expectStatus(B, 'GET', `/v4/generations/${genId}`, 200)).text
      === deltasText(seen), BOUND_MS, 'the text so far on B');
    console.log(`# text so far readable on B after ${text} ms`);
    const again = await openStream(B, 'GET', `/v4/generations/${genId}`, { headers: { 'Last-Event-ID': '3' } });
    assert.equal(again.status, 200);
    fake.release('resume');
    const rest = await again.all();
    assert.equal(rest[0].id, 4, 'resumes after the last event seen');
    const all = [...seen, ...rest];
    assert.deepEqual(all.map((e) => e.id), all.map((_, i) => i + 1), 'no event twice, none missing');
    assert.equal(deltasText(all), reply);
    const done = rest.at(-1);
    assert.equal(done.event, 'done');
    assert.equal(done.data.assistant_turn.content, reply);
    assert.equal(done.data.generation.status, 'complete');
    // a reader from the start on B, after the end, gets every event as A sent them
    const whole = await (await openStream(B, 'GET', `/v4/generations/${genId}`)).all();
    assert.deepEqual(whole, all);
    const onA = await (await openStream(A, 'GET', `/v4/generations/${genId}`)).all();
    assert.deepEqual(onA, all, 'A and B give the same events');
  });

  test('a reader on B that arrives mid-stream follows it live to the end', async () => {
    const s = await newSession();
    const reply = 'a b c d e f g h i j';
    fake.script([{ reply, deltas: 10, trickle_ms: 2000 }]);
    const st = await send(A, s.id, 'ten letters');
    const first = await st.next();
    const onB = await openStream(B, 'GET', `/v4/generations/${first.data.generation.id}`);
    const [mine, theirs] = await Promise.all([st.all(), onB.all()]);
    assert.deepEqual(theirs, [first, ...mine]);
    assert.equal(deltasText(theirs), reply);
  });

  test('Stop sent to B stops the provider call on A, and the reply ends stopped with its text', async () => {
    const s = await newSession();
    fake.script([{ reply: 'partial words that never finish here', deltas: 6, hold: 'stop-b', pause_after: 2 }]);
    const st = await send(A, s.id, 'say something long');
    const gen = await st.next();
    const seen = (await st.next()).data.text + (await st.next()).data.text;
    assert.equal(fake.holds()['stop-b'].waiting, 1);
    const genId = gen.data.generation.id;
    const t0 = Date.now();
    const stop = await expectStatus(B, 'POST', `/v4/generations/${genId}/stop`, 200, { body: {} });
    assert.equal(stop.stopping, true);
    const rest = await st.all();
    const closed = await until(() => fake.holds()['stop-b'].waiting === 0, BOUND_MS, 'the provider call closed');
    console.log(`# Stop through B: provider call on A closed ${Date.now() - t0} ms after the request (${closed} ms after A's stream ended)`);
    assert.equal(fake.holds()['stop-b'].released, false, 'closed by Smriti, not released');
    const done = rest.at(-1);
    assert.equal(done.event, 'done');
    assert.equal(done.data.assistant_turn.status, 'stopped');
    assert.equal(done.data.assistant_turn.content, seen);
    const got = await expectStatus(B, 'GET', `/v4/generations/${genId}`, 200);
    assert.equal(got.status, 'stopped');
    const again = await expectStatus(B, 'POST', `/v4/generations/${genId}/stop`, 200, { body: {} });
    assert.equal(again.stopping, false);
    const sess = await expectStatus(B, 'GET', `/v4/sessions/${s.id}`, 200);
    assert.deepEqual(sess.turns.map((t) => [t.role, t.status, t.content]),
      [['user', 'complete', 'say something long'], ['assistant', 'stopped', seen]]);
    fake.release('stop-b');
  });

  test('the text of a server killed mid-reply stays readable, and a reader elsewhere gets the end once it is marked', async () => {
    const env = { OPENAI_API_KEY: 'sk-test-openai-key-0123456789', OPENAI_BASE_URL: `${fake.url}/v1`,
      SMRITI_PROVIDER_RETRIES: '0' };
    const K = await startServer(dsn, { args: ['--workers', '2', '--quiet'], env });
    const s = await newSession();
    fake.script([{ reply: 'what was said before the end', deltas: 6, hold: 'killed', pause_after: 3 }]);
    const st = await send(K, s.id, 'talk');
    const seen = [await st.next(), await st.next(), await st.next(), await st.next()];
    const genId = seen[0].data.generation.id;
    const text = deltasText(seen);
    await until(async () => (await expectStatus(B, 'GET', `/v4/generations/${genId}`, 200)).text === text,
      BOUND_MS, 'the text so far on B');
    const onB = await openStream(B, 'GET', `/v4/generations/${genId}`, { headers: { 'Last-Event-ID': '4' } });
    await K.stop('SIGKILL');
    await until(() => fake.holds().killed.waiting === 0, BOUND_MS, 'the killed server\'s provider call closed');
    // what the dead server had written is still there for whoever takes over
    assert.equal((await expectStatus(B, 'GET', `/v4/generations/${genId}`, 200)).text, text);
    // another server marks it interrupted (the lease rule's job; here by hand)
    psql(`SET search_path = ${schema}; UPDATE generations SET status = 'interrupted',`
      + ` error = 'its server stopped', finished_at = '2099-01-01T00:00:00.000000Z' WHERE id = '${genId}'`);
    const rest = await onB.all();
    assert.equal(rest.length, 1, JSON.stringify(rest));
    assert.equal(rest[0].id, 5, 'the end follows the last event written');
    assert.equal(rest[0].event, 'error');
    assert.equal(rest[0].data.error.code, 'interrupted');
    fake.release('killed');
  });

  test('a write through B reaches a page and MCP subscribers on A', async () => {
    await expectStatus(A, 'POST', '/v4/repos', 201, { body: { name: 'live' } });
    const uri = 'smriti://spaces/live/head';
    // the page's live refresh: the version /v4/changes tells it
    const version = async () => (await expectStatus(A, 'GET', '/v4/changes?space=live', 200)).version;
    const v0 = await version();
    // MCP 2026-07-28 subscriptions/listen over HTTP on A
    const modern = new ModernClient({ name: 'listener', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const heard = [];
    modern.setNotificationHandler('notifications/resources/updated', (n) => heard.push([Date.now(), n.params.uri]));
    await modern.connect(new StreamableHTTPClientTransport(new URL(`${A.url}/mcp`)));
    // stdio resources/subscribe of an agent whose smriti talks to A
    const legacy = new Client({ name: 'stdio', version: '1' });
    const told = [];
    legacy.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => told.push([Date.now(), n.params.uri]));
    await legacy.connect(new StdioClientTransport({ command: SMRITI_FULL, args: ['mcp'],
      env: sanitizerEnv({ SMRITI_URL: A.url }), stderr: 'pipe' }));
    try {
      const sub = await modern.listen({ resourceSubscriptions: [uri] });
      assert.deepEqual(sub.honoredFilter.resourceSubscriptions, [uri]);
      await legacy.subscribeResource({ uri });
      await new Promise((r) => setTimeout(r, 700));
      assert.deepEqual([heard.length, told.length], [0, 0], 'nothing moved yet');
      const t0 = Date.now();
      await expectStatus(B, 'POST', '/v4/repos/live/commits', 201, { body: { checkpoint: { title: 'through B', decisions: ['x'] } } });
      const page = await until(async () => (await version()) !== v0, BOUND_MS, 'the version on A');
      await until(() => heard.length > 0, BOUND_MS, 'the listen on A');
      await until(() => told.length > 0, BOUND_MS, 'the stdio subscriber through A');
      console.log(`# a write through B: /v4/changes on A moved after ${page} ms;`
        + ` listen on A told after ${heard[0][0] - t0} ms; stdio subscriber after ${told[0][0] - t0} ms`);
      assert.deepEqual(heard.map((h) => h[1]), [uri]);
      assert.deepEqual(told.map((h) => h[1]), [uri]);
      await sub.close();
    } finally {
      await modern.close();
      await legacy.close();
    }
  });
});
