// draft.test.mjs -- Draft with AI over `smriti serve` and the fake provider:
// the extraction (right items in the right fields, provenance, nothing
// saved), the prompt (the conversation and the instruction, no earlier
// checkpoint of the Space, only turns after the mount boundary), failures
// that fail the job with a clear error (provider error after retries,
// non-JSON and wrong-schema replies with one repair request), concurrency
// (two drafts at once, chat while a draft waits on a slow provider), and
// requests refused before any job is made.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb } from './helpers.mjs';
import { startServer, request, expectStatus, assertError } from './http-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';
import {
  providerEnv, TURNS, EXTRACTED, ingestSession, waitJob, draft, waitRequests,
  draftRequests, promptTexts, OPENAI_KEY, ANTHROPIC_KEY,
} from './draft-helpers.mjs';

let tmp;
let fake;
let srv;
let lastJobId = null;     // the job of the first extraction test

before(async () => {
  tmp = tempDb();
  fake = await startFakeProvider({ port: 0 });
  srv = await startServer(tmp.db, { env: providerEnv(fake) });
  await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'offsite' } });
});

after(async () => {
  await srv?.stop();
  await fake?.close();
  tmp?.cleanup();
});

describe('a draft job', () => {
  test('extracts exactly the stated items into the right fields, with provenance', async () => {
    fake.reset();
    const s = await ingestSession(srv, 'offsite');
    fake.script([{ json: EXTRACTED }]);
    const created = await request(srv, 'POST', '/v5/checkpoints/draft', { body: { session_id: s.id } });
    assert.equal(created.status, 202, created.text);
    assert.equal(created.json.status, 'queued');
    assert.equal(created.json.session_id, s.id);
    assert.equal(created.json.started_at, null);
    assert.ok(!('draft' in created.json) && !('error' in created.json));
    const job = await waitJob(srv, created.json.job_id);
    lastJobId = job.job_id;
    assert.equal(job.status, 'done', JSON.stringify(job));
    assert.equal(job.provider, 'openai');
    assert.equal(job.model, 'gpt-fake-draft');
    assert.ok(job.created_at <= job.started_at && job.started_at <= job.finished_at);
    assert.ok(!('error' in job));
    const d = job.draft;
    for (const k of ['decisions', 'assumptions', 'tasks', 'open_questions', 'entities', 'artifacts']) {
      assert.deepEqual(d[k], EXTRACTED[k], k);
    }
    assert.equal(d.title, EXTRACTED.title);
    assert.equal(d.summary, EXTRACTED.summary);
    assert.deepEqual(d.metadata, {
      draft: {
        session_id: s.id, turn_range: { first_seq: 1, last_seq: 4 },
        provider: 'openai', model: 'gpt-fake-draft', job_id: job.job_id,
      },
    });
    assert.deepEqual(Object.keys(d), ['title', 'summary', 'decisions', 'assumptions', 'tasks',
      'open_questions', 'entities', 'artifacts', 'metadata']);
  });

  test('the provider got the conversation turns, the instruction and the JSON schema', async () => {
    const [req] = draftRequests(fake);
    assert.equal(req.provider, 'openai');
    assert.equal(req.headers.authorization, `Bearer ${OPENAI_KEY}`);
    const rf = req.body.response_format;
    assert.equal(rf.type, 'json_schema');
    assert.equal(rf.json_schema.name, 'checkpoint_draft');
    assert.equal(rf.json_schema.strict, true);
    assert.deepEqual(rf.json_schema.schema.required, ['title', 'summary', 'decisions',
      'assumptions', 'tasks', 'open_questions', 'entities', 'artifacts']);
    const [system, ...rest] = promptTexts(req.body);
    assert.match(system, /Extract only what is explicitly present in the conversation/);
    assert.match(system, /Do not infer, guess/);
    const user = rest.join('\n');
    assert.equal(rest.length, 1);
    for (const [who, text] of TURNS) assert.ok(user.includes(`${who}:\n${text}`), `turn missing: ${text}`);
    assert.match(user, /turns 1 to 4/);
  });

  test('is not saved: the Space has no checkpoint until the person writes one', async () => {
    const space = await expectStatus(srv, 'GET', '/v4/repos/offsite', 200);
    assert.equal(space.head, null);
    // the person saves the (edited) draft through the normal checkpoint write
    const job = await waitJob(srv, lastJobId);
    const saved = await expectStatus(srv, 'POST', '/chat/commit', 201,
      { body: { repo_id: 'offsite', ...job.draft } });
    assert.deepEqual(saved.decisions, EXTRACTED.decisions);
    assert.deepEqual(saved.metadata.draft.turn_range, { first_seq: 1, last_seq: 4 });
  });

  test('with Anthropic the schema is a forced tool and its input is the draft', async () => {
    fake.reset();
    const s = await ingestSession(srv, 'offsite');
    fake.script([{ json: EXTRACTED, provider: 'anthropic' }]);
    const job = await draft(srv, { session_id: s.id, provider: 'anthropic', model: 'claude-fake' });
    assert.equal(job.status, 'done', JSON.stringify(job));
    assert.deepEqual(job.draft.decisions, EXTRACTED.decisions);
    assert.equal(job.draft.metadata.draft.provider, 'anthropic');
    assert.equal(job.draft.metadata.draft.model, 'claude-fake');
    const [req] = draftRequests(fake);
    assert.equal(req.provider, 'anthropic');
    assert.equal(req.headers['x-api-key'], ANTHROPIC_KEY);
    assert.equal(req.body.tools[0].name, 'checkpoint_draft');
    assert.deepEqual(req.body.tool_choice, { type: 'tool', name: 'checkpoint_draft' });
    assert.match(req.body.system, /Extract only what is explicitly present/);
  });
});

