// http-stream.test.mjs -- streaming chat (docs/http.md, "Streaming chat";
// issue 10) over a real server and the fake provider on loopback, for both
// wire formats: deltas reach the client while the provider still holds the
// rest, Stop keeps the partial reply as `stopped`, an error mid-stream keeps
// the partial text and the user turn, a reader that reconnects with
// Last-Event-ID gets no event twice, a second send while one runs is 409, a
// reply cut by the token limit is `truncated`, a server killed during a
// reply leaves the generation `interrupted` and the session usable, the
// context of the next send holds a stopped turn exactly as stored, and a
// write is answered while many slow sends run.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb } from './helpers.mjs';
import { startServer, request, expectStatus, openStream } from './http-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';

let tmp;
let fake;
let srv;

function providerEnv(extra = {}) {
  return {
    OPENAI_API_KEY: 'sk-test-openai-key-0123456789',
    OPENAI_BASE_URL: `${fake.url}/v1`,
    ANTHROPIC_API_KEY: 'sk-ant-test-key-9876543210',
    ANTHROPIC_BASE_URL: fake.url,
    SMRITI_PROVIDER_RETRIES: '0',
    SMRITI_PROVIDER_TIMEOUT_MS: '20000',
    ...extra,
  };
}

before(async () => {
  tmp = tempDb();
  fake = await startFakeProvider({ port: 0 });
  srv = await startServer(tmp.db, { args: ['--workers', '2', '--quiet'], env: providerEnv() });
  await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'stream' } });
});

after(async () => {
  await srv?.stop();
  await fake?.close();
  tmp?.cleanup();
});

async function newSession() {
  return expectStatus(srv, 'POST', '/v4/repos/stream/sessions', 201, { body: {} });
}

const send = (sid, message, provider, extra = {}) => openStream(srv, 'POST', '/v4/chat/send',
  { body: { session_id: sid, message, provider, model: 'm', ...extra } });

