// chat.test.mjs -- the chat runtime end to end: the real `smriti-full serve`
// against the fake provider on loopback (OPENAI_BASE_URL / ANTHROPIC_BASE_URL
// point at it), asserting on both the API's answers and the exact requests
// the provider received.  Runs on SQLite, and also on PostgreSQL when
// SMRITI_TEST_PG is set (scripts/pg-cluster.sh start prints a URL).
import { test, describe, before, after, beforeEach } from 'node:test';
import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { SMRITI_FULL, tempDb, startProcess } from './helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';

const OPENAI_KEY = 'sk-test-openai-0123456789';
const ANTHROPIC_KEY = 'sk-ant-test-0123456789';

let schemas = 0;

// A fresh schema in the PostgreSQL database at base: { db, cleanup() }.
function pgDb(base) {
  const schema = `smriti_chat_${process.pid}_${++schemas}_${Math.floor(Math.random() * 1e6)}`;
  const psql = (sql) => {
    const r = spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', base, '-c', sql], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`psql ${sql}: ${r.stderr}`);
  };
  psql(`CREATE SCHEMA ${schema}`);
  const sep = base.includes('?') ? '&' : '?';
  return {
    db: `${base}${sep}options=-csearch_path%3D${schema}`,
    cleanup: () => { try { psql(`DROP SCHEMA ${schema} CASCADE`); } catch { /* cluster gone */ } },
  };
}

