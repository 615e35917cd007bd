// http-chat.test.mjs -- the chat routes of `smriti serve` (V4 sessions and
// send, V5 mount) over a real server and the fake provider on loopback:
// happy paths, provider failures rendered as 502/504 with the kept user
// turn, bad requests that write nothing, keys kept out of responses and
// logs, and the threading promise: a slow provider call blocks no reads.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb } from './helpers.mjs';
import { startServer, request, expectStatus, assertError } from './http-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';

const OPENAI_KEY = 'sk-test-openai-key-0123456789';
const ANTHROPIC_KEY = 'sk-ant-test-key-9876543210';

let tmp;
let fake;
let srv;
let space;

function providerEnv(extra = {}) {
  return {
    OPENAI_API_KEY: OPENAI_KEY,
    OPENAI_BASE_URL: `${fake.url}/v1`,
    ANTHROPIC_API_KEY: ANTHROPIC_KEY,
    ANTHROPIC_BASE_URL: fake.url,
    SMRITI_PROVIDER_RETRIES: '0',
    SMRITI_PROVIDER_TIMEOUT_MS: '1500',
    ...extra,
  };
}

before(async () => {
  tmp = tempDb();
  fake = await startFakeProvider({ port: 0 });
  srv = await startServer(tmp.db, { args: ['--workers', '4'], env: providerEnv() });
  space = await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'chat' } });
});

after(async () => {
  await srv?.stop();
  await fake?.close();
  tmp?.cleanup();
});

async function turns(sessionId) {
  return (await expectStatus(srv, 'GET', `/v4/sessions/${sessionId}`, 200)).turns;
}

function assertNoKeys(text) {
  assert.ok(!text.includes(OPENAI_KEY), 'OpenAI key leaked');
  assert.ok(!text.includes(ANTHROPIC_KEY), 'Anthropic key leaked');
}

describe('V4 sessions', () => {
  test('create, list, get with turns', async () => {
    const s = await expectStatus(srv, 'POST', `/v4/repos/${space.id}/sessions`, 201,
      { body: { title: 'planning' } });
    assert.equal(s.title, 'planning');
    assert.equal(s.repo_id, space.id);
    const byName = await expectStatus(srv, 'POST', '/v4/repos/chat/sessions', 201, { body: {} });
    const list = await expectStatus(srv, 'GET', `/v4/repos/${space.id}/sessions`, 200);
    assert.deepEqual(new Set(list.map((x) => x.id)), new Set([s.id, byName.id]));
    const got = await expectStatus(srv, 'GET', `/v4/sessions/${s.id}`, 200);
    assert.equal(got.id, s.id);
    assert.deepEqual(got.turns, []);
  });

  test('unknown Space or session is 404, bad bodies 400, nothing written', async () => {
    const before = await expectStatus(srv, 'GET', '/v4/repos/chat/sessions', 200);
    assertError(await request(srv, 'POST', '/v4/repos/nosuch/sessions', { body: {} }), 404, 'not_found');
    assertError(await request(srv, 'GET', '/v4/repos/nosuch/sessions'), 404, 'not_found');
    assertError(await request(srv, 'GET', '/v4/sessions/nosuch'), 404, 'not_found');
    assertError(await request(srv, 'POST', '/v4/repos/chat/sessions', { body: { title: 7 } }), 400);
    assertError(await request(srv, 'POST', '/v4/repos/chat/sessions', { body: '{"title":' }), 400);
    assert.deepEqual(await expectStatus(srv, 'GET', '/v4/repos/chat/sessions', 200), before);
  });
});

