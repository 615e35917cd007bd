// draft-cli.test.mjs -- `smriti draft SESSION` on the real binaries (the
// lean one hands it to smriti-full): locally and through SMRITI_URL, its
// --json output saved with `checkpoint create --from-json -`, the human
// output, and the exit codes of failures.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDb, run, ok } from './helpers.mjs';
import { startServer } from './http-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';
import {
  providerEnv, TRANSCRIPT, EXTRACTED, draftRequests, promptTexts, runAsync, okAsync,
} from './draft-helpers.mjs';

let fake;
let t;
let sessionId;

before(async () => {
  fake = await startFakeProvider({ port: 0 });
  t = tempDb();
  ok(t.db, ['space', 'create', 'offsite']);
  const file = path.join(t.dir, 'talk.txt');
  writeFileSync(file, TRANSCRIPT);
  sessionId = ok(t.db, ['ingest', file, '--space', 'offsite', '--json']).session.id;
});

after(async () => {
  await fake?.close();
  t?.cleanup();
});

const env = () => providerEnv(fake);

describe('smriti draft, local', () => {
  test('--json prints the proposed checkpoint, which checkpoint create saves as is', async () => {
    fake.reset();
    fake.script([{ json: EXTRACTED }]);
    const d = await okAsync(t.db, ['draft', sessionId, '--json'], { env: env() });
    assert.deepEqual(d.decisions, EXTRACTED.decisions);
    assert.deepEqual(d.tasks, EXTRACTED.tasks);
    assert.equal(d.metadata.draft.session_id, sessionId);
    assert.deepEqual(d.metadata.draft.turn_range, { first_seq: 1, last_seq: 4 });
    assert.equal(d.metadata.draft.provider, 'openai');
    assert.equal(typeof d.metadata.draft.job_id, 'string');
    const [req] = draftRequests(fake);
    assert.match(promptTexts(req.body)[0], /Extract only what is explicitly present/);
    // nothing was saved by the draft
    assert.equal(run(t.db, ['head', 'offsite']).code, 3);
    const saved = ok(t.db, ['checkpoint', 'create', 'offsite', '--from-json', '-', '--json'],
      { input: JSON.stringify(d) });
    assert.deepEqual(saved.assumptions, EXTRACTED.assumptions);
    assert.deepEqual(saved.metadata.draft, d.metadata.draft);
  });

  test('human output lists the fields and says it is not saved', async () => {
    fake.reset();
    fake.script([{ json: EXTRACTED, provider: 'anthropic' }]);
    const out = await okAsync(t.db, ['draft', sessionId, '--provider', 'anthropic', '--model', 'claude-x'],
      { env: env() });
    assert.match(out, new RegExp(`^draft \\S+ of session ${sessionId}, turns 1 to 4, by anthropic claude-x \\(not saved\\)\\n`));
    assert.match(out, /\n    Lisbon offsite\n/);
    assert.match(out, /\nDecisions:\n  - Hold the offsite in Lisbon in May\n  - Book the Alfama venue\n/);
    assert.match(out, /\nAssumptions:\n  - Everyone can travel without a visa\n/);
    assert.match(out, /\nTasks:\n  \[ \] Priya books the flights by Friday\n/);
    assert.match(out, /\nOpen questions:\n  - Do we need a translator\?\n/);
    assert.match(out, /smriti checkpoint create SPACE --from-json draft.json/);
    assert.doesNotMatch(out, new RegExp(`smriti draft ${sessionId}`), 'never re-run the model to save');
  });

  test('the draft shown is the draft saved: --job JOB --save makes no second model call', async () => {
    fake.reset();
    fake.script([{ json: EXTRACTED }]);
    const out = await okAsync(t.db, ['draft', sessionId], { env: env() });
    const job = out.match(/^draft (\S+) of session/)[1];
    assert.match(out, new RegExp(`To save this draft as shown: smriti draft --job ${job} --save\n`));
    const calls = fake.requests().length;
    const before = run(t.db, ['log', 'offsite', '--json']);
    const saved = await okAsync(t.db, ['draft', '--job', job, '--save', '--json'],
      { env: { ...env(), SMRITI_AUTHOR: 'priya' } });
    assert.equal(fake.requests().length, calls, 'saving called no model');
    assert.equal(saved.space, 'offsite');
    assert.equal(saved.author, 'priya');
    assert.equal(saved.title, EXTRACTED.title);
    assert.deepEqual(saved.decisions, EXTRACTED.decisions);
    assert.equal(saved.metadata.draft.job_id, job);
    assert.equal(ok(t.db, ['head', 'offsite', '--json']).commit_hash, saved.commit_hash);
    if (before.code === 0) assert.equal(saved.parent_hash, before.json()[0].commit_hash);
    // one step: draft and save
    fake.script([{ json: EXTRACTED }]);
    const both = await okAsync(t.db, ['draft', sessionId, '--save'], { env: env() });
    assert.match(both, /\nsaved the draft of job \S+ on top of HEAD as \[offsite [0-9a-f]{12}\] Lisbon offsite\n .+\n$/);
    assert.doesNotMatch(both, /not saved/);
    assert.equal(ok(t.db, ['log', 'offsite', '--json'])[0].author, 'tester', 'the login name by default');
    // usage
    assert.equal((await runAsync(t.db, ['draft', sessionId, '--job', job], { env: env() })).code, 2);
    assert.equal((await runAsync(t.db, ['draft', '--job', job, '--model', 'm'], { env: env() })).code, 2);
    assert.equal((await runAsync(t.db, ['draft', '--job', 'no-such-job', '--save'], { env: env() })).code, 3);
  });

  test('a failed draft exits 5 with the reason; bad input exits 2 or 3', async () => {
    fake.reset();
    fake.script([{ reply: 'no JSON here' }, { reply: 'nor here' }]);
    const r = await runAsync(t.db, ['draft', sessionId, '--json'], { env: env() });
    assert.equal(r.code, 5, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^smriti: draft job \S+ failed: the model's reply is not valid JSON, also after one repair request/);
    const missing = await runAsync(t.db, ['draft', 'no-such-session'], { env: env() });
    assert.equal(missing.code, 3);
    assert.match(missing.stderr, /^smriti: no session 'no-such-session'\n$/);
    const nokey = await runAsync(t.db, ['draft', sessionId]);
    assert.equal(nokey.code, 5, 'the exit code of chat.send without its key');
    assert.equal(nokey.stderr, 'smriti: openai: OPENAI_API_KEY is not set\n');
    assert.equal((await runAsync(t.db, ['draft'], { env: env() })).code, 2);
    assert.equal((await runAsync(t.db, ['draft', sessionId, '--bogus'], { env: env() })).code, 2);
    assert.match(await okAsync(t.db, ['draft', '--help']), /^usage: smriti draft SESSION/);
  });
});

describe('smriti draft through SMRITI_URL', () => {
  let srv;
  before(async () => {
    srv = await startServer(t.db, { env: env() });
  });
  after(async () => {
    await srv?.stop();
  });

  test('gives the local output: the job runs on the server', async () => {
    fake.reset();
    fake.script([{ json: EXTRACTED }]);
    // no provider settings on the client: only the server has them
    const d = await okAsync('/nonexistent/db', ['draft', sessionId, '--json'], { env: { SMRITI_URL: srv.url } });
    assert.deepEqual(d.open_questions, EXTRACTED.open_questions);
    assert.equal(d.metadata.draft.session_id, sessionId);
    assert.equal(draftRequests(fake).length, 1);
    fake.script([{ status: 400, message: 'bad model' }]);
    const r = await runAsync('/nonexistent/db', ['draft', sessionId], { env: { SMRITI_URL: srv.url } });
    assert.equal(r.code, 5);
    assert.match(r.stderr, /failed: the provider failed: openai: 400 .*bad model/);
    const missing = await runAsync('/nonexistent/db', ['draft', 'nope'], { env: { SMRITI_URL: srv.url } });
    assert.equal(missing.code, 3);
  });

  test('--job JOB --save saves the draft of a job on the server, with no second model call', async () => {
    fake.reset();
    fake.script([{ json: EXTRACTED }]);
    const remote = { env: { SMRITI_URL: srv.url, SMRITI_AUTHOR: 'remote-agent' } };
    const d = await okAsync('/nonexistent/db', ['draft', sessionId, '--json'], remote);
    const saved = await okAsync('/nonexistent/db', ['draft', '--job', d.metadata.draft.job_id, '--save', '--json'], remote);
    assert.equal(draftRequests(fake).length, 1);
    assert.equal(saved.author, 'remote-agent');
    assert.deepEqual(saved.tasks, EXTRACTED.tasks);
    assert.equal(saved.metadata.draft.job_id, d.metadata.draft.job_id);
  });
});
