// session-cli.test.mjs -- `smriti session list SPACE` and `smriti session
// show SESSION` (the lean binary hands them to smriti-full): each turn with
// its status, as the API and the web UI show it -- here a complete reply and
// one whose provider failed mid-stream (status error, partial text kept, the
// error named) -- locally and through SMRITI_URL, as text and as --json.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb, run } from './helpers.mjs';
import { startServer, expectStatus, request } from './http-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';
import { runAsync, okAsync } from './draft-helpers.mjs';

let tmp;
let fake;
let srv;
let session;

before(async () => {
  tmp = tempDb();
  fake = await startFakeProvider({ port: 0 });
  srv = await startServer(tmp.db, {
    args: ['--quiet'],
    env: { OPENAI_API_KEY: 'sk-test-openai-key-0123456789', OPENAI_BASE_URL: `${fake.url}/v1`,
      SMRITI_PROVIDER_RETRIES: '0' },
  });
  await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'talks' } });
  session = await expectStatus(srv, 'POST', '/v4/repos/talks/sessions', 201, { body: { title: 'first talk' } });
  fake.script([{ reply: 'hello there' },
    { reply: 'alpha beta gamma delta', deltas: 4, stream_error: true, fail_after: 2 }]);
  await expectStatus(srv, 'POST', '/v4/chat/send', 200, { body: { session_id: session.id, message: 'hi' } });
  const r = await request(srv, 'POST', '/v4/chat/send', { body: { session_id: session.id, message: 'go on' } });
  assert.equal(r.status, 502);
});

after(async () => {
  await srv?.stop();
  await fake?.close();
  tmp?.cleanup();
});

test('session show --json is session.get: every turn with its status', async () => {
  for (const env of [{}, { SMRITI_URL: srv.url }]) {
    const s = await okAsync(tmp.db, ['session', 'show', session.id, '--json'], { env });
    assert.equal(s.id, session.id);
    assert.equal(s.space, 'talks');
    assert.deepEqual(s.turns.map((t) => [t.sequence_number, t.role, t.status, t.content]), [
      [1, 'user', 'complete', 'hi'], [2, 'assistant', 'complete', 'hello there'],
      [3, 'user', 'complete', 'go on'], [4, 'assistant', 'error', 'alpha beta ']]);
    assert.match(s.turns[3].error, /^openai: /);
    assert.equal(s.generation, null);
  }
});

test('session show prints each turn with role, status and text, and the error', async () => {
  const out = await okAsync(tmp.db, ['session', 'show', session.id]);
  assert.match(out, new RegExp(`^session ${session.id} in Space 'talks': first talk$`, 'm'));
  assert.match(out, /^#2 assistant complete \(openai \S+\)\n {4}hello there$/m);
  assert.match(out, /^#4 assistant error \(openai \S+\)\n {4}error: openai: .*\n {4}alpha beta $/m);
  assert.match(out, /^#3 user complete \(openai \S+\)\n {4}go on$/m);
});

test('session list names the sessions of a Space with their turn counts', async () => {
  const list = await okAsync(tmp.db, ['session', 'list', 'talks', '--json']);
  assert.deepEqual(list.map((s) => [s.id, s.last_seq, s.title]), [[session.id, 4, 'first talk']]);
  const out = await okAsync(tmp.db, ['session', 'ls', 'talks'], { env: { SMRITI_URL: srv.url } });
  assert.match(out, new RegExp(`^${session.id} +4 turns +first talk$`, 'm'));
});

test('usage errors exit 2, an unknown session or Space exits 3', async () => {
  assert.equal(run(tmp.db, ['session']).code, 2);
  assert.equal(run(tmp.db, ['session', 'rename', session.id]).code, 2);
  assert.equal(run(tmp.db, ['session', 'show']).code, 2);
  assert.equal(run(tmp.db, ['session', 'show', 'a', 'b']).code, 2);
  assert.equal(run(tmp.db, ['session', 'show', session.id, '--bogus']).code, 2);
  const missing = await runAsync(tmp.db, ['session', 'show', '00000000-0000-4000-8000-000000000000']);
  assert.equal(missing.code, 3, missing.stderr);
  assert.equal((await runAsync(tmp.db, ['session', 'list', 'nowhere'])).code, 3);
  assert.match(run(tmp.db, ['session', '--help']).stdout, /session show SESSION \[--json\]/);
});