describe('no earlier checkpoint reaches the extraction', () => {
  const PLANTED = 'ZEBRACORN-7 ledger';
  let mounted;

  before(async () => {
    await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'ledger' } });
    await expectStatus(srv, 'POST', '/chat/commit', 201, {
      body: {
        repo_id: 'ledger', title: `Invoices on the ${PLANTED}`,
        summary: `Everything runs on the ${PLANTED}.`,
        decisions: [`Use the ${PLANTED} for every invoice`],
        assumptions: [`The ${PLANTED} never goes down`], tasks: [`Migrate to the ${PLANTED}`],
        entities: [{ name: PLANTED, kind: 'system' }],
        artifacts: [{ name: 'ledger.txt', kind: 'text', content: `${PLANTED} config` }],
      },
    });
  });

  test('not the Space HEAD', async () => {
    fake.reset();
    const s = await ingestSession(srv, 'ledger');
    fake.script([{ json: EXTRACTED }]);
    const job = await draft(srv, { session_id: s.id });
    assert.equal(job.status, 'done', JSON.stringify(job));
    const reqs = draftRequests(fake);
    assert.equal(reqs.length, 1);
    assert.ok(!JSON.stringify(reqs[0].body).includes('ZEBRACORN'), 'HEAD leaked into the draft prompt');
    assert.ok(!JSON.stringify(job.draft).includes('ZEBRACORN'));
  });

  test("not the session's mounted checkpoint, and only turns after the mount", async () => {
    fake.reset();
    const head = await expectStatus(srv, 'GET', '/repos/ledger/head', 200);
    const parent = await ingestSession(srv, 'ledger',
      'User: Earlier talk about the WOMBAT-99 plan.\n\nAssistant: The WOMBAT-99 plan is noted.');
    mounted = await expectStatus(srv, 'POST', `/v5/sessions/${parent.id}/mount`, 201,
      { body: { commit_hash: head.commit_hash } });
    for (const [who, text] of TURNS.filter(([w]) => w === 'User')) {
      assert.ok(who);
      await expectStatus(srv, 'POST', '/v4/chat/send', 200,
        { body: { session_id: mounted.id, message: text } });
    }
    // the chat prompt does carry the mounted checkpoint: it would leak if injected
    const chatReq = fake.requests().find((r) => !JSON.stringify(r.body).includes('checkpoint_draft'));
    assert.ok(JSON.stringify(chatReq.body).includes('ZEBRACORN'));
    fake.script([{ json: EXTRACTED }]);
    const job = await draft(srv, { session_id: mounted.id });
    assert.equal(job.status, 'done', JSON.stringify(job));
    const [req] = draftRequests(fake);
    const body = JSON.stringify(req.body);
    assert.ok(!body.includes('ZEBRACORN'), 'the mounted checkpoint leaked into the draft prompt');
    assert.ok(!body.includes('WOMBAT-99'), 'turns before the mount leaked into the draft prompt');
    assert.ok(body.includes('Priya books the flights by Friday'));
    assert.deepEqual(job.draft.metadata.draft.turn_range, { first_seq: 1, last_seq: 4 });
  });
});

