// draft-save.test.mjs -- saving a Draft with AI is a write on top of HEAD
// (issue 24, item 3): on a rich HEAD (dozens of decisions and tasks,
// entities, an artifact) a saved draft keeps every HEAD item, adds its new
// items once, marks a task it reports done done, takes its title and
// summary; `replace` writes exactly the draft; a stale parent is refused.
// Through HTTP (the v5 route and /api/ops), the CLI (`smriti draft --save`,
// `--replace`, `--parent`), on SQLite and, with SMRITI_TEST_PG, PostgreSQL.
// And one rule for duplicates (item 5): a write whose list holds an item
// twice is refused alike on the CLI, HTTP and MCP, nothing written.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import path from 'node:path';
import { tempDb, run, ok, ROOT, SMRITI_FULL } from './helpers.mjs';
import { startServer, request, expectStatus } from './http-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';
import {
  providerEnv, TRANSCRIPT, RICH, LATEST, ingestSession, draft, runAsync, okAsync,
} from './draft-helpers.mjs';

const PG = process.env.SMRITI_TEST_PG;

// HEAD after the draft is saved on it by default.
function expectedCarry() {
  const tasks = RICH.tasks.map((t) => (t.text === 'Task 3' ? { ...t, status: 'done' } : t));
  return {
    title: LATEST.title,
    summary: LATEST.summary,
    decisions: [...RICH.decisions, { text: 'Book the Alfama venue' }, { text: 'Fly on Monday' }],
    assumptions: RICH.assumptions,
    tasks: [...tasks, { text: 'Priya books the flights', status: 'open' }],
    open_questions: RICH.open_questions,
    entities: [...RICH.entities, { name: 'Alfama venue', kind: 'place' }],
    artifacts: RICH.artifacts,
  };
}

function content(c) {
  const o = {};
  for (const k of ['title', 'summary', 'decisions', 'assumptions', 'tasks', 'open_questions', 'entities', 'artifacts']) o[k] = c[k];
  return o;
}

function psql(sql) {
  const r = spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', PG, '-c', sql], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`psql ${sql}: ${r.stderr}`);
}

