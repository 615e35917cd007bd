// mcp-update.test.mjs -- two agents, each its own `smriti mcp` process
// driven by the official MCP SDK client, call update_checkpoint without a
// parent at the same moment, 200 times (40 under the sanitizers: helpers.mjs
// stress()): every item of both lands (the patch is read-modify-write inside
// one transaction), on SQLite and on PostgreSQL.  Also: the patch shape an
// agent sends, and a refused patch saving nothing.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { tempDb, ok, run, stress, SMRITI_FULL } from './helpers.mjs';

const ROUNDS = stress(200);
const PG = process.env.SMRITI_TEST_PG;

function serverEnv(extra) {
  const env = { ...extra };
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) if (process.env[k]) env[k] = process.env[k];
  return env;
}

async function agent(db, name) {
  const transport = new StdioClientTransport({
    command: SMRITI_FULL, args: ['mcp'], env: serverEnv({ SMRITI_DB: db }), stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', (d) => { stderr += d; });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  client.stderr = () => stderr;
  return client;
}

async function update(client, args) {
  const res = await client.callTool({ name: 'update_checkpoint', arguments: args });
  assert.notEqual(res.isError, true, JSON.stringify(res.content));
  return res.structuredContent;
}

async function twoAgents(db, cli) {
  ok(db, ['space', 'create', 'shared'], { bin: cli });
  ok(db, ['commit', 'shared', '-m', 'start', '--task', 'Keep going'], { bin: cli });
  const a = await agent(db, 'agent-a');
  const b = await agent(db, 'agent-b');
  try {
    for (let i = 0; i < ROUNDS; i++) {
      await Promise.all([
        update(a, { space: 'shared', add: { decisions: [`a${i}`] } }),
        update(b, { space: 'shared', add: { decisions: [`b${i}`] } }),
      ]);
    }
  } finally {
    await a.close();
    await b.close();
  }
  assert.doesNotMatch(a.stderr() + b.stderr(), /Sanitizer|runtime error/);
  const head = ok(db, ['head', 'shared', '--json'], { bin: cli });
  const texts = new Set(head.decisions.map((d) => d.text));
  assert.equal(texts.size, 2 * ROUNDS, 'no lost item');
  for (let i = 0; i < ROUNDS; i++) assert.ok(texts.has(`a${i}`) && texts.has(`b${i}`), `round ${i}`);
  assert.deepEqual(head.tasks, [{ text: 'Keep going', status: 'open' }], 'the rest carried forward');
  const fsck = ok(db, ['fsck', 'shared', '--json'], { bin: cli });
  assert.equal(fsck.ok, true);
  assert.equal(fsck.checkpoints, 2 * ROUNDS + 1, 'one checkpoint per call, none overwritten');
}

describe('update_checkpoint from two agents at once', () => {
  test('SQLite: no lost item', { timeout: 300000 }, async () => {
    const t = tempDb();
    try {
      await twoAgents(t.db);
    } finally {
      t.cleanup();
    }
  });

  test('PostgreSQL: no lost item', { timeout: 300000, skip: PG ? false : 'SMRITI_TEST_PG is not set' }, async () => {
    const schema = `smriti_mcpupd_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
    const psql = (sql) => spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', PG, '-c', sql], { encoding: 'utf8' });
    assert.equal(psql(`CREATE SCHEMA ${schema}`).status, 0);
    const dsn = `${PG}${PG.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`;
    try {
      await twoAgents(dsn, SMRITI_FULL);
    } finally {
      psql(`DROP SCHEMA ${schema} CASCADE`);
    }
  });
});

describe('merge as an agent calls it', () => {
  test('a conflict is an error result naming it; a resolution merges; again is up to date', async () => {
    const t = tempDb();
    const a = await agent(t.db, 'agent');
    try {
      ok(t.db, ['space', 'create', 'main-line']);
      ok(t.db, ['commit', 'main-line', '-m', 'start', '--decision', 'Use C']);
      ok(t.db, ['fork', 'main-line', '--into', 'experiment']);
      await update(a, { space: 'experiment', title: 'try Rust', summary: 'rust', add: { decisions: ['Try Rust'] } });
      await update(a, { space: 'main-line', title: 'stay', summary: 'c', add: { tasks: ['Ship'] } });
      const head = ok(t.db, ['head', 'main-line', '--json']);
      const c = await a.callTool({ name: 'merge', arguments: { space: 'main-line', ref: 'experiment' } });
      assert.equal(c.isError, true);
      // the titles differ too, but a title is never merged: only the summary conflicts
      assert.match(c.content[0].text, /^conflict: 1 conflict: summary; nothing was written/);
      assert.equal(ok(t.db, ['head', 'main-line', '--json']).commit_hash, head.commit_hash);
      const m = await a.callTool({ name: 'merge', arguments: { space: 'main-line', ref: 'experiment',
        resolution: { summary: 'theirs' }, title: 'Rust comes back' } });
      assert.notEqual(m.isError, true, JSON.stringify(m.content));
      assert.equal(m.structuredContent.status, 'merged');
      assert.equal(m.structuredContent.checkpoint.title, 'Rust comes back');
      assert.equal(m.structuredContent.checkpoint.summary, 'rust');
      assert.deepEqual(m.structuredContent.checkpoint.decisions.map((d) => d.text), ['Use C', 'Try Rust']);
      assert.deepEqual(m.structuredContent.checkpoint.tasks.map((d) => d.text), ['Ship']);
      assert.equal(m.structuredContent.checkpoint.author, 'agent');
      const again = await a.callTool({ name: 'merge', arguments: { space: 'main-line', ref: 'experiment' } });
      assert.equal(again.structuredContent.status, 'up-to-date');
    } finally {
      await a.close();
      t.cleanup();
    }
  });
});

describe('a merge dry run as an agent asks for it', () => {
  test('dry_run says whether it would merge cleanly, ahead/behind and the conflicts, and writes nothing; expect_head guards the merge after it', async () => {
    const t = tempDb();
    const a = await agent(t.db, 'agent');
    try {
      // listing the tools first makes the SDK check every result against its outputSchema
      const tool = (await a.listTools()).tools.find((x) => x.name === 'merge');
      assert.equal(tool.inputSchema.properties.dry_run.type, 'boolean');
      assert.equal(tool.inputSchema.properties.expect_head.type, 'string');
      for (const k of ['dry_run', 'ahead', 'behind', 'title']) assert.ok(tool.outputSchema.properties[k], k);
      ok(t.db, ['space', 'create', 'main-line']);
      ok(t.db, ['commit', 'main-line', '-m', 'start', '--decision', 'Use C']);
      ok(t.db, ['fork', 'main-line', '--into', 'experiment']);
      await update(a, { space: 'experiment', title: 'try Rust', add: { decisions: ['Try Rust'] } });
      const reflog = ok(t.db, ['reflog', 'main-line', '--json']).length;
      const clean = await a.callTool({ name: 'merge', arguments: { space: 'main-line', ref: 'experiment', dry_run: true } });
      assert.notEqual(clean.isError, true, JSON.stringify(clean.content));
      const s = clean.structuredContent;
      assert.deepEqual([s.status, s.dry_run, s.ahead, s.behind], ['fast-forward', true, 1, 0]);
      assert.deepEqual(s, ok(t.db, ['merge', 'main-line', 'experiment', '--dry-run', '--json']));
      // both lines move: a three-way merge, previewed with its title and state
      await update(a, { space: 'main-line', title: 'stay', add: { tasks: ['Ship'] } });
      const three = (await a.callTool({ name: 'merge', arguments: { space: 'main-line', ref: 'experiment', dry_run: true } })).structuredContent;
      assert.deepEqual([three.status, three.ahead, three.behind, three.title], ['merged', 1, 1, 'Merge experiment into main-line']);
      assert.deepEqual(three.checkpoint.decisions.map((d) => d.text), ['Use C', 'Try Rust']);
      // a conflict is the dry run's answer, not an error
      await update(a, { space: 'experiment', summary: 'rust' });
      await update(a, { space: 'main-line', summary: 'c' });
      const c = await a.callTool({ name: 'merge', arguments: { space: 'main-line', ref: 'experiment', dry_run: true } });
      assert.notEqual(c.isError, true, JSON.stringify(c.content));
      assert.equal(c.structuredContent.status, 'conflict');
      assert.deepEqual(c.structuredContent.conflicts.map((x) => x.field), ['summary']);
      // nothing was written by any dry run: the reflog moved only for the two updates
      assert.equal(ok(t.db, ['reflog', 'main-line', '--json']).length, reflog + 2);
      // the merge settled after the preview lands only on the HEAD the preview saw
      const head = ok(t.db, ['head', 'main-line', '--json']).commit_hash;
      await update(a, { space: 'main-line', add: { tasks: ['Test'] } });
      const moved = await a.callTool({ name: 'merge', arguments: { space: 'main-line', ref: 'experiment',
        resolution: { summary: 'theirs' }, expect_head: head } });
      assert.equal(moved.isError, true);
      assert.match(moved.content[0].text, /^conflict: HEAD of Space 'main-line' moved/);
      const now = ok(t.db, ['head', 'main-line', '--json']).commit_hash;
      const m = await a.callTool({ name: 'merge', arguments: { space: 'main-line', ref: 'experiment',
        resolution: { summary: 'theirs' }, expect_head: now } });
      assert.notEqual(m.isError, true, JSON.stringify(m.content));
      assert.equal(m.structuredContent.status, 'merged');
      const bad = await a.callTool({ name: 'merge', arguments: { space: 'main-line', ref: 'experiment', dry_run: 'yes' } });
      assert.equal(bad.isError, true);
    } finally {
      await a.close();
      t.cleanup();
    }
  });
});

describe('update_checkpoint as an agent sends it', () => {
  test('add, drop by position, done by text; a bad patch saves nothing', async () => {
    const t = tempDb();
    const a = await agent(t.db, 'agent');
    try {
      ok(t.db, ['space', 'create', 'plan']);
      const first = await update(a, { space: 'plan', title: 'Plan', add: { decisions: ['Use C', 'Use Go'], tasks: ['Write it'] } });
      assert.equal(first.changed, '+2 decisions, +1 task, new title');
      assert.equal(first.checkpoint.parent_hash, null);
      const second = await update(a, { space: 'plan', parent: first.checkpoint.commit_hash,
        drop: { decisions: [2] }, done: ['Write it'] });
      assert.equal(second.changed, '-1 decision, 1 task done');
      assert.deepEqual(second.checkpoint.decisions, [{ text: 'Use C' }]);
      assert.equal(second.checkpoint.title, 'Plan');
      const head = ok(t.db, ['head', 'plan', '--json']);
      for (const args of [{ space: 'plan', drop: { decisions: ['Use Rust'] } },
        { space: 'plan', add: { decisions: ['Use C'] } },
        { space: 'plan', parent: first.checkpoint.commit_hash, title: 'stale' }]) {
        const res = await a.callTool({ name: 'update_checkpoint', arguments: args });
        assert.equal(res.isError, true, JSON.stringify(args));
      }
      assert.equal(ok(t.db, ['head', 'plan', '--json']).commit_hash, head.commit_hash);
      const bad = await a.callTool({ name: 'update_checkpoint', arguments: { space: 'plan', drop: { colours: ['x'] } } });
      assert.equal(bad.isError, true);
      assert.match(bad.content[0].text, /invalid arguments/);
    } finally {
      await a.close();
      t.cleanup();
    }
  });
});