async function waitFor(cond) {
  for (let i = 0; i < 500 && !(await cond()); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(await cond(), 'condition never held');
}

const deltasText = (events) => events.filter((e) => e.event === 'delta').map((e) => e.data.text).join('');

for (const provider of ['openai', 'anthropic']) {
  describe(`streaming with ${provider}`, () => {
    test('deltas arrive before the reply ends, and the stored reply is their sum', async () => {
      const s = await newSession();
      const hold = `first-${provider}`;
      fake.script([{ reply: 'one two three four', deltas: 4, hold, pause_after: 1, provider }]);
      const st = await send(s.id, 'count to four', provider);
      assert.equal(st.status, 200);
      assert.match(st.headers['content-type'], /^text\/event-stream/);
      const gen = await st.next();
      assert.equal(gen.event, 'generation');
      assert.equal(gen.id, 1);
      assert.equal(gen.data.user_turn.content, 'count to four');
      assert.equal(gen.data.generation.status, 'running');
      const first = await st.next();
      assert.equal(first.event, 'delta');
      assert.equal(first.data.text, 'one ');
      // the provider still holds the rest of the reply
      assert.equal(fake.holds()[hold].waiting, 1);
      fake.release(hold);
      const rest = await st.all();
      const done = rest.at(-1);
      assert.equal(done.event, 'done');
      assert.equal(done.data.assistant_turn.content, 'one two three four');
      assert.equal(done.data.assistant_turn.status, 'complete');
      assert.equal(done.data.generation.status, 'complete');
      assert.equal('one ' + deltasText(rest), 'one two three four');
      assert.ok('suggested' in done.data.nudge);
      const ids = [gen, first, ...rest].map((e) => e.id);
      assert.deepEqual(ids, ids.map((_, i) => i + 1), 'ids count from 1 without a gap');
    });

    test('Stop keeps the partial reply as stopped, and the next context holds it exactly', async () => {
      const s = await newSession();
      const hold = `stop-${provider}`;
      fake.script([{ reply: 'partial words that never finish', deltas: 5, hold, pause_after: 2, provider }]);
      const st = await send(s.id, 'say something long', provider);
      const gen = await st.next();
      const d1 = await st.next();
      const d2 = await st.next();
      const seen = d1.data.text + d2.data.text;
      const stop = await expectStatus(srv, 'POST', `/v4/generations/${gen.data.generation.id}/stop`, 200, { body: {} });
      assert.equal(stop.stopping, true);
      const rest = await st.all();
      const done = rest.at(-1);
      assert.equal(done.event, 'done');
      assert.equal(done.data.assistant_turn.status, 'stopped');
      assert.equal(done.data.assistant_turn.content, seen);
      fake.release(hold);
      const got = await expectStatus(srv, 'GET', `/v4/generations/${gen.data.generation.id}`, 200);
      assert.equal(got.status, 'stopped');
      assert.equal(got.space, 'stream');
      const sess = await expectStatus(srv, 'GET', `/v4/sessions/${s.id}`, 200);
      assert.deepEqual(sess.turns.map((t) => [t.role, t.status]), [['user', 'complete'], ['assistant', 'stopped']]);
      assert.equal(sess.generation, null);
      // the next send is built from the stored turns: the stopped one as it is
      fake.script([{ reply: 'ok', provider }]);
      const next = await request(srv, 'POST', '/v4/chat/send', { body: { session_id: s.id, message: 'go on', provider, model: 'm' } });
      assert.equal(next.status, 200, next.text);
      assert.deepEqual(next.json.context.turns_included, [1, 2, 3]);
      const sent = fake.requests().at(-1).body.messages;
      const asst = sent.filter((m) => m.role === 'assistant');
      assert.equal(asst.length, 1);
      const content = typeof asst[0].content === 'string' ? asst[0].content : asst[0].content[0].text;
      assert.equal(content, seen);
    });

    test('an error mid-stream keeps the partial text, names the error, and keeps the user turn', async () => {
      const s = await newSession();
      fake.script([{ reply: 'alpha beta gamma delta', deltas: 4, stream_error: true, fail_after: 2, provider }]);
      const st = await send(s.id, 'this will break', provider);
      const events = await st.all();
      const last = events.at(-1);
      assert.equal(last.event, 'error');
      assert.equal(last.data.error.code, 'provider_error');
      assert.match(last.data.error.message, new RegExp(`^${provider}: `));
      assert.equal(last.data.user_turn.content, 'this will break');
      assert.equal(last.data.assistant_turn.status, 'error');
      assert.equal(last.data.assistant_turn.content, 'alpha beta ');
      assert.equal(last.data.assistant_turn.error, last.data.error.message);
      assert.equal(last.data.generation.status, 'error');
      const sess = await expectStatus(srv, 'GET', `/v4/sessions/${s.id}`, 200);
      assert.deepEqual(sess.turns.map((t) => [t.role, t.status, t.content]),
        [['user', 'complete', 'this will break'], ['assistant', 'error', 'alpha beta ']]);
    });

    test('a reply cut by the token limit is stored as truncated', async () => {
      const s = await newSession();
      fake.script([{ reply: 'cut off in the mid', truncated: true, provider }]);
      const st = await send(s.id, 'write a lot', provider);
      const done = (await st.all()).at(-1);
      assert.equal(done.event, 'done');
      assert.equal(done.data.assistant_turn.status, 'truncated');
      assert.equal(done.data.generation.status, 'truncated');
      // and without streaming, the same
      fake.script([{ reply: 'again cut', truncated: true, provider }]);
      const r = await request(srv, 'POST', '/v4/chat/send', { body: { session_id: s.id, message: 'more', provider, model: 'm' } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.assistant_turn.status, 'truncated');
    });
  });
}

describe('generations', () => {
  test('a reader that reconnects with Last-Event-ID gets every event once', async () => {
    const s = await newSession();
    fake.script([{ reply: 'a b c d e f', deltas: 6, hold: 'reconnect', pause_after: 2 }]);
    const st = await send(s.id, 'six letters', 'openai');
    const got = [await st.next(), await st.next(), await st.next()];
    assert.deepEqual(got.map((e) => e.id), [1, 2, 3]);
    st.close();
    const genId = got[0].data.generation.id;
    const again = await openStream(srv, 'GET', `/v4/generations/${genId}`, { headers: { 'Last-Event-ID': '3' } });
    assert.equal(again.status, 200);
    fake.release('reconnect');
    const rest = await again.all();
    assert.equal(rest[0].id, 4, 'resumes after the last event seen');
    const all = [...got, ...rest];
    assert.deepEqual(all.map((e) => e.id), all.map((_, i) => i + 1), 'no event twice, none lost');
    assert.equal(deltasText(all), 'a b c d e f');
    assert.equal(rest.at(-1).data.assistant_turn.content, 'a b c d e f');
    // a reader from the start gets the whole stream, end included
    const whole = await (await openStream(srv, 'GET', `/v4/generations/${genId}`)).all();
    assert.deepEqual(whole.map((e) => e.event), all.map((e) => e.event));
    assert.deepEqual(whole, all, 'the ended generation keeps every event as it was sent');
    // and one that comes back after the end resumes where it was, too
    const late = await (await openStream(srv, 'GET', `/v4/generations/${genId}`, { headers: { 'Last-Event-ID': '5' } })).all();
    assert.deepEqual(late, all.slice(5));
  });

  test('a second send while a reply runs is 409 and writes nothing', async () => {
    const s = await newSession();
    fake.script([{ reply: 'busy busy', deltas: 2, hold: 'busy', pause_after: 1 }]);
    const st = await send(s.id, 'first', 'openai');
    const gen = await st.next();
    await st.next();
    const second = await request(srv, 'POST', '/v4/chat/send', { body: { session_id: s.id, message: 'second', provider: 'openai', model: 'm' } });
    assert.equal(second.status, 409, second.text);
    assert.equal(second.json.error.code, 'conflict');
    assert.match(second.json.error.message, new RegExp(`already generating a reply \\(generation ${gen.data.generation.id}\\)`));
    const sess = await expectStatus(srv, 'GET', `/v4/sessions/${s.id}`, 200);
    assert.equal(sess.turns.length, 1);
    assert.equal(sess.generation.id, gen.data.generation.id);
    assert.equal(sess.generation.status, 'running');
    fake.release('busy');
    assert.equal((await st.all()).at(-1).event, 'done');
  });

  test('a reader waiting for the first token gets keep-alive comments', async () => {
    const t = tempDb();
    const s2 = await startServer(t.db, { args: ['--quiet'], env: providerEnv({ SMRITI_SSE_KEEPALIVE_MS: '200' }) });
    try {
      await expectStatus(s2, 'POST', '/v4/repos', 201, { body: { name: 'k' } });
      const sess = await expectStatus(s2, 'POST', '/v4/repos/k/sessions', 201, { body: {} });
      fake.script([{ reply: 'after a long think', deltas: 2, hold: 'think', pause_after: 0 }]);
      const st = await openStream(s2, 'POST', '/v4/chat/send', { body: { session_id: sess.id, message: 'think', provider: 'openai', model: 'm' } });
      await st.next();
      await waitFor(() => /\n: keep-alive\n\n/.test(st.text()));
      fake.release('think');
      const rest = await st.all();
      assert.equal(rest.at(-1).event, 'done');
      assert.equal(deltasText(rest), 'after a long think');
    } finally {
      await s2.stop();
      t.cleanup();
    }
  });

  test('unknown generations are 404; stopping an ended one says it was not running', async () => {
    const r = await request(srv, 'GET', '/v4/generations/nope');
    assert.equal(r.status, 404);
    assert.match(r.json.error.message, /no generation 'nope'/);
    const s = await newSession();
    fake.script([{ reply: 'short' }]);
    const done = (await (await send(s.id, 'hi', 'openai')).all()).at(-1);
    const stop = await expectStatus(srv, 'POST', `/v4/generations/${done.data.generation.id}/stop`, 200, { body: {} });
    assert.equal(stop.stopping, false);
    assert.equal(stop.generation.status, 'complete');
  });

  test('writes and reads are answered while 24 slow sends, streamed or not, outnumber the workers', async () => {
    const sessions = [];
    for (let i = 0; i < 24; i++) sessions.push(await newSession());
    fake.script(sessions.map(() => ({ reply: 'slow slow', deltas: 2, hold: 'slow', pause_after: 1 })));
    // half stream, half wait for one JSON answer (the case of issue 10: 24 sends, 8 workers)
    const streams = await Promise.all(sessions.slice(0, 12).map((s) => send(s.id, 'wait', 'openai')));
    const plain = sessions.slice(12).map((s) => request(srv, 'POST', '/v4/chat/send',
      { body: { session_id: s.id, message: 'wait', provider: 'openai', model: 'm' } }));
    await waitFor(() => fake.holds().slow?.waiting === 24);
    // 24 replies in flight on a server with two workers: a write and a read still go through
    const c = await request(srv, 'POST', '/chat/commit', { body: { repo_id: 'stream', title: 'during the sends' } });
    assert.equal(c.status, 201, c.text);
    assert.equal((await request(srv, 'GET', '/repos/stream/head')).status, 200);
    assert.equal(fake.holds().slow.waiting, 24, 'the write did not wait for the replies');
    fake.release('slow');
    for (const st of streams) assert.equal((await st.all()).at(-1).event, 'done');
    for (const r of await Promise.all(plain)) {
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.assistant_turn.content, 'slow slow');
    }
  });
});

describe('restart', () => {
  test('SIGTERM: a reply that does not end in the grace period is stored as interrupted, and the stream says so', async () => {
    const t = tempDb();
    const s2 = await startServer(t.db, { args: ['--quiet'], env: providerEnv() });
    try {
      await expectStatus(s2, 'POST', '/v4/repos', 201, { body: { name: 'k' } });
      const sess = await expectStatus(s2, 'POST', '/v4/repos/k/sessions', 201, { body: {} });
      fake.script([{ reply: 'kept part lost part', deltas: 4, hold: 'term', pause_after: 2 }]);
      const st = await openStream(s2, 'POST', '/v4/chat/send', { body: { session_id: sess.id, message: 'long one', provider: 'openai', model: 'm' } });
      const gen = await st.next();
      const seen = (await st.next()).data.text + (await st.next()).data.text;
      s2.child.kill('SIGTERM');
      const last = (await st.all()).at(-1);
      assert.equal(last.event, 'error');
      assert.equal(last.data.error.code, 'unavailable');
      assert.match(last.data.error.message, /server stopped during the reply/);
      assert.equal(last.data.assistant_turn.status, 'interrupted');
      assert.equal(last.data.assistant_turn.content, seen);
      assert.equal(last.data.generation.id, gen.data.generation.id);
      assert.equal((await s2.exit).code, 0);
      fake.release('term');
    } finally {
      await s2.stop();
      t.cleanup();
    }
  });

  test('kill -9 during a reply: the user turn stays, the generation is interrupted once the lease lapsed, the session is usable', async () => {
    const t = tempDb();
    const env = providerEnv({ SMRITI_LEASE_S: '1' });
    let s2 = await startServer(t.db, { args: ['--quiet'], env });
    let s3;
    try {
      await expectStatus(s2, 'POST', '/v4/repos', 201, { body: { name: 'k' } });
      const sess = await expectStatus(s2, 'POST', '/v4/repos/k/sessions', 201, { body: {} });
      fake.script([{ reply: 'never stored', deltas: 3, hold: 'killed', pause_after: 1 }]);
      const st = await openStream(s2, 'POST', '/v4/chat/send', { body: { session_id: sess.id, message: 'are you there?', provider: 'openai', model: 'm' } });
      const gen = await st.next();
      await st.next();
      await s2.stop('SIGKILL');
      s3 = await startServer(t.db, { args: ['--quiet'], env });
      // the next start watches the killed server's heartbeat for its lease, then takes over
      await waitFor(async () => (await expectStatus(s3, 'GET', `/v4/sessions/${sess.id}`, 200)).generation === null);
      const after = await expectStatus(s3, 'GET', `/v4/sessions/${sess.id}`, 200);
      assert.equal(after.turns.length, 1);
      assert.equal(after.turns[0].content, 'are you there?');
      assert.match(after.turns[0].error, /server generating this reply stopped/);
      assert.equal(after.generation, null, 'nothing runs any more');
      const g = await expectStatus(s3, 'GET', `/v4/generations/${gen.data.generation.id}`, 200);
      assert.equal(g.status, 'interrupted');
      fake.release('killed');
      // not stuck: sending the same message again reuses the kept turn
      fake.script([{ reply: 'here now' }]);
      const r = await request(s3, 'POST', '/v4/chat/send', { body: { session_id: sess.id, message: 'are you there?', provider: 'openai', model: 'm' } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.user_turn.sequence_number, 1);
      assert.equal(r.json.assistant_turn.content, 'here now');
    } finally {
      await s3?.stop();
      t.cleanup();
    }
  });

  // A reply that ended before this server's memory of it (here, before a
  // restart) is streamed from the store: its end, once, then the stream
  // closes, whatever Last-Event-ID the client sends (the end was repeated
  // without stopping).
  test('a reply that ended before a restart: its stream gives the end once and closes', async () => {
    const t = tempDb();
    let s2 = await startServer(t.db, { args: ['--quiet'], env: providerEnv() });
    try {
      await expectStatus(s2, 'POST', '/v4/repos', 201, { body: { name: 'k' } });
      const sess = await expectStatus(s2, 'POST', '/v4/repos/k/sessions', 201, { body: {} });
      fake.script([{ reply: 'all of it', deltas: 2 }]);
      const st = await openStream(s2, 'POST', '/v4/chat/send', { body: { session_id: sess.id, message: 'hi', provider: 'openai', model: 'm' } });
      const events = await st.all();
      const genId = events[0].data.generation.id;
      assert.equal(events.at(-1).event, 'done');
      await s2.stop();
      s2 = await startServer(t.db, { args: ['--quiet'], env: providerEnv() });
      for (const last of [undefined, '1', String(events.length), '99']) {
        const r = await openStream(s2, 'GET', `/v4/generations/${genId}`,
          { headers: last ? { 'Last-Event-ID': last } : {} });
        const got = [];
        for (let e; (e = await r.next()) && got.length < 5;) got.push(e);
        r.close();
        // it cannot tell which events a reader had: each gets the end, numbered after its last
        assert.deepEqual(got.map((e) => e.event), ['done'], `Last-Event-ID ${last}`);
        assert.ok(got[0].id > Number(last ?? 0), `id ${got[0].id} after ${last}`);
        assert.equal(got[0].data.assistant_turn.content, 'all of it');
      }
    } finally {
      await s2.stop();
      t.cleanup();
    }
  });
});