describe('POST /v4/chat/send', () => {
  test('stores both turns and answers with them, the context and the nudge', async () => {
    const s = await expectStatus(srv, 'POST', '/v4/repos/chat/sessions', 201, { body: {} });
    await fake.reset();
    await fake.script([{ reply: 'hello from openai' }]);
    const r = await expectStatus(srv, 'POST', '/v4/chat/send', 200, {
      body: { session_id: s.id, message: 'hi there', provider: 'openai', model: 'gpt-test' },
    });
    assert.equal(r.user_turn.content, 'hi there');
    assert.equal(r.user_turn.sequence_number, 1);
    assert.equal(r.assistant_turn.content, 'hello from openai');
    assert.equal(r.assistant_turn.provider, 'openai');
    assert.equal(r.assistant_turn.model, 'gpt-test');
    assert.ok(r.context && typeof r.context === 'object');
    assert.equal(typeof r.nudge.suggested, 'boolean');
    const stored = await turns(s.id);
    assert.deepEqual(stored.map((t) => [t.sequence_number, t.role]), [[1, 'user'], [2, 'assistant']]);

    // the provider can change mid-session; the session stays the same
    await fake.script([{ reply: 'hello from anthropic' }]);
    const r2 = await expectStatus(srv, 'POST', '/v4/chat/send', 200, {
      body: { session_id: s.id, message: 'again', provider: 'anthropic', model: 'claude-test' },
    });
    assert.equal(r2.assistant_turn.content, 'hello from anthropic');
    assert.equal((await turns(s.id)).length, 4);
    const reqs = await fake.requests();
    assert.equal(reqs.length, 2);
    assertNoKeys(JSON.stringify(r) + JSON.stringify(r2));
  });

  test('the generic route runs chat.send too', async () => {
    const s = await expectStatus(srv, 'POST', '/v4/repos/chat/sessions', 201, { body: {} });
    const r = await expectStatus(srv, 'POST', '/api/ops/chat.send', 200, {
      body: { session_id: s.id, message: 'via ops', provider: 'openai', model: 'gpt-test' },
    });
    assert.equal(r.result.user_turn.content, 'via ops');
  });

  test('a provider failure is a 502 carrying the kept user turn; a timeout a 504', async () => {
    const s = await expectStatus(srv, 'POST', '/v4/repos/chat/sessions', 201, { body: {} });
    await fake.reset();
    await fake.script([{ status: 500, message: 'upstream broke' }]);
    const r = await request(srv, 'POST', '/v4/chat/send', {
      body: { session_id: s.id, message: 'will fail', provider: 'openai', model: 'gpt-test' },
    });
    assertError(r, 502, 'provider_error');
    assert.equal(r.json.user_turn.content, 'will fail');
    assert.equal(typeof r.json.error.message, 'string');
    assertNoKeys(r.text);
    let stored = await turns(s.id);
    assert.deepEqual(stored.map((t) => t.role), ['user']);
    assert.ok(stored[0].error);

    await fake.script([{ delay_ms: 4000, reply: 'too late' }]);
    const t = await request(srv, 'POST', '/v4/chat/send', {
      body: { session_id: s.id, message: 'will time out', provider: 'openai', model: 'gpt-test' },
    });
    assertError(t, 504, 'provider_timeout');
    assert.equal(t.json.user_turn.content, 'will time out');
    stored = await turns(s.id);
    assert.equal(stored.at(-1).content, 'will time out');

    const a = await request(srv, 'POST', '/api/ops/chat.send', {
      body: { session_id: s.id, message: 'x', provider: 'nosuch', model: 'm' },
    });
    assert.ok(a.status >= 400 && a.status < 600 && a.json.error, a.text);
    assertNoKeys(a.text);
  });

  test('bad sends are refused and write nothing', async () => {
    const s = await expectStatus(srv, 'POST', '/v4/repos/chat/sessions', 201, { body: {} });
    await fake.reset();
    const cases = [
      ['{"session_id":', 400],
      [[], 400],
      [{ message: 'no session', provider: 'openai', model: 'm' }, 400],
      [{ session_id: s.id, provider: 'openai', model: 'm' }, 400],
      [{ session_id: s.id, message: 5, provider: 'openai', model: 'm' }, 400],
      [{ session_id: 'nosuch', message: 'hi', provider: 'openai', model: 'm' }, 404],
      [{ session_id: s.id, message: 'hi', provider: 'openai', model: 'm', history_base_seq: 5 }, 422],
      [{ session_id: s.id, message: 'hi', provider: 'openai', model: 'm', history_base_seq: 'x' }, 422],
      [{ session_id: s.id, message: 'hi', provider: 'openai', model: 'm', commit_hash: 'f'.repeat(64) }, 422],
    ];
    for (const [body, status] of cases) {
      const r = await request(srv, 'POST', '/v4/chat/send', { body });
      assertError(r, status);
    }
    assert.deepEqual(await turns(s.id), []);
    assert.equal((await fake.requests()).length, 0);
  });
});

