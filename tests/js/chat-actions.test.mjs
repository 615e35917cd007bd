// chat-actions.test.mjs -- chat message actions (issue 26) over a real
// server and the fake provider on loopback, on SQLite and (with
// SMRITI_TEST_PG) PostgreSQL: regenerate a reply and switch between a
// turn's replies, edit and re-send a question, continue a reply after Stop
// (the model gets the partial reply last and the new text joins it), and a
// new session from a turn.  Nothing is lost: every variant stays a turn of
// the session, and what the model gets is exactly the path shown
// (leaf_seq), which the requests the fake provider received prove.  Bad
// requests are refused and write nothing.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tempDb, ok, run, SMRITI_FULL } from './helpers.mjs';
import { startServer, request, expectStatus, assertError, openStream } from './http-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';

let schemas = 0;

function pgDb(base) {
  const schema = `smriti_actions_${process.pid}_${++schemas}_${Math.floor(Math.random() * 1e6)}`;
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

const text = (m) => (typeof m.content === 'string' ? m.content : m.content.map((b) => b.text).join(''));
// What the provider was sent last, as [role, text] pairs (no system text).
const lastSent = (fake) => fake.requests().at(-1).body.messages
  .filter((m) => m.role !== 'system').map((m) => [m.role, text(m)]);

function suite(kind, makeDb) {
  describe(`chat message actions on ${kind}`, () => {
    let t;
    let fake;
    let srv;
    before(async () => {
      t = makeDb();
      fake = await startFakeProvider({ port: 0 });
      srv = await startServer(t.db, { args: ['--workers', '2', '--quiet'], env: {
        OPENAI_API_KEY: 'sk-test-openai-key-0123456789', OPENAI_BASE_URL: `${fake.url}/v1`,
        ANTHROPIC_API_KEY: 'sk-ant-test-key-9876543210', ANTHROPIC_BASE_URL: fake.url,
        SMRITI_PROVIDER_RETRIES: '0', SMRITI_PROVIDER_TIMEOUT_MS: '20000',
      } });
      await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'actions' } });
    });
    after(async () => {
      await srv?.stop();
      await fake?.close();
      t?.cleanup();
    });

    const newSession = () => expectStatus(srv, 'POST', '/v4/repos/actions/sessions', 201, { body: {} });
    const session = (id) => expectStatus(srv, 'GET', `/v4/sessions/${id}`, 200);
    const send = (sid, message, provider = 'openai') => expectStatus(srv, 'POST', '/v4/chat/send', 200,
      { body: { session_id: sid, message, provider, model: 'm' } });
    const act = (sid, action, body, status = 200) =>
      expectStatus(srv, 'POST', `/v4/sessions/${sid}/${action}`, status, { body: { provider: 'openai', model: 'm', ...body } });

    test('regenerate keeps the old reply; switching picks which one the next send builds on', async () => {
      const s = await newSession();
      fake.script([{ reply: 'first answer' }]);
      await send(s.id, 'what is up');
      fake.script([{ reply: 'second answer' }]);
      const r = await act(s.id, 'regenerate', { seq: 2 });
      assert.equal(r.user_turn.sequence_number, 1, 'the same question, not a new one');
      assert.equal(r.assistant_turn.sequence_number, 3);
      assert.equal(r.assistant_turn.parent_seq, 1, 'a sibling of the first reply');
      assert.equal(r.assistant_turn.content, 'second answer');
      assert.deepEqual(lastSent(fake), [['user', 'what is up']], 'the old reply is not sent');
      let got = await session(s.id);
      assert.deepEqual(got.turns.map((x) => [x.sequence_number, x.role, x.parent_seq, x.content]), [
        [1, 'user', 0, 'what is up'], [2, 'assistant', 1, 'first answer'], [3, 'assistant', 1, 'second answer']]);
      assert.equal(got.leaf_seq, 3);

      // back to the first reply: the next question follows it (and another tab's poll sees it)
      const version = (await expectStatus(srv, 'GET', '/v4/changes?space=actions', 200)).version;
      const sw = await act(s.id, 'switch', { seq: 2 });
      assert.equal(sw.leaf_seq, 2);
      assert.notEqual((await expectStatus(srv, 'GET', '/v4/changes?space=actions', 200)).version, version);
      const preview = await expectStatus(srv, 'GET', `/v4/sessions/${s.id}/context?provider=openai&model=m`, 200);
      assert.deepEqual(preview.turns_included, [1, 2]);
      fake.script([{ reply: 'third' }]);
      const next = await send(s.id, 'and then');
      assert.equal(next.user_turn.parent_seq, 2);
      assert.deepEqual(next.context.turns_included, [1, 2, 4]);
      assert.deepEqual(lastSent(fake), [['user', 'what is up'], ['assistant', 'first answer'], ['user', 'and then']]);
      got = await session(s.id);
      assert.equal(got.turns.length, 5, 'every reply is kept');
      assert.equal(got.leaf_seq, 5);

      // switching to the second reply shows its line again (it ends there)
      assert.equal((await act(s.id, 'switch', { seq: 3 })).leaf_seq, 3);
      // and to the first reply's line: its newest end
      assert.equal((await act(s.id, 'switch', { seq: 2 })).leaf_seq, 5);
    });

    test('edit adds a question beside the old one; the model sees only the edited path', async () => {
      const s = await newSession();
      await send(s.id, 'first question');
      await send(s.id, 'second question');
      fake.script([{ reply: 'answer to the edit' }]);
      const r = await act(s.id, 'edit', { seq: 3, message: 'second question, better' });
      assert.equal(r.user_turn.sequence_number, 5);
      assert.equal(r.user_turn.parent_seq, 2, 'beside turn 3');
      assert.equal(r.assistant_turn.parent_seq, 5);
      assert.deepEqual(r.context.turns_included, [1, 2, 5]);
      assert.deepEqual(lastSent(fake), [['user', 'first question'], ['assistant', 'fake reply to: first question'],
        ['user', 'second question, better']]);
      const got = await session(s.id);
      assert.deepEqual(got.turns.map((x) => x.content), ['first question', 'fake reply to: first question',
        'second question', 'fake reply to: second question', 'second question, better', 'answer to the edit']);
      assert.equal(got.leaf_seq, 6);
      // editing the first question starts a path with nothing before it
      await act(s.id, 'edit', { seq: 1, message: 'a fresh start' });
      assert.deepEqual(lastSent(fake), [['user', 'a fresh start']]);
    });

    for (const provider of ['openai', 'anthropic']) {
      test(`continue after Stop (${provider}): the model gets the partial reply last, the new text joins it`, async () => {
        const s = await newSession();
        const hold = `cont-${kind}-${provider}`;
        fake.script([{ reply: 'one two three four five', deltas: 5, hold, pause_after: 2, provider }]);
        const st = await openStream(srv, 'POST', '/v4/chat/send',
          { body: { session_id: s.id, message: 'count to five', provider, model: 'm' } });
        const gen = await st.next();
        const seen = (await st.next()).data.text + (await st.next()).data.text;
        await expectStatus(srv, 'POST', `/v4/generations/${gen.data.generation.id}/stop`, 200, { body: {} });
        const done = (await st.all()).at(-1);
        fake.release(hold);
        assert.equal(done.data.assistant_turn.status, 'stopped');
        assert.equal(done.data.assistant_turn.content, seen);

        fake.script([{ reply: 'three four five', provider }]);
        const r = await act(s.id, 'continue', { seq: 2, provider });
        assert.equal(r.assistant_turn.sequence_number, 3);
        assert.equal(r.assistant_turn.parent_seq, 2, 'it continues the stopped reply');
        assert.equal(r.assistant_turn.status, 'complete');
        assert.equal(r.user_turn.sequence_number, 1);
        assert.deepEqual(lastSent(fake), [['user', 'count to five'], ['assistant', seen]]);
        assert.deepEqual(r.context.turns_included, [1, 2]);

        // the next send gets the reply whole, as one message
        fake.script([{ reply: 'ok', provider }]);
        await send(s.id, 'thanks', provider);
        assert.deepEqual(lastSent(fake), [['user', 'count to five'], ['assistant', `${seen}three four five`],
          ['user', 'thanks']]);
        const got = await session(s.id);
        assert.deepEqual(got.turns.map((x) => [x.role, x.status, x.parent_seq]), [
          ['user', 'complete', 0], ['assistant', 'stopped', 1], ['assistant', 'complete', 2],
          ['user', 'complete', 3], ['assistant', 'complete', 4]]);
      });
    }

    test('a new session from a turn copies the path up to it; the old session is untouched', async () => {
      const s = await newSession();
      await send(s.id, 'alpha');
      await send(s.id, 'beta');
      fake.script([{ reply: 'other reply to alpha' }]);
      await act(s.id, 'regenerate', { seq: 2 });
      await act(s.id, 'switch', { seq: 2 });
      const before = await session(s.id);
      const f = await act(s.id, 'fork', { seq: 3, title: 'from beta' }, 201);
      assert.notEqual(f.id, s.id);
      assert.equal(f.forked_from_session_id, s.id);
      assert.equal(f.fork_seq, 3);
      assert.equal(f.title, 'from beta');
      const copy = await session(f.id);
      assert.deepEqual(copy.turns.map((x) => [x.sequence_number, x.role, x.content]), [
        [1, 'user', 'alpha'], [2, 'assistant', 'fake reply to: alpha'], [3, 'user', 'beta']]);
      assert.deepEqual(await session(s.id), before);
      fake.script([{ reply: 'answer in the fork' }]);
      const r = await send(f.id, 'gamma');
      assert.deepEqual(r.context.turns_included, [1, 2, 3, 4]);
    });

    test('the CLI shows the versions, switches the path and starts a session from a turn', async () => {
      const cli = (args) => ok(t.db, args, { bin: SMRITI_FULL });
      const s = await newSession();
      await send(s.id, 'pick a number');
      fake.script([{ reply: 'seven' }]);
      await act(s.id, 'regenerate', { seq: 2 });
      const shown = cli(['session', 'show', s.id]);
      assert.match(shown, /#2 assistant complete \(openai m\) \[another version: not on the path shown\]/);
      assert.match(shown, /#3 assistant complete \(openai m\) after #1\n/);
      assert.deepEqual(cli(['session', 'show', s.id, '--json']).path, [1, 3]);
      assert.equal(cli(['session', 'switch', s.id, '2', '--json']).leaf_seq, 2);
      assert.deepEqual((await session(s.id)).path, [1, 2]);
      assert.match(cli(['session', 'switch', s.id, '3']), /now shows the path to turn #3/);
      const f = cli(['session', 'fork', s.id, '3', '--title', 'from the CLI', '--json']);
      assert.equal(f.fork_seq, 3);
      assert.equal(f.title, 'from the CLI');
      assert.deepEqual((await session(f.id)).turns.map((x) => x.content), ['pick a number', 'seven']);
      const bad = run(t.db, ['session', 'switch', s.id, 'two'], { bin: SMRITI_FULL });
      assert.equal(bad.code, 2, bad.stderr);
      assert.match(bad.stderr, /SEQ must be a turn's number/);
      const missing = run(t.db, ['session', 'fork', s.id, '99'], { bin: SMRITI_FULL });
      assert.notEqual(missing.code, 0);
      assert.match(missing.stderr, /has no turn 99/);
    });

    test('an export keeps the versions and the path shown; its import reads the same and exports the same bytes', async () => {
      const cli = (db, args) => ok(db, args, { bin: SMRITI_FULL });
      const s = await newSession();
      await send(s.id, 'keep me');
      fake.script([{ reply: 'another take' }]);
      await act(s.id, 'regenerate', { seq: 2 });
      await act(s.id, 'switch', { seq: 2 });
      await act(s.id, 'fork', { seq: 1 }, 201);
      const text = cli(t.db, ['export', 'actions']);
      const to = tempDb();
      try {
        const file = `${to.db}.bundle.json`;
        writeFileSync(file, text);
        cli(to.db, ['import', file]);
        const got = cli(to.db, ['session', 'show', s.id, '--json']);
        const mine = await session(s.id);
        assert.deepEqual(got.turns.map((x) => [x.sequence_number, x.parent_seq, x.content]),
          mine.turns.map((x) => [x.sequence_number, x.parent_seq, x.content]));
        assert.equal(got.leaf_seq, 2);
        assert.deepEqual(got.path, [1, 2]);
        assert.equal(cli(to.db, ['export', 'actions']), text, 'the export is a fixed point');
      } finally {
        to.cleanup();
      }
    });

    test('Draft with AI reads the path shown, not the versions beside it', async () => {
      const s = await newSession();
      fake.script([{ reply: 'Use the blue paint.' }]);
      await send(s.id, 'which paint?');
      fake.script([{ reply: 'Use the green paint.' }]);
      await act(s.id, 'regenerate', { seq: 2 });
      await act(s.id, 'switch', { seq: 2 });
      const job = await expectStatus(srv, 'POST', '/v5/checkpoints/draft', 202,
        { body: { session_id: s.id, provider: 'openai', model: 'm' } });
      for (let i = 0; i < 200; i++) {
        const j = await expectStatus(srv, 'GET', `/v5/checkpoints/draft/${job.job_id}`, 200);
        if (j.status !== 'queued' && j.status !== 'running') break;
        await new Promise((r) => setTimeout(r, 25));
      }
      const prompt = JSON.stringify(fake.requests().at(-1).body.messages);
      assert.match(prompt, /blue paint/);
      assert.doesNotMatch(prompt, /green paint/, 'a version beside the path is not drafted from');
    });

    test('bad requests are refused and write nothing', async () => {
      const s = await newSession();
      await send(s.id, 'hello');
      const before = await session(s.id);
      assertError(await request(srv, 'POST', `/v4/sessions/${s.id}/edit`, { body: { seq: 2, message: 'x' } }), 422);
      assertError(await request(srv, 'POST', `/v4/sessions/${s.id}/continue`, { body: { seq: 1 } }), 422);
      assertError(await request(srv, 'POST', `/v4/sessions/${s.id}/regenerate`, { body: { seq: 9 } }), 422);
      assertError(await request(srv, 'POST', `/v4/sessions/${s.id}/regenerate`, { body: {} }), 400);
      assertError(await request(srv, 'POST', `/v4/sessions/${s.id}/edit`, { body: { seq: 1 } }), 400);
      assertError(await request(srv, 'POST', `/v4/sessions/${s.id}/edit`, { body: { seq: 1, message: '  ' } }), 400);
      assertError(await request(srv, 'POST', `/v4/sessions/${s.id}/switch`, { body: { seq: 7 } }), 422);
      assertError(await request(srv, 'POST', `/v4/sessions/${s.id}/switch`, { body: { seq: 'two' } }), 400);
      assertError(await request(srv, 'POST', `/v4/sessions/${s.id}/fork`, { body: { seq: 0 } }), 400);
      assertError(await request(srv, 'POST', '/v4/sessions/nosuch/regenerate', { body: { seq: 1 } }), 404);
      assertError(await request(srv, 'POST', '/v4/sessions/nosuch/switch', { body: { seq: 1 } }), 404);
      assert.deepEqual(await session(s.id), before);
      const sessions = await expectStatus(srv, 'GET', '/v4/repos/actions/sessions', 200);
      assert.ok(!sessions.some((x) => x.forked_from_session_id === s.id), 'no fork made');
    });

    test('while a reply runs, switching and the other actions are 409', async () => {
      const s = await newSession();
      await send(s.id, 'one');
      const hold = `busy-${kind}`;
      fake.script([{ reply: 'slow reply', deltas: 2, hold, pause_after: 1 }]);
      const st = await openStream(srv, 'POST', '/v4/chat/send', { body: { session_id: s.id, message: 'two', provider: 'openai', model: 'm' } });
      await st.next();
      await st.next();
      assertError(await request(srv, 'POST', `/v4/sessions/${s.id}/switch`, { body: { seq: 2 } }), 409);
      assertError(await request(srv, 'POST', `/v4/sessions/${s.id}/regenerate`, { body: { seq: 2 } }), 409);
      fake.release(hold);
      await st.all();
    });

    test('the operations by name: /api/ops reaches each', async () => {
      const s = await newSession();
      await send(s.id, 'by name');
      fake.script([{ reply: 'again by name' }]);
      const r = await expectStatus(srv, 'POST', '/api/ops/chat.regenerate', 200,
        { body: { session_id: s.id, seq: 2, provider: 'openai', model: 'm' } });
      assert.equal(r.result.assistant_turn.content, 'again by name');
      const sw = await expectStatus(srv, 'POST', '/api/ops/session.switch', 200, { body: { session_id: s.id, seq: 2 } });
      assert.equal(sw.result.leaf_seq, 2);
      const f = await expectStatus(srv, 'POST', '/api/ops/session.fork', 200, { body: { session_id: s.id, seq: 1 } });
      assert.equal(f.result.fork_seq, 1);
    });
  });
}

suite('SQLite', () => tempDb());
if (process.env.SMRITI_TEST_PG) suite('PostgreSQL', () => pgDb(process.env.SMRITI_TEST_PG));