// A store for one backend: { db, cleanup() }.
function store(kind) {
  if (kind === 'sqlite') {
    const t = tempDb();
    return { db: t.db, cleanup: () => t.cleanup() };
  }
  const schema = `smriti_draftsave_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
  psql(`CREATE SCHEMA ${schema}`);
  return {
    db: `${PG}${PG.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`,
    cleanup: () => psql(`DROP SCHEMA ${schema} CASCADE`),
  };
}

for (const kind of ['sqlite', 'postgres']) {
  describe(`saving a draft on a rich HEAD (${kind})`, { skip: kind === 'postgres' && !PG ? 'SMRITI_TEST_PG is not set' : false }, () => {
    let fake;
    let st;
    let srv;
    let sessionId;

    before(async () => {
      fake = await startFakeProvider({ port: 0 });
      st = store(kind);
      ok(st.db, ['space', 'create', 'offsite']);
      srv = await startServer(st.db, { env: providerEnv(fake) });
      sessionId = (await ingestSession(srv, 'offsite', TRANSCRIPT)).id;
    });

    after(async () => {
      await srv?.stop();
      await fake?.close();
      st?.cleanup();
    });

    // A fresh rich HEAD, then a finished draft job proposing LATEST; returns { head, job }.
    async function richAndDraft() {
      const head = await expectStatus(srv, 'POST', '/chat/commit', 201, { body: { repo_id: 'offsite', ...RICH } });
      fake.script([{ json: LATEST }]);
      const job = await draft(srv, { session_id: sessionId });
      assert.equal(job.status, 'done', job.error);
      return { head, job };
    }

    test('HTTP: the v5 save keeps every HEAD item, adds the new ones once, marks the done task done', async () => {
      const { head, job } = await richAndDraft();
      const r = await request(srv, 'POST', `/v5/checkpoints/draft/${job.job_id}/save`, { body: { author: 'priya' } });
      r.json = r.json.checkpoint;
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(content(r.json), expectedCarry());
      assert.equal(r.json.parent_hash, head.commit_hash);
      assert.equal(r.json.author, 'priya');
      assert.equal(r.json.metadata.draft.job_id, job.job_id, 'draft provenance kept');
      assert.equal((await expectStatus(srv, 'GET', '/repos/offsite/head', 200)).commit_hash, r.json.commit_hash);
    });

    test('HTTP: draft.plan says what the save would do; reject and drop are the person\'s choices', async () => {
      const { head, job } = await richAndDraft();
      const plan = (await expectStatus(srv, 'POST', '/api/ops/draft.plan', 200, { body: { job_id: job.job_id } })).result;
      assert.equal(plan.parent, head.commit_hash);
      assert.deepEqual(plan.review.decisions.map((d) => [d.item.text, d.status]), [
        ['Book the Alfama venue', 'new'], ['Decision 7', 'in_head'], ['Fly on Monday', 'new'],
        ['Book the Alfama venue', 'repeated']]);
      assert.deepEqual(plan.review.tasks.map((d) => d.status), ['done', 'in_head', 'new']);
      assert.deepEqual(content(plan.checkpoint), expectedCarry());
      assert.equal(plan.changed, '+2 decisions, +1 task, 1 task done, +1 entity, new title, new summary');
      assert.equal((await expectStatus(srv, 'GET', '/repos/offsite/head', 200)).commit_hash, head.commit_hash, 'planning writes nothing');
      const r = await expectStatus(srv, 'POST', '/api/ops/draft.save', 200, { body: {
        job_id: job.job_id, parent: head.commit_hash,
        reject: { decisions: ['Fly on Monday'], tasks: ['Task 3'] },
        drop: { decisions: ['Decision 1'], entities: ['Alfama'] }, title: 'My title' } });
      const c = r.result.checkpoint;
      assert.deepEqual(c.decisions.map((d) => d.text), [...RICH.decisions.slice(1).map((d) => d.text), 'Book the Alfama venue']);
      assert.equal(c.tasks.find((t) => t.text === 'Task 3').status, 'open', 'a rejected done mark leaves the task open');
      assert.deepEqual(c.entities.map((e) => e.name), ['Lisbon', 'Priya', 'Alfama venue']);
      assert.equal(c.title, 'My title');
      assert.equal(c.summary, LATEST.summary);
      assert.equal(c.artifacts.length, 1);
      const bad = await request(srv, 'POST', '/api/ops/draft.plan', { body: { job_id: job.job_id, reject: { decisions: ['Not in the draft'] } } });
      assert.equal(bad.status, 422, bad.text);
      assert.match(bad.json.error.message, /the draft has no decision 'Not in the draft'/);
    });

    test('HTTP: replace writes exactly the draft', async () => {
      const { job } = await richAndDraft();
      const r = await request(srv, 'POST', `/v5/checkpoints/draft/${job.job_id}/save`, { body: { replace: true } });
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(content(r.json.checkpoint), { ...LATEST, decisions: LATEST.decisions.slice(0, 3) });
    });

    test('HTTP: a stale parent is refused with 409 and nothing is written', async () => {
      const { head, job } = await richAndDraft();
      await expectStatus(srv, 'POST', '/chat/commit', 201, { body: { repo_id: 'offsite', parent_commit_id: head.commit_hash, title: 'Meanwhile', decisions: ['Written meanwhile'] } });
      const now = await expectStatus(srv, 'GET', '/repos/offsite/head', 200);
      for (const replace of [false, true]) {
        const r = await request(srv, 'POST', `/v5/checkpoints/draft/${job.job_id}/save`, { body: { parent: head.commit_hash, replace } });
        assert.equal(r.status, 409, r.text);
        assert.equal(r.json.error.code, 'conflict');
      }
      assert.equal((await expectStatus(srv, 'GET', '/repos/offsite/head', 200)).commit_hash, now.commit_hash);
    });

    test('on an empty Space the draft is the first checkpoint, each item once', async () => {
      ok(st.db, ['space', 'create', 'fresh']);
      const fresh = (await ingestSession(srv, 'fresh', TRANSCRIPT)).id;
      fake.script([{ json: LATEST }]);
      const job = await draft(srv, { session_id: fresh });
      const plan = (await expectStatus(srv, 'POST', '/api/ops/draft.plan', 200, { body: { job_id: job.job_id } })).result;
      assert.equal(plan.parent, null);
      assert.deepEqual(plan.review.decisions.map((d) => d.status), ['new', 'new', 'new', 'repeated']);
      const r = await request(srv, 'POST', `/v5/checkpoints/draft/${job.job_id}/save`, { body: {} });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.json.checkpoint.parent_hash, null);
      assert.deepEqual(content(r.json.checkpoint), { ...LATEST, decisions: LATEST.decisions.slice(0, 3) });
    });

    test('CLI: --save keeps HEAD, --replace writes the draft, a stale --parent exits 4', async () => {
      const env = providerEnv(fake);
      let { head, job } = await richAndDraft();
      const saved = await okAsync(st.db, ['draft', '--job', job.job_id, '--save', '--json'], { env });
      assert.deepEqual(content(saved), expectedCarry());
      assert.equal(saved.parent_hash, head.commit_hash);
      ({ head, job } = await richAndDraft());
      const stale = await runAsync(st.db, ['draft', '--job', job.job_id, '--save', '--parent', saved.commit_hash], { env });
      assert.equal(stale.code, 4, stale.stderr);
      assert.equal(ok(st.db, ['head', 'offsite', '--json']).commit_hash, head.commit_hash);
      const out = await okAsync(st.db, ['draft', '--job', job.job_id, '--save', '--parent', head.commit_hash], { env });
      assert.match(out, /\nsaved the draft of job \S+ on top of HEAD as \[offsite [0-9a-f]{12}\] Venue booked\n \+2 decisions, \+1 task, 1 task done, \+1 entity, new title, new summary\n$/);
      ({ job } = await richAndDraft());
      const replaced = await okAsync(st.db, ['draft', '--job', job.job_id, '--save', '--replace', '--json'], { env });
      assert.deepEqual(content(replaced), { ...LATEST, decisions: LATEST.decisions.slice(0, 3) });
      const usage = await runAsync(st.db, ['draft', '--job', job.job_id, '--replace'], { env });
      assert.equal(usage.code, 2, 'replace only with --save');
    });
  });
}

// The one refusal of a list holding an item twice.
const DUP_TEXT = "decision 'Use Postgres' is already there (a list holds each item once)";
const DUP = new RegExp(`^${DUP_TEXT.replace(/[()]/g, '\\$&')}$`);

describe('duplicates: one rule on every surface', () => {
  let t;
  let srv;
  before(async () => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'db']);
    ok(t.db, ['checkpoint', 'create', 'db', '--title', 'Start', '--decision', 'Use Postgres']);
    srv = await startServer(t.db);
  });
  after(async () => {
    await srv?.stop();
    t?.cleanup();
  });

  const headHash = () => ok(t.db, ['head', 'db', '--json']).commit_hash;

  test('CLI: checkpoint create with an item twice and commit adding one HEAD has exit 2 alike', () => {
    const was = headHash();
    for (const args of [['checkpoint', 'create', 'db', '--replace', '--decision', 'Use Postgres', '--decision', 'Use Postgres'],
      ['commit', 'db', '--decision', 'Use Postgres'],
      ['commit', 'db', '--decision', 'Use SQLite', '--decision', 'Use Postgres']]) {
      const r = run(t.db, args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr.replace(/^smriti: /, '').trim(), DUP);
    }
    assert.equal(headHash(), was, 'nothing written');
  });

  test('HTTP: /chat/commit, checkpoint.create and checkpoint.update answer 422 with the same message', async () => {
    const was = headHash();
    const tries = [
      ['/chat/commit', { repo_id: 'db', title: 'x', decisions: ['Use Postgres', 'Use SQLite', 'Use Postgres'] }],
      ['/api/ops/checkpoint.create', { space: 'db', checkpoint: { decisions: [{ text: 'Use Postgres' }, 'Use Postgres'] } }],
      ['/api/ops/checkpoint.update', { space: 'db', add: { decisions: ['Use Postgres'] } }],
    ];
    for (const [path, body] of tries) {
      const r = await request(srv, 'POST', path, { body });
      assert.equal(r.status, 422, `${path}: ${r.text}`);
      assert.equal(r.json.error.code, 'unprocessable');
      assert.match(r.json.error.message, DUP);
    }
    assert.equal(headHash(), was, 'nothing written');
  });

  test('MCP: write_checkpoint and update_checkpoint are tool errors with the same message', async () => {
    const env = { SMRITI_DB: t.db };
    for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) if (process.env[k]) env[k] = process.env[k];
    const transport = new StdioClientTransport({ command: SMRITI_FULL, args: ['mcp'], env, stderr: 'pipe' });
    const client = new Client({ name: 'dup-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const was = headHash();
      for (const [name, args] of [['write_checkpoint', { space: 'db', title: 'x', decisions: ['Use Postgres', 'Use Postgres'] }],
        ['update_checkpoint', { space: 'db', add: { decisions: ['Use Postgres'] } }]]) {
        const res = await client.callTool({ name, arguments: args });
        assert.equal(res.isError, true, `${name}: ${JSON.stringify(res)}`);
        assert.equal(res.content[0].text, `unprocessable: ${DUP_TEXT}`, 'MCP names the code, then the same text');
      }
      assert.equal(headHash(), was, 'nothing written');
    } finally {
      await client.close();
    }
  });

  test('old data: a bundle holding duplicates imports with its hashes and can be written on', () => {
    const legacy = tempDb();
    try {
      const bundle = path.join(ROOT, 'tests/fixtures/legacy-duplicates.bundle');
      ok(legacy.db, ['import', bundle]);
      const head = ok(legacy.db, ['head', 'legacy', '--json']);
      assert.equal(head.commit_hash, 'd19b8f3d2a1364f60e0498775e56607ae80ad766decf7ea56b2c4e0e44de87d1');
      assert.deepEqual(head.decisions, [{ text: 'Use Postgres' }, { text: 'Use Postgres' }]);
      const next = ok(legacy.db, ['commit', 'legacy', '-m', 'Go on', '--decision', 'Use SQLite', '--json']);
      assert.deepEqual(next.decisions.map((d) => d.text), ['Use Postgres', 'Use Postgres', 'Use SQLite'],
        'a write on old data keeps it as it was');
      ok(legacy.db, ['restore', 'legacy', head.commit_hash]);
      assert.equal(ok(legacy.db, ['head', 'legacy', '--json']).decisions.length, 2, 'restore brings it back');
      assert.match(run(legacy.db, ['fsck']).stdout + run(legacy.db, ['fsck']).stderr, /./);
      assert.equal(run(legacy.db, ['fsck']).code, 0);
    } finally {
      legacy.cleanup();
    }
  });
});