describe('POST /v5/sessions/{id}/mount', () => {
  test('mounting forks a new session; the old one is untouched', async () => {
    const c = await expectStatus(srv, 'POST', '/chat/commit', 201,
      { body: { repo_id: 'chat', title: 'mount me', decisions: ['use sequence numbers'] } });
    const s = await expectStatus(srv, 'POST', '/v4/repos/chat/sessions', 201, { body: { title: 'old' } });
    await fake.script([{ reply: 'before mount' }]);
    await expectStatus(srv, 'POST', '/v4/chat/send', 200,
      { body: { session_id: s.id, message: 'pre-mount secret', provider: 'openai', model: 'm' } });
    const m = await expectStatus(srv, 'POST', `/v5/sessions/${s.id}/mount`, 201,
      { body: { commit_hash: c.commit_hash.slice(0, 12) } });
    assert.notEqual(m.id, s.id);
    assert.equal(m.mounted_commit_hash, c.commit_hash);
    assert.equal(m.forked_from_session_id, s.id);
    assert.deepEqual(await turns(m.id), []);
    assert.equal((await turns(s.id)).length, 2);

    await fake.reset();
    await fake.script([{ reply: 'after mount' }]);
    await expectStatus(srv, 'POST', '/v4/chat/send', 200,
      { body: { session_id: m.id, message: 'post-mount', provider: 'openai', model: 'm' } });
    const sent = JSON.stringify((await fake.requests())[0].body);
    assert.ok(sent.includes('use sequence numbers'));
    assert.ok(!sent.includes('pre-mount secret'));
  });

  test('bad mounts are refused and create no session', async () => {
    const s = await expectStatus(srv, 'POST', '/v4/repos/chat/sessions', 201, { body: {} });
    const before = await expectStatus(srv, 'GET', '/v4/repos/chat/sessions', 200);
    assertError(await request(srv, 'POST', `/v5/sessions/${s.id}/mount`, { body: {} }), 400);
    assertError(await request(srv, 'POST', `/v5/sessions/${s.id}/mount`, { body: { commit_hash: 1 } }), 400);
    const unknown = await request(srv, 'POST', `/v5/sessions/${s.id}/mount`, { body: { commit_hash: 'f'.repeat(64) } });
    assert.ok([404, 422].includes(unknown.status), unknown.text);
    assert.ok(unknown.json.error, unknown.text);
    assertError(await request(srv, 'POST', '/v5/sessions/nosuch/mount', { body: { commit_hash: 'abcd' } }), 404);
    assert.deepEqual(await expectStatus(srv, 'GET', '/v4/repos/chat/sessions', 200), before);
  });
});

describe('threads', () => {
  test('a slow provider call blocks neither reads nor other writes', async () => {
    const s = await expectStatus(srv, 'POST', '/v4/repos/chat/sessions', 201, { body: {} });
    await fake.reset();
    await fake.script([{ delay_ms: 1200, reply: 'slow answer' }]);
    let sendDone = false;
    const send = request(srv, 'POST', '/v4/chat/send', {
      body: { session_id: s.id, message: 'slow', provider: 'openai', model: 'm' },
    }).then((r) => { sendDone = true; return r; });
    // wait until the provider has the request, so the send is in flight
    while ((await fake.requests()).length === 0) await new Promise((res) => setTimeout(res, 20));
    const reads = [];
    for (let i = 0; i < 20; i++) {
      reads.push(await request(srv, 'GET', '/v4/repos/chat'));
    }
    const write = await request(srv, 'POST', '/v4/repos', { body: { name: 'during-send' } });
    const readsDoneFirst = !sendDone;
    assert.ok(reads.every((r) => r.status === 200));
    assert.equal(write.status, 201, write.text);
    assert.ok(readsDoneFirst, 'reads and a write waited for the provider');
    const r = await send;
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.assistant_turn.content, 'slow answer');
  });

  test('SIGTERM lets a send in flight finish, then exits 0', async () => {
    const t = tempDb();
    const s2 = await startServer(t.db, { env: providerEnv() });
    try {
      await expectStatus(s2, 'POST', '/v4/repos', 201, { body: { name: 'x' } });
      const sess = await expectStatus(s2, 'POST', '/v4/repos/x/sessions', 201, { body: {} });
      await fake.reset();
      await fake.script([{ delay_ms: 600, reply: 'finished' }]);
      const send = request(s2, 'POST', '/v4/chat/send', {
        body: { session_id: sess.id, message: 'in flight', provider: 'openai', model: 'm' },
      });
      while ((await fake.requests()).length === 0) await new Promise((res) => setTimeout(res, 20));
      s2.child.kill('SIGTERM');
      const r = await send;
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.assistant_turn.content, 'finished');
      assert.equal((await s2.exit).code, 0);
      assertNoKeys(s2.log());
    } finally {
      await s2.stop();
      t.cleanup();
    }
  });
});

test('the server log never holds provider keys', () => {
  assertNoKeys(srv.log());
});