describe('failures fail the job with a clear error', () => {
  let s;
  before(async () => {
    s = await ingestSession(srv, 'offsite');
  });

  test('provider error after its retries: no repair request', async () => {
    fake.reset();
    fake.script([{ status: 500, message: 'upstream exploded' }, { status: 500, message: 'upstream exploded' }]);
    const job = await draft(srv, { session_id: s.id });
    assert.equal(job.status, 'failed');
    assert.match(job.error, /^the provider failed: openai: 500 .*upstream exploded/);
    assert.ok(!('draft' in job));
    assert.ok(job.finished_at);
    assert.equal(draftRequests(fake).length, 2, 'one try and one retry, no repair');
  });

  test('a reply that is not JSON, twice: failed after one visible repair request', async () => {
    fake.reset();
    fake.script([{ reply: 'Sure! The decisions were Lisbon and Alfama.' }, { reply: 'Still prose, sorry.' }]);
    const job = await draft(srv, { session_id: s.id });
    assert.equal(job.status, 'failed');
    assert.match(job.error, /^the model's reply is not valid JSON, also after one repair request/);
    const reqs = draftRequests(fake);
    assert.equal(reqs.length, 2);
    const repair = promptTexts(reqs[1].body).join('\n');
    assert.match(repair, /Your previous reply could not be used: .*not valid JSON/);
    assert.ok(repair.includes(TURNS[0][1]), 'the repair request still carries the conversation');
  });

  test('a reply not of the schema, twice: failed, the rejected reply shown back', async () => {
    fake.reset();
    fake.script([{ json: { ...EXTRACTED, decisions: 'Lisbon' } }, { json: { title: 'only a title' } }]);
    const job = await draft(srv, { session_id: s.id });
    assert.equal(job.status, 'failed');
    assert.match(job.error, /^the model's reply does not fit the checkpoint schema, also after one repair request: the reply has no 'summary'/);
    const reqs = draftRequests(fake);
    assert.equal(reqs.length, 2);
    const msgs = reqs[1].body.messages;
    assert.equal(msgs.at(-2).role, 'assistant');
    assert.match(msgs.at(-2).content, /"decisions":"Lisbon"/);
    assert.match(msgs.at(-1).content, /could not be used: 'decisions' must be an array/);
  });

  test('a wrong reply repaired by the second answer: done', async () => {
    fake.reset();
    fake.script([{ json: { ...EXTRACTED, tasks: [{ text: '', status: 'open' }] } }, { json: EXTRACTED }]);
    const job = await draft(srv, { session_id: s.id });
    assert.equal(job.status, 'done', JSON.stringify(job));
    assert.deepEqual(job.draft.tasks, EXTRACTED.tasks);
    assert.equal(draftRequests(fake).length, 2);
  });

  test('a malformed HTTP body is a provider failure, not repaired', async () => {
    fake.reset();
    fake.script([{ malformed: true }]);
    const job = await draft(srv, { session_id: s.id });
    assert.equal(job.status, 'failed');
    assert.match(job.error, /^the provider failed: openai: /);
    assert.equal(draftRequests(fake).length, 1);
  });
});

describe('concurrency', () => {
  test('two drafts at once both finish, and ran side by side', async () => {
    fake.reset();
    const a = await ingestSession(srv, 'offsite');
    const b = await ingestSession(srv, 'offsite');
    fake.script([{ json: EXTRACTED, delay_ms: 400 }, { json: EXTRACTED, delay_ms: 400 }]);
    const [ja, jb] = await Promise.all([draft(srv, { session_id: a.id }), draft(srv, { session_id: b.id })]);
    assert.equal(ja.status, 'done', JSON.stringify(ja));
    assert.equal(jb.status, 'done', JSON.stringify(jb));
    assert.notEqual(ja.job_id, jb.job_id);
    assert.equal(ja.draft.metadata.draft.session_id, a.id);
    assert.equal(jb.draft.metadata.draft.session_id, b.id);
    // both requests reached the provider before either draft finished
    assert.ok(ja.started_at < jb.finished_at && jb.started_at < ja.finished_at);
    assert.equal(draftRequests(fake).length, 2);
  });

  test('a chat send answers while a draft waits on a slow provider', async () => {
    fake.reset();
    const s = await ingestSession(srv, 'offsite');
    const chat = await expectStatus(srv, 'POST', '/v4/repos/offsite/sessions', 201, { body: {} });
    fake.script([{ json: EXTRACTED, delay_ms: 3000 }]);
    const created = await expectStatus(srv, 'POST', '/v5/checkpoints/draft', 202,
      { body: { session_id: s.id } });
    await waitRequests(fake, 1);
    const sent = await expectStatus(srv, 'POST', '/v4/chat/send', 200,
      { body: { session_id: chat.id, message: 'Is the draft blocking me?' } });
    assert.equal(sent.assistant_turn.content, 'fake reply to: Is the draft blocking me?');
    const during = await expectStatus(srv, 'GET', `/v5/checkpoints/draft/${created.job_id}`, 200);
    assert.equal(during.status, 'running', 'the send should have finished while the draft ran');
    const job = await waitJob(srv, created.job_id);
    assert.equal(job.status, 'done', JSON.stringify(job));
    assert.ok(sent.assistant_turn.created_at < job.finished_at);
  });
});

describe('refused before any job is made', () => {
  test('unknown session 404, bad parameters 400, unknown provider or no key 422', async () => {
    const s = await ingestSession(srv, 'offsite');
    const empty = await expectStatus(srv, 'POST', '/v4/repos/offsite/sessions', 201, { body: {} });
    const before = fake.requests().length;
    assertError(await request(srv, 'POST', '/v5/checkpoints/draft', { body: { session_id: 'nope' } }), 404, 'not_found');
    assertError(await request(srv, 'POST', '/v5/checkpoints/draft', { body: {} }), 400);
    assertError(await request(srv, 'POST', '/v5/checkpoints/draft', { body: { session_id: 7 } }), 400);
    assertError(await request(srv, 'POST', '/v5/checkpoints/draft',
      { body: { session_id: s.id, colour: 'red' } }), 400);
    assertError(await request(srv, 'POST', '/v5/checkpoints/draft', { body: '{"session_id":' }), 400);
    const unknown = await request(srv, 'POST', '/v5/checkpoints/draft',
      { body: { session_id: s.id, provider: 'gemini' } });
    assertError(unknown, 422, 'unprocessable');
    assert.match(unknown.json.error.message, /unknown provider 'gemini'/);
    const nothing = await request(srv, 'POST', '/v5/checkpoints/draft', { body: { session_id: empty.id } });
    assertError(nothing, 422, 'unprocessable');
    assert.match(nothing.json.error.message, /has no turns to draft from/);
    assertError(await request(srv, 'POST', '/v5/checkpoints/draft',
      { body: { session_id: s.id, model: '' } }), 400);
    assertError(await request(srv, 'GET', '/v5/checkpoints/draft/no-such-job'), 404, 'not_found');
    assertError(await request(srv, 'PUT', '/v5/checkpoints/draft'), 405);
    assert.equal(fake.requests().length, before, 'nothing reached the provider');
  });

  test('a provider without its key is 502 naming the variable, as on chat.send', async () => {
    const t = tempDb();
    const bare = await startServer(t.db, { env: { OPENAI_BASE_URL: `${fake.url}/v1` } });
    try {
      await expectStatus(bare, 'POST', '/v4/repos', 201, { body: { name: 'k' } });
      const s = await ingestSession(bare, 'k');
      const r = await request(bare, 'POST', '/v5/checkpoints/draft', { body: { session_id: s.id } });
      assertError(r, 502, 'provider_error');
      assert.equal(r.json.error.message, 'openai: OPENAI_API_KEY is not set');
    } finally {
      await bare.stop();
      t.cleanup();
    }
  });

  test('openapi.json documents the draft and review routes', async () => {
    const doc = await expectStatus(srv, 'GET', '/openapi.json', 200);
    assert.equal(doc.paths['/v5/checkpoints/draft'].post.responses['202'].content['application/json'].schema.$ref,
      '#/components/schemas/DraftJob');
    assert.ok(doc.paths['/v5/checkpoints/draft/{job_id}'].get);
    assert.ok(doc.paths['/v5/checkpoints/{hash}/review'].post);
    for (const name of ['DraftJob', 'ReviewParams', 'Review']) {
      assert.ok(doc.components.schemas[name], name);
    }
    // the body is draft.create's declared parameters: unknown keys are refused
    assert.equal(doc.paths['/v5/checkpoints/draft'].post.requestBody.content['application/json'].schema
      .additionalProperties, false);
  });

  test('keys never appear in job documents or the server log', async () => {
    const job = await request(srv, 'GET', `/v5/checkpoints/draft/${lastJobId}`);
    for (const text of [job.text, srv.log()]) {
      assert.ok(!text.includes(OPENAI_KEY) && !text.includes(ANTHROPIC_KEY));
    }
  });
});
