// review-llm.test.mjs -- the LLM pass of checkpoint review against the fake
// provider: its findings take the typed form and are tagged "llm", findings
// that do not fit are dropped and counted, a bad or failed reply leaves the
// deterministic findings standing, no provider configured says so, and
// review never changes the checkpoint.  Over POST /v5/checkpoints/{hash}/review
// and `smriti review` (lean binary, local and through SMRITI_URL).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb } from './helpers.mjs';
import { startServer, request, expectStatus } from './http-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';
import { providerEnv, promptTexts, runAsync, okAsync } from './draft-helpers.mjs';

const CHECKPOINT = {
  repo_id: 'stack',
  title: 'Storage choices',
  decisions: ['Use Postgres for orders', 'Use MySQL for every table', 'Deploy on Fridays'],
  assumptions: ['The team knows SQL'],
  open_questions: ['Which database holds the orders?'],
  entities: [{ name: 'Kafka', kind: 'system' }, { name: 'Postgres', kind: 'database' }],
};

const VALID = [
  { type: 'contradiction', message: 'Postgres for orders and MySQL for every table cannot both hold',
    items: [{ field: 'decisions', index: 0 }, { field: 'decisions', index: 1 }] },
  { type: 'hidden_assumption', message: 'Friday deploys rely on weekend on-call cover',
    items: [{ field: 'decisions', index: 2 }] },
  { type: 'resolved_question', message: 'The first decision answers the question',
    items: [{ field: 'open_questions', index: 0 }, { field: 'decisions', index: 0 }] },
  { type: 'disconnected_entity', message: 'Nothing refers to Kafka',
    items: [{ field: 'entities', index: 0 }] },
];

const INVALID = [
  { type: 'vibes', message: 'feels off', items: [{ field: 'decisions', index: 0 }] },
  { type: 'contradiction', message: 'no such decision', items: [{ field: 'decisions', index: 9 }] },
  { type: 'contradiction', message: '', items: [{ field: 'decisions', index: 0 }] },
  { type: 'hidden_assumption', message: 'names nothing', items: [] },
  { type: 'disconnected_entity', message: 'not a list', items: [{ field: 'title', index: 0 }] },
];

let fake;
let tmp;
let srv;
let ck;

before(async () => {
  fake = await startFakeProvider({ port: 0 });
  tmp = tempDb();
  srv = await startServer(tmp.db, { env: providerEnv(fake) });
  await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'stack' } });
  ck = await expectStatus(srv, 'POST', '/chat/commit', 201, { body: CHECKPOINT });
});

after(async () => {
  await srv?.stop();
  await fake?.close();
  tmp?.cleanup();
});

const reviewPath = () => `/v5/checkpoints/${ck.commit_hash}/review`;
const llmFindings = (r) => r.findings.filter((f) => f.source === 'llm');