function chatSuite(kind, makeDb) {
  describe(`chat runtime on ${kind}`, () => {
    let fake;
    let server;
    let store;
    let spaceCounter = 0;

    before(async () => {
      fake = await startFakeProvider({ port: 0 });
      store = makeDb();
      const p = await startProcess(SMRITI_FULL, ['serve', '--listen', '127.0.0.1:0', '--quiet'], {
        env: {
          SMRITI_DB: store.db,
          OPENAI_API_KEY: OPENAI_KEY,
          OPENAI_BASE_URL: `${fake.url}/v1`,
          ANTHROPIC_API_KEY: ANTHROPIC_KEY,
          ANTHROPIC_BASE_URL: fake.url,
          SMRITI_LOCAL_BASE_URL: `${fake.url}/v1`,
          SMRITI_LOCAL_API_KEY: 'local-key',
          SMRITI_PROVIDER_TIMEOUT_MS: '4000',
          SMRITI_PROVIDER_BACKOFF_MS: '10',
          SMRITI_NUDGE_TURNS: '4',
          SMRITI_CONTEXT_BUDGETS: 'tiny=3000',
        },
        ready: (line) => /^listening on http:\/\/\S+:\d+$/.test(line),
      });
      server = { child: p.child, url: p.output().match(/listening on (http:\/\/\S+:\d+)/)[1], log: p.output };
      server.child.on('exit', (code, signal) => { server.exited = { code, signal }; });
    });

    after(async () => {
      if (server && !server.exited) {
        const gone = new Promise((resolve) => server.child.on('exit', resolve));
        server.child.kill('SIGTERM');
        await gone;
      }
      if (fake) await fake.close();
      if (store) store.cleanup();
    });

    beforeEach(() => fake.reset());

    async function api(method, path, body) {
      let res;
      try {
        res = await fetch(server.url + path, {
          method,
          headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      } catch (e) {
        throw new Error(`${method} ${path}: ${e.message} ${e.cause?.message ?? ''}; server ${JSON.stringify(server.exited ?? 'running')}:\n${server.log().slice(-4000)}`);
      }
      const text = await res.text();
      let json = null;
      try { json = JSON.parse(text); } catch { /* not JSON */ }
      return { status: res.status, json, text };
    }

    async function must(method, path, body, status = 200) {
      const r = await api(method, path, body);
      assert.equal(r.status, status, `${method} ${path}: ${r.text}`);
      return r.json;
    }

    async function op(name, params) {
      return (await must('POST', `/api/ops/${name}`, params)).result;
    }

    // A fresh Space with one checkpoint; returns { space, hash }.
    async function spaceWithCheckpoint(fields = {}) {
      const space = `chat-${process.pid}-${++spaceCounter}`;
      await op('space.create', { name: space });
      const c = await op('checkpoint.create', {
        space,
        checkpoint: {
          title: 'Database choice',
          summary: 'We compared SQLite and Postgres.',
          decisions: ['Use Postgres for the service'],
          assumptions: ['Traffic stays under 100 rps'],
          tasks: [{ text: 'Write the schema', status: 'open' }],
          open_questions: ['Which host?'],
          entities: [{ name: 'Postgres', kind: 'tool' }],
          artifacts: [{ name: 'schema.sql', kind: 'code', content: 'CREATE TABLE t (id int);' }],
          ...fields,
        },
      });
      return { space, hash: c.commit_hash };
    }

    const newSession = (space, title = 'talk') => must('POST', `/v4/repos/${encodeURIComponent(space)}/sessions`, { title }, 201);
    const send = (body) => api('POST', '/v4/chat/send', body);
    const getSession = (id) => must('GET', `/v4/sessions/${id}`);
    const mount = (id, hash) => must('POST', `/v5/sessions/${id}/mount`, { commit_hash: hash }, 201);

    function providerRequests() {
      return fake.requests().filter((r) => r.step_used !== null);
    }

    // Every text the provider saw in one request, system included.
    function requestText(req) {
      return JSON.stringify(req.body);
    }

    test('provider switch mid-session keeps the session and the same checkpoint context', async () => {
      const { space, hash } = await spaceWithCheckpoint();
      const base = await newSession(space);
      const s = await mount(base.id, hash);
      assert.equal(s.mounted_commit_hash, hash);

      fake.script([{ reply: 'Postgres it is.', provider: 'openai' }]);
      const a = await send({ session_id: s.id, message: 'What did we pick?', provider: 'openai', model: 'gpt-test' });
      assert.equal(a.status, 200, a.text);
      assert.equal(a.json.assistant_turn.content, 'Postgres it is.');
      assert.equal(a.json.context.commit_hash, hash);
      assert.equal(a.json.context.mode, 'structural');

      fake.script([{ reply: 'Still Postgres.', provider: 'anthropic' }]);
      const b = await send({ session_id: s.id, message: 'And now?', provider: 'anthropic', model: 'claude-test' });
      assert.equal(b.status, 200, b.text);
      assert.equal(b.json.assistant_turn.provider, 'anthropic');
      assert.equal(b.json.assistant_turn.model, 'claude-test');
      assert.deepEqual(b.json.context.turns_included, [1, 2, 3]);

      const [oa, an] = providerRequests();
      assert.equal(oa.provider, 'openai');
      assert.equal(an.provider, 'anthropic');
      const openaiSystem = oa.body.messages[0];
      assert.equal(openaiSystem.role, 'system');
      for (const part of ['Title: Database choice', 'Use Postgres for the service', 'Traffic stays under 100 rps',
        '[open] Write the schema', 'Which host?', 'CREATE TABLE t (id int);', hash]) {
        assert.ok(openaiSystem.content.includes(part), `openai system text lacks ${part}`);
      }
      // the second provider gets exactly the same checkpoint context, at Anthropic's top level
      assert.equal(an.body.system, openaiSystem.content);
      assert.deepEqual(an.body.messages, [
        { role: 'user', content: 'What did we pick?' },
        { role: 'assistant', content: 'Postgres it is.' },
        { role: 'user', content: 'And now?' },
      ]);
      assert.equal(an.headers['x-api-key'], ANTHROPIC_KEY);
      assert.equal(an.headers['anthropic-version'], '2023-06-01');
      assert.equal(oa.headers.authorization, `Bearer ${OPENAI_KEY}`);

      const full = await getSession(s.id);
      assert.equal(full.id, s.id);
      assert.deepEqual(full.turns.map((t) => [t.sequence_number, t.role, t.provider]), [
        [1, 'user', 'openai'], [2, 'assistant', 'openai'], [3, 'user', 'anthropic'], [4, 'assistant', 'anthropic'],
      ]);
      // keys never come back in any response
      assert.ok(!JSON.stringify([a.json, b.json, full]).includes('sk-'));
    });

    test('a mounted session sends none of the pre-mount turns; the old session is untouched', async () => {
      const { space, hash } = await spaceWithCheckpoint();
      const old = await newSession(space);
      for (const m of ['secret-before-mount-one', 'secret-before-mount-two']) {
        assert.equal((await send({ session_id: old.id, message: m, provider: 'openai', model: 'm' })).status, 200);
      }
      const forked = await mount(old.id, hash);
      assert.equal(forked.forked_from_session_id, old.id);
      assert.equal(forked.history_base_seq, 4);
      assert.equal(forked.last_seq, 0);
      assert.notEqual(forked.id, old.id);

      fake.reset();
      for (const provider of ['openai', 'anthropic']) {
        const r = await send({ session_id: forked.id, message: `after mount via ${provider}`, provider, model: 'm' });
        assert.equal(r.status, 200, r.text);
      }
      const reqs = providerRequests();
      assert.equal(reqs.length, 2);
      for (const req of reqs) {
        const text = requestText(req);
        assert.ok(!text.includes('secret-before-mount'), `pre-mount turn leaked to ${req.provider}`);
        assert.ok(text.includes('Use Postgres for the service'));
      }
      assert.deepEqual(reqs[1].body.messages.map((m) => m.content.slice(0, 16)),
        ['after mount via ', 'fake reply to: a', 'after mount via ']);

      const oldAfter = await getSession(old.id);
      assert.equal(oldAfter.turns.length, 4);
      assert.equal(oldAfter.mounted_commit_hash, null);
      assert.equal(oldAfter.last_seq, 4);
      const sessions = await must('GET', `/v4/repos/${encodeURIComponent(space)}/sessions`);
      assert.deepEqual(sessions.map((x) => x.id).sort(), [old.id, forked.id].sort());
    });

    test('v5.2 client boundary: the turn at history_base_seq is excluded, the next included', async () => {
      const { space, hash } = await spaceWithCheckpoint();
      const s = await newSession(space);
      for (const m of ['turn-one', 'turn-three']) {
        fake.script([{ reply: m.replace('turn', 'reply') }]);
        assert.equal((await send({ session_id: s.id, message: m, provider: 'openai', model: 'm' })).status, 200);
      }
      fake.reset();
      const r = await send({ session_id: s.id, message: 'turn-five', provider: 'anthropic', model: 'm',
        commit_hash: hash, history_base_seq: 3 });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.context.mode, 'client');
      assert.equal(r.json.context.history_base_seq, 3);
      assert.equal(r.json.context.commit_hash, hash);
      assert.deepEqual(r.json.context.turns_included, [4, 5]);
      const [req] = providerRequests();
      const text = requestText(req);
      assert.ok(!text.includes('turn-one') && !text.includes('turn-three'));
      assert.ok(text.includes('reply-three'));
      assert.ok(req.body.system.includes('Title: Database choice'));
      // Anthropic still gets user first: the lone reply is preceded by a placeholder
      assert.equal(req.body.messages[0].role, 'user');
      assert.equal(req.body.messages[1].content, 'reply-three');
    });

    test('v5.2 validation: bad commit_hash or history_base_seq is 422 and nothing is written', async () => {
      const { space } = await spaceWithCheckpoint();
      const other = await spaceWithCheckpoint({ title: 'Other space' });
      const s = await newSession(space);
      assert.equal((await send({ session_id: s.id, message: 'one', provider: 'openai', model: 'm' })).status, 200);
      fake.reset();
      const bad = [
        { commit_hash: 'f'.repeat(64) },
        { commit_hash: other.hash },
        { commit_hash: 'not a hash' },
        { commit_hash: 42 },
        { history_base_seq: -1 },
        { history_base_seq: 3 },
        { history_base_seq: '1' },
        { history_base_seq: 1.5 },
      ];
      for (const extra of bad) {
        const r = await send({ session_id: s.id, message: 'should not be stored', provider: 'openai', model: 'm', ...extra });
        assert.equal(r.status, 422, `${JSON.stringify(extra)}: ${r.text}`);
        assert.equal(r.json.error.code, 'unprocessable');
      }
      const after = await getSession(s.id);
      assert.equal(after.turns.length, 2);
      assert.equal(fake.requests().length, 0);
      // the range is inclusive: 0 and the last sequence number are fine
      for (const seq of [0, 2]) {
        assert.equal((await send({ session_id: s.id, message: `ok ${seq}`, provider: 'openai', model: 'm', history_base_seq: seq })).status, 200);
      }
    });

    test('other bad sends are refused without writing', async () => {
      const { space } = await spaceWithCheckpoint();
      const s = await newSession(space);
      const cases = [
        [{ session_id: s.id, message: 'x', provider: 'nonesuch' }, 422],
        [{ session_id: s.id, message: '   ' }, 400],
        [{ session_id: s.id }, 400],
        [{ session_id: s.id, message: 7 }, 400],
        [{ session_id: 'no-such-session', message: 'x', provider: 'openai' }, 404],
      ];
      for (const [body, status] of cases) {
        const r = await send(body);
        assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
      }
      assert.equal((await getSession(s.id)).turns.length, 0);
      assert.equal(fake.requests().length, 0);
      assert.equal((await api('GET', '/v4/sessions/no-such-session')).status, 404);
      assert.equal((await api('POST', '/v5/sessions/no-such-session/mount', { commit_hash: 'abcd' })).status, 404);
      // mounting a checkpoint of another Space, or none at all, is 422 and creates no session
      const other = await spaceWithCheckpoint({ title: 'elsewhere' });
      for (const commit_hash of [other.hash, 'f'.repeat(64), 'zzzz']) {
        const r = await api('POST', `/v5/sessions/${s.id}/mount`, { commit_hash });
        assert.equal(r.status, 422, `${commit_hash}: ${r.text}`);
      }
      assert.equal((await must('GET', `/v4/repos/${encodeURIComponent(space)}/sessions`)).length, 1);
      assert.equal((await api('POST', '/v4/repos/no-such-space/sessions', { title: 'x' })).status, 404);
    });

    test('429 then success honours the wait and answers normally', async () => {
      const { space } = await spaceWithCheckpoint();
      const s = await newSession(space);
      fake.script([{ status: 429, retry_after: 1 }, { reply: 'after the wait' }]);
      const r = await send({ session_id: s.id, message: 'busy?', provider: 'openai', model: 'm' });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.assistant_turn.content, 'after the wait');
      assert.equal(r.json.user_turn.error, null);
      const reqs = fake.requests();
      assert.equal(reqs.length, 2);
      assert.ok(reqs[1].time - reqs[0].time >= 999);
    });

    async function failingSend(steps, provider, wantStatus, wantCode, wantMessage) {
      const { space } = await spaceWithCheckpoint();
      const s = await newSession(space);
      fake.script(steps);
      const r = await send({ session_id: s.id, message: 'will this fail?', provider, model: 'm' });
      assert.equal(r.status, wantStatus, r.text);
      assert.equal(r.json.error.code, wantCode);
      assert.match(r.json.error.message, wantMessage);
      assert.equal(r.json.user_turn.content, 'will this fail?');
      assert.equal(r.json.user_turn.error, r.json.error.message);
      const stored = await getSession(s.id);
      assert.equal(stored.turns.length, 1);
      assert.equal(stored.turns[0].role, 'user');
      assert.equal(stored.turns[0].error, r.json.error.message);
      return { s, r };
    }

    test('provider 500: the user turn is kept and the provider message surfaced', async () => {
      await failingSend([{ status: 500 }, { status: 500 }, { status: 500 }], 'openai', 502, 'provider_error',
        /^openai: 500 server_error: The server had an error .*\(after 3 attempts\)$/);
      assert.equal(fake.requests().length, 3);
    });

    test('provider 529 on every attempt fails the same way for Anthropic', async () => {
      await failingSend([{ status: 529 }, { status: 529 }, { status: 529 }], 'anthropic', 502, 'provider_error',
        /^anthropic: 529 overloaded_error: Overloaded/);
    });

    test('provider timeout: 504, the user turn is kept', async () => {
      await failingSend([{ delay_ms: 12000, reply: 'too late' }], 'openai', 504, 'provider_timeout',
        /^openai: no reply within 4000 ms$/);
    });

    test('malformed provider JSON: 502 with a clear error, the user turn is kept', async () => {
      await failingSend([{ malformed: true }], 'anthropic', 502, 'provider_error',
        /^anthropic: malformed reply \(HTTP 200\)/);
    });

    test('a retry of a failed send reuses the user turn instead of duplicating it', async () => {
      const { s, r } = await failingSend([{ status: 401 }], 'openai', 502, 'provider_error',
        /^openai: 401 invalid_api_key: Incorrect API key provided/);
      assert.ok(!r.text.includes(OPENAI_KEY));
      fake.script([{ reply: 'second time lucky' }]);
      const again = await send({ session_id: s.id, message: 'will this fail?', provider: 'anthropic', model: 'm' });
      assert.equal(again.status, 200, again.text);
      assert.equal(again.json.user_turn.id, r.json.user_turn.id);
      assert.equal(again.json.user_turn.sequence_number, 1);
      assert.equal(again.json.user_turn.error, null);
      assert.equal(again.json.assistant_turn.sequence_number, 2);
      const stored = await getSession(s.id);
      assert.deepEqual(stored.turns.map((t) => [t.role, t.content, t.error]), [
        ['user', 'will this fail?', null], ['assistant', 'second time lucky', null],
      ]);
      // the provider saw the message once, not twice
      const last = fake.requests().at(-1);
      assert.deepEqual(last.body.messages, [{ role: 'user', content: 'will this fail?' }]);
    });

    test('the nudge suggests a checkpoint and never creates one', async () => {
      const { space, hash } = await spaceWithCheckpoint();
      const s = await newSession(space);
      const first = await send({ session_id: s.id, message: 'hello', provider: 'openai', model: 'm' });
      assert.equal(first.json.nudge.suggested, false);
      assert.equal(first.json.nudge.turns_since_checkpoint, 2);
      const second = await send({ session_id: s.id, message: 'ok, we decided: ship it', provider: 'openai', model: 'm' });
      assert.equal(second.json.nudge.suggested, true);
      assert.equal(second.json.nudge.turns_since_checkpoint, 4);
      assert.ok(second.json.nudge.reasons.some((x) => x.includes('4 turns since the last checkpoint')));
      assert.ok(second.json.nudge.reasons.some((x) => x.includes('decision language in the message')));
      const head = await op('head', { space });
      assert.equal(head.commit_hash, hash);
    });

    test('the local provider speaks the OpenAI format with max_tokens at its own base URL', async () => {
      const { space } = await spaceWithCheckpoint();
      const s = await newSession(space);
      const r = await send({ session_id: s.id, message: 'hi local', provider: 'local', model: 'llama3.2' });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.assistant_turn.provider, 'local');
      const [req] = fake.requests();
      assert.equal(req.path, '/v1/chat/completions');
      assert.equal(req.headers.authorization, 'Bearer local-key');
      assert.equal(req.body.model, 'llama3.2');
      assert.equal(req.body.max_tokens, 1024);
      assert.equal(req.body.max_completion_tokens, undefined);
    });

    test('a provider without its key is refused before anything is written', async () => {
      const db = makeDb();
      const p = await startProcess(SMRITI_FULL, ['serve', '--listen', '127.0.0.1:0', '--quiet'], {
        env: { SMRITI_DB: db.db, OPENAI_BASE_URL: `${fake.url}/v1` },
        ready: (line) => /^listening on http:\/\/\S+:\d+$/.test(line),
      });
      const url = p.output().match(/listening on (http:\/\/\S+:\d+)/)[1];
      const post = async (path, body) => {
        const res = await fetch(url + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
        return { status: res.status, json: await res.json() };
      };
      try {
        await post('/api/ops/space.create', { name: 'nokey' });
        const s = (await post('/v4/repos/nokey/sessions', {})).json;
        const r = await post('/v4/chat/send', { session_id: s.id, message: 'hello' });
        assert.equal(r.status, 502);
        assert.equal(r.json.error.message, 'openai: OPENAI_API_KEY is not set');
        const got = await fetch(`${url}/v4/sessions/${s.id}`).then((x) => x.json());
        assert.equal(got.turns.length, 0);
        assert.equal(fake.requests().length, 0);
      } finally {
        const gone = new Promise((resolve) => p.child.on('exit', resolve));
        p.child.kill('SIGTERM');
        await gone;
        db.cleanup();
      }
    });

    test('over budget the oldest turns are dropped and reported; the checkpoint stays', async () => {
      const { space, hash } = await spaceWithCheckpoint();
      const s = await mount((await newSession(space)).id, hash);
      const pad = (i) => `message ${String(i).padStart(3, '0')} ${'x'.repeat(88)}`;   // 100 characters
      for (let i = 1; i <= 40; i++) {
        fake.script([{ reply: `reply ${String(i).padStart(3, '0')} ${'y'.repeat(90)}` }]);
        assert.equal((await send({ session_id: s.id, message: pad(i), provider: 'openai', model: 'm' })).status, 200);
      }
      fake.reset();
      const r = await send({ session_id: s.id, message: 'and now?', provider: 'anthropic', model: 'tiny-model' });
      assert.equal(r.status, 200, r.text);
      const c = r.json.context;
      assert.equal(c.trimmed, true);
      assert.equal(c.budget_chars, 3000);
      assert.ok(c.chars <= 3000 || c.turns_included.length === 1, `chars ${c.chars}`);
      // every earlier turn is either dropped or included, oldest dropped first
      assert.deepEqual([...c.turns_dropped, ...c.turns_included], Array.from({ length: 81 }, (_, i) => i + 1));
      assert.ok(c.turns_included.length >= 3 && c.turns_included.length < 40);
      assert.equal(c.turns_included[0] % 2, 1, 'the context starts on a user turn');
      const [req] = fake.requests();
      assert.equal(req.body.messages.length, c.turns_included.length);
      assert.equal(req.body.messages[0].content, pad((c.turns_included[0] + 1) / 2));
      assert.ok(req.body.system.includes('Use Postgres for the service'));
      assert.ok(!JSON.stringify(req.body).includes(pad(1)));
    });
  });
}

chatSuite('sqlite', () => tempDb());
if (process.env.SMRITI_TEST_PG) chatSuite('postgres', () => pgDb(process.env.SMRITI_TEST_PG));