describe('LLM pass over POST /v5/checkpoints/{hash}/review', () => {
  test('findings are typed, tagged llm, named by the checkpoint; bad ones dropped', async () => {
    fake.reset();
    fake.script([{ json: { findings: [...VALID, ...INVALID] } }]);
    const r = await expectStatus(srv, 'POST', reviewPath(), 200, { body: {} });
    assert.equal(r.commit_hash, ck.commit_hash);
    assert.deepEqual(r.passes[1], { source: 'llm', ran: true, findings: 4, dropped: 5 });
    assert.equal(r.passes[0].source, 'deterministic');
    assert.equal(r.passes[0].ran, true);
    const text = (field, index) => {
      const item = CHECKPOINT[field][index];
      return typeof item === 'string' ? item : item.name;
    };
    assert.deepEqual(llmFindings(r), VALID.map((f) => ({
      type: f.type, message: f.message, source: 'llm',
      items: f.items.map((i) => ({ ...i, text: text(i.field, i.index) })),
    })));
    for (const f of r.findings.filter((x) => x.source !== 'llm')) assert.equal(f.source, 'deterministic');
  });

  test('the provider was asked with the numbered checkpoint and a findings schema', async () => {
    const [req] = fake.requests();
    const rf = req.body.response_format;
    assert.equal(rf.json_schema.name, 'checkpoint_review');
    assert.equal(rf.json_schema.strict, true);
    const finding = rf.json_schema.schema.properties.findings.items;
    assert.deepEqual(finding.properties.type.enum,
      ['contradiction', 'hidden_assumption', 'resolved_question', 'disconnected_entity']);
    const [system, user] = promptTexts(req.body);
    assert.match(system, /contradiction: two decisions that cannot both hold/);
    assert.match(user, /decisions \(3\):\n\[0\] Use Postgres for orders\n\[1\] Use MySQL for every table\n\[2\] Deploy on Fridays\n/);
    assert.match(user, /entities \(2\):\n\[0\] Kafka \(kind: system\)\n\[1\] Postgres \(kind: database\)\n/);
    assert.equal(req.body.model, 'gpt-fake-draft');
  });

  test('review never changes the checkpoint', async () => {
    const now = await expectStatus(srv, 'GET', `/commits/${ck.commit_hash}`, 200);
    assert.deepEqual(now, ck);
    const head = await expectStatus(srv, 'GET', '/repos/stack/head', 200);
    assert.equal(head.commit_hash, ck.commit_hash);
  });

  test('provider and model parameters pick who reviews', async () => {
    fake.reset();
    fake.script([{ json: { findings: [VALID[3]] }, provider: 'anthropic' }]);
    const r = await expectStatus(srv, 'POST', reviewPath(), 200,
      { body: { provider: 'anthropic', model: 'claude-reviewer' } });
    assert.deepEqual(r.passes[1], { source: 'llm', ran: true, findings: 1, dropped: 0 });
    const [req] = fake.requests();
    assert.equal(req.provider, 'anthropic');
    assert.equal(req.body.model, 'claude-reviewer');
    assert.equal(req.body.tool_choice.name, 'checkpoint_review');
  });

  test('a reply not of the schema or a provider failure: the pass did not run, review answers', async () => {
    fake.reset();
    fake.script([{ json: { verdict: 'fine' } }]);
    let r = await expectStatus(srv, 'POST', reviewPath(), 200, { body: {} });
    assert.deepEqual(r.passes[1], { source: 'llm', ran: false, error: 'provider_error',
      reason: "openai: the review reply has no 'findings' list" });
    assert.deepEqual(llmFindings(r), []);
    assert.equal(r.passes[0].ran, true);
    fake.script([{ status: 500, message: 'reviewer down' }, { status: 500, message: 'reviewer down' }]);
    r = await expectStatus(srv, 'POST', reviewPath(), 200, { body: {} });
    assert.equal(r.passes[1].ran, false);
    assert.equal(r.passes[1].error, 'provider_error');
    assert.match(r.passes[1].reason, /^openai: 500 .*reviewer down/);
    fake.script([{ reply: 'looks fine to me' }]);
    r = await expectStatus(srv, 'POST', reviewPath(), 200, { body: {} });
    assert.equal(r.passes[1].ran, false);
    assert.match(r.passes[1].reason, /not valid JSON/);
  });

  test('llm false skips the pass without calling the provider', async () => {
    fake.reset();
    const r = await expectStatus(srv, 'POST', reviewPath(), 200, { body: { llm: false } });
    assert.deepEqual(r.passes[1], { source: 'llm', ran: false, reason: 'not requested' });
    assert.equal(fake.requests().length, 0);
  });

  test('bad references and parameters', async () => {
    let r = await request(srv, 'POST', '/v5/checkpoints/not-a-hash/review', { body: {} });
    assert.equal(r.status, 400, r.text);
    r = await request(srv, 'POST', `/v5/checkpoints/${'0'.repeat(64)}/review`, { body: {} });
    assert.equal(r.status, 404, r.text);
    r = await request(srv, 'POST', reviewPath(), { body: { llm: 'yes' } });
    assert.equal(r.status, 400, r.text);
    fake.reset();
    r = await expectStatus(srv, 'POST', reviewPath(), 200, { body: { provider: 'gemini' } });
    assert.deepEqual(r.passes[1], { source: 'llm', ran: false, error: 'unprocessable',
      reason: "unknown provider 'gemini' (expected openai, anthropic or local)" });
    assert.equal(fake.requests().length, 0);
  });
});

describe('no provider configured', () => {
  test('deterministic findings only, and the llm pass says why', async () => {
    const t = tempDb();
    const bare = await startServer(t.db, { env: { OPENAI_BASE_URL: `${fake.url}/v1` } });
    try {
      await expectStatus(bare, 'POST', '/v4/repos', 201, { body: { name: 'stack' } });
      const c = await expectStatus(bare, 'POST', '/chat/commit', 201, { body: CHECKPOINT });
      fake.reset();
      let r = await expectStatus(bare, 'POST', `/v5/checkpoints/${c.commit_hash}/review`, 200, { body: {} });
      assert.equal(r.passes[0].ran, true);
      assert.deepEqual(r.passes[1], { source: 'llm', ran: false, reason: 'no provider configured' });
      assert.ok(r.findings.every((f) => f.source === 'deterministic'));
      r = await expectStatus(bare, 'POST', `/v5/checkpoints/${c.commit_hash}/review`, 200,
        { body: { provider: 'anthropic' } });
      assert.deepEqual(r.passes[1], { source: 'llm', ran: false, error: 'provider_error',
        reason: 'anthropic: ANTHROPIC_API_KEY is not set' });
      assert.equal(fake.requests().length, 0);
    } finally {
      await bare.stop();
      t.cleanup();
    }
  });
});

describe('smriti review', () => {
  test('runs the LLM pass when a provider is configured, locally and remotely', async () => {
    fake.reset();
    fake.script([{ json: { findings: [VALID[0]] } }]);
    const local = await okAsync(tmp.db, ['review', ck.commit_hash, '--json'], { env: providerEnv(fake) });
    assert.deepEqual(local.passes[1], { source: 'llm', ran: true, findings: 1, dropped: 0 });
    assert.equal(llmFindings(local)[0].type, 'contradiction');
    fake.script([{ json: { findings: [VALID[0]] } }]);
    const human = await okAsync(tmp.db, ['review', 'stack'], { env: providerEnv(fake) });
    assert.match(human, /\nllm pass: ran, 1 finding\n/);
    assert.match(human, /Postgres for orders and MySQL for every table cannot both hold {2}\[llm\]/);
    fake.script([{ json: { findings: [VALID[1]] } }]);
    const remote = await okAsync('/nonexistent/db', ['review', 'stack', '--json'],
      { env: { SMRITI_URL: srv.url } });
    assert.deepEqual(llmFindings(remote).map((f) => f.type), ['hidden_assumption']);
    assert.equal(fake.requests().length, 3);
  });

  test('--provider and --model reach the provider; --no-llm and no key skip it', async () => {
    fake.reset();
    fake.script([{ json: { findings: [] }, provider: 'anthropic' }]);
    const r = await okAsync(tmp.db, ['review', 'stack', '--provider', 'anthropic', '--model', 'claude-r', '--json'],
      { env: providerEnv(fake) });
    assert.deepEqual(r.passes[1], { source: 'llm', ran: true, findings: 0, dropped: 0 });
    assert.equal(fake.requests()[0].body.model, 'claude-r');
    const skipped = await okAsync(tmp.db, ['review', 'stack', '--no-llm', '--json'], { env: providerEnv(fake) });
    assert.deepEqual(skipped.passes[1], { source: 'llm', ran: false, reason: 'not requested' });
    const bare = await okAsync(tmp.db, ['review', 'stack', '--json']);
    assert.deepEqual(bare.passes[1], { source: 'llm', ran: false, reason: 'no provider configured' });
    assert.equal(fake.requests().length, 1);
    const unknown = await runAsync(tmp.db, ['review', 'stack', '--provider', 'gemini', '--json']);
    assert.equal(unknown.code, 0, unknown.stderr);
    assert.equal(unknown.json().passes[1].reason,
      "unknown provider 'gemini' (expected openai, anthropic or local)");
  });
});
