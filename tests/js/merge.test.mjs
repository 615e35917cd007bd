// merge.test.mjs -- `smriti merge` end to end: a merge without conflicts
// (two parents, the state item by item), with conflicts (named, exit 4,
// nothing written, then settled by --theirs or a resolution file), a fork
// merged back into its origin and the origin fast-forwarded into the fork,
// "already up to date", unrelated histories refused, contradictions of the
// merged state reported; titles never merged (a merge has its own, "Merge
// REF into SPACE" or -m), the summary merged three-way, the merge's author
// in log and git export; and the same over HTTP (PATCH .../head, POST
// .../merge with a 409 that lists the conflicts, a title); a dry run (would
// it merge cleanly, its conflicts, ahead/behind) that writes nothing, a
// resolution that edits an item, and a merge refused when HEAD moved since
// it was previewed.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDb, run, ok, SMRITI_FULL } from './helpers.mjs';
import { startServer, request, expectStatus } from './http-helpers.mjs';

const dump = (db) => execFileSync('sqlite3', [db, '.dump'], { encoding: 'utf8' })
    .split('\n').filter((l) => !l.startsWith('INSERT INTO servers ')).join('\n')  // a server's heartbeat moves;

describe('smriti merge', () => {
  let t;
  before(() => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'trip']);
    ok(t.db, ['commit', 'trip', '-m', 'Dates fixed', '--decision', 'Travel 3-10 April', '--task', 'Book flights',
      '--task', 'Book ryokan', '--question', 'Ryokan or hotel?', '--entity', 'Kyoto']);
    ok(t.db, ['fork', 'trip', '--into', 'trip-alt']);
  });
  after(() => t.cleanup());

  test('a fork merged back into its origin: two parents, item by item', () => {
    ok(t.db, ['commit', 'trip', '--decision', 'Fly via Helsinki', '--done', 'Book flights']);
    ok(t.db, ['commit', 'trip-alt', '--decision', 'Night train to Kyoto', '--drop', 'question=Ryokan or hotel?',
      '--done', 'Book ryokan']);
    const ours = ok(t.db, ['head', 'trip', '--json']);
    const theirs = ok(t.db, ['head', 'trip-alt', '--json']);
    const out = ok(t.db, ['merge', 'trip', 'trip-alt']);
    assert.match(out, /^\[trip [0-9a-f]{12}\] merged trip-alt \(common ancestor [0-9a-f]{12}\)\n$/);
    const m = ok(t.db, ['head', 'trip', '--json']);
    assert.equal(m.parent_hash, ours.commit_hash);
    assert.equal(m.merge_parent_hash, theirs.commit_hash);
    assert.deepEqual(m.decisions.map((d) => d.text), ['Travel 3-10 April', 'Fly via Helsinki', 'Night train to Kyoto']);
    assert.deepEqual(m.tasks, [{ text: 'Book flights', status: 'done' }, { text: 'Book ryokan', status: 'done' }]);
    assert.deepEqual(m.open_questions, [], 'dropped on one side, untouched on the other');
    assert.deepEqual(m.entities.map((e) => e.name), ['Kyoto']);
    assert.match(ok(t.db, ['show', 'trip']), /\nMerge: {3}[0-9a-f]{12} [0-9a-f]{12}\n/);
    // diff against either parent, the second as REF^2
    const d1 = ok(t.db, ['diff', 'trip^1', 'trip', '--json']);
    assert.deepEqual(d1.decisions.added.map((d) => d.text), ['Night train to Kyoto']);
    const d2 = ok(t.db, ['diff', 'trip^2', 'trip', '--json']);
    assert.deepEqual(d2.decisions.added.map((d) => d.text), ['Fly via Helsinki']);
    assert.equal(ok(t.db, ['show', 'trip^2', '--json']).commit_hash, theirs.commit_hash);
    const fsck = ok(t.db, ['fsck', '--json']);
    assert.equal(fsck.ok, true, JSON.stringify(fsck.problems));
  });

  test('merging again is a no-op; the origin fast-forwards the fork', () => {
    const head = ok(t.db, ['head', 'trip', '--json']);
    assert.match(ok(t.db, ['merge', 'trip', 'trip-alt']), /^already up to date: trip has everything of trip-alt\n$/);
    assert.match(ok(t.db, ['merge', 'trip', 'trip~1']), /already up to date/);
    assert.equal(ok(t.db, ['head', 'trip', '--json']).commit_hash, head.commit_hash);
    const ff = ok(t.db, ['merge', 'trip-alt', 'trip', '--json']);
    assert.equal(ff.status, 'fast-forward');
    assert.equal(ok(t.db, ['head', 'trip-alt', '--json']).commit_hash, head.commit_hash);
    assert.equal(ok(t.db, ['fsck', 'trip-alt', '--json']).ok, true);
  });

  test('conflicts are named and nothing is written until they are resolved', () => {
    ok(t.db, ['commit', 'trip', '-m', 'Hotel in Gion', '--drop', 'task=Book ryokan', '--summary', 'ours']);
    ok(t.db, ['commit', 'trip-alt', '-m', 'Ryokan in Arashiyama', '--reopen', 'Book ryokan', '--summary', 'theirs']);
    const before = dump(t.db);
    const r = run(t.db, ['merge', 'trip', 'trip-alt']);
    assert.equal(r.code, 4, r.stderr);
    assert.equal(r.stdout, '');
    // the titles differ too, but a title is never in conflict
    assert.match(r.stderr, /^smriti: 2 conflicts: summary, tasks 'Book ryokan'; nothing was written/);
    assert.match(r.stderr, /\n {2}summary: {2}ours: "ours"; {2}theirs: "theirs"\n/);
    assert.match(r.stderr, /\n {2}tasks 'Book ryokan': {2}ours: \(not there\); {2}theirs: \{"status":"open","text":"Book ryokan"\}\n/);
    assert.equal(dump(t.db), before);
    const j = run(t.db, ['merge', 'trip', 'trip-alt', '--json']);
    assert.equal(j.code, 4);
    assert.equal(j.json().status, 'conflict');
    assert.deepEqual(j.json().conflicts.map((c) => c.field), ['summary', 'tasks']);
    // half a resolution is still a conflict; a resolution of nothing in conflict is refused,
    // and so is one of the title, which never conflicts
    const half = path.join(t.dir, 'half.json');
    writeFileSync(half, JSON.stringify({ summary: 'ours' }));
    assert.equal(run(t.db, ['merge', 'trip', 'trip-alt', '--resolve', half]).code, 4);
    writeFileSync(half, JSON.stringify({ decisions: { 'Travel 3-10 April': 'ours' } }));
    assert.match(run(t.db, ['merge', 'trip', 'trip-alt', '--resolve', half]).stderr, /not in conflict/);
    writeFileSync(half, JSON.stringify({ title: 'ours', summary: 'ours', task: { 'Book ryokan': 'ours' } }));
    const titled = run(t.db, ['merge', 'trip', 'trip-alt', '--resolve', half]);
    assert.equal(titled.code, 2);
    assert.match(titled.stderr, /cannot name the title: titles are never merged/);
    assert.equal(dump(t.db), before);
    // one by one
    const file = path.join(t.dir, 'resolution.json');
    writeFileSync(file, JSON.stringify({ summary: 'ours', task: { 'Book ryokan': 'ours' } }));
    ok(t.db, ['merge', 'trip', 'trip-alt', '--resolve', file]);
    const m = ok(t.db, ['head', 'trip', '--json']);
    assert.equal(m.title, 'Merge trip-alt into trip');
    assert.equal(m.summary, 'ours');
    assert.ok(!m.tasks.some((x) => x.text === 'Book ryokan'));
    assert.equal(ok(t.db, ['fsck', '--json']).ok, true);
  });

  test('--ours and --theirs settle every conflict', () => {
    ok(t.db, ['commit', 'trip', '--summary', 'A']);
    ok(t.db, ['commit', 'trip-alt', '--summary', 'B']);
    ok(t.db, ['merge', 'trip', 'trip-alt', '--theirs']);
    assert.equal(ok(t.db, ['head', 'trip', '--json']).summary, 'B');
    assert.equal(run(t.db, ['merge', 'trip', 'trip-alt', '--ours', '--theirs']).code, 2);
  });

  test('the merged state is reviewed: contradictions are reported', () => {
    ok(t.db, ['commit', 'trip', '--decision', 'Use a rail pass']);
    ok(t.db, ['commit', 'trip-alt', '--decision', "Don't use a rail pass"]);
    const out = ok(t.db, ['merge', 'trip', 'trip-alt']);
    assert.match(out, /\nreview: 1 contradiction in the merged state:\n {2}- .*rail pass/);
    const res = ok(t.db, ['merge', 'trip-alt', 'trip', '--json']);
    assert.equal(res.status, 'fast-forward');
    assert.equal(res.contradictions.length, 1);
  });

  test('log shows merges; --graph draws them; --first-parent follows one line', () => {
    const all = ok(t.db, ['log', 'trip', '--json']);
    const first = ok(t.db, ['log', 'trip', '--first-parent', '--json']);
    assert.ok(all.length > first.length);
    assert.ok(first.every((c, i) => i === 0 || c.commit_hash === first[i - 1].parent_hash));
    assert.equal(new Set(all.map((c) => c.commit_hash)).size, all.length);
    const text = ok(t.db, ['log', 'trip']);
    assert.match(text, /^[0-9a-f]{12} .*\(merge [0-9a-f]{12} [0-9a-f]{12}\)/m);
    const graph = ok(t.db, ['log', 'trip', '--graph']);
    assert.match(graph, /^\*   [0-9a-f]{12} /m);
    assert.match(graph, /^\|\\ *$/m);
    assert.match(graph, /^\| \* [0-9a-f]{12} /m);
    assert.match(graph, /^\|\/ *$/m);
  });

  test('unrelated histories and bad arguments are refused', () => {
    ok(t.db, ['space', 'create', 'other']);
    ok(t.db, ['commit', 'other', '-m', 'elsewhere']);
    const before = dump(t.db);
    const r = run(t.db, ['merge', 'trip', 'other']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /shares no history with space 'trip'/);
    assert.equal(run(t.db, ['merge', 'trip']).code, 2);
    assert.equal(run(t.db, ['merge', 'nosuch', 'trip']).code, 3);
    assert.equal(run(t.db, ['merge', 'trip', 'nosuch']).code, 3);
    assert.equal(dump(t.db), before);
  });
});

describe('a title is the checkpoint\'s own message, never merged', () => {
  let t;
  before(() => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'trip']);
    ok(t.db, ['commit', 'trip', '-m', 'Dates fixed', '--decision', 'Travel 3-10 April', '--summary', 'Kyoto in April']);
    ok(t.db, ['fork', 'trip', '--into', 'trip-alt']);
  });
  after(() => t.cleanup());

  test('two lines that both moved, each with its own title, merge cleanly: "Merge trip-alt into trip"', () => {
    ok(t.db, ['commit', 'trip', '-m', 'Main line', '--decision', 'Fly via Helsinki']);
    ok(t.db, ['commit', 'trip-alt', '-m', 'Alt line', '--decision', 'Night train to Kyoto']);
    const r = run(t.db, ['merge', 'trip', 'trip-alt'], { env: { SMRITI_AUTHOR: 'bob' } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\[trip [0-9a-f]{12}\] merged trip-alt/);
    const m = ok(t.db, ['head', 'trip', '--json']);
    assert.equal(m.title, 'Merge trip-alt into trip');
    assert.equal(m.summary, 'Kyoto in April');
    assert.equal(m.author, 'bob');
    assert.deepEqual(m.decisions.map((d) => d.text), ['Travel 3-10 April', 'Fly via Helsinki', 'Night train to Kyoto']);
    assert.match(ok(t.db, ['log', 'trip', '--limit', '1']), /^[0-9a-f]{12} \S+ \S+ {2}Merge trip-alt into trip {2}\(bob\) {2}\(merge /);
  });

  test('-m and --title name the merge; an empty title is refused', () => {
    ok(t.db, ['commit', 'trip', '-m', 'Main again', '--decision', 'Stay in Gion']);
    ok(t.db, ['commit', 'trip-alt', '-m', 'Alt again', '--decision', 'Stay in Arashiyama']);
    const before = dump(t.db);
    for (const empty of ['', '  ']) {
      const r = run(t.db, ['merge', 'trip', 'trip-alt', '-m', empty]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /a merge title cannot be empty/);
    }
    assert.equal(dump(t.db), before);
    ok(t.db, ['merge', 'trip', 'trip-alt', '-m', 'Both places, two nights each']);
    assert.equal(ok(t.db, ['head', 'trip', '--json']).title, 'Both places, two nights each');
    ok(t.db, ['commit', 'trip', '-m', 'One more', '--decision', 'Rent bikes']);
    ok(t.db, ['commit', 'trip-alt', '-m', 'And another', '--decision', 'Walk']);
    ok(t.db, ['merge', 'trip', `${ok(t.db, ['head', 'trip-alt', '--json']).commit_hash.slice(0, 12)}`, '--title', 'By hash']);
    assert.equal(ok(t.db, ['head', 'trip', '--json']).title, 'By hash');
  });

  test('the summary is state: both sides changing it differently is a conflict naming summary', () => {
    ok(t.db, ['commit', 'trip', '-m', 'Ours', '--summary', 'Kyoto, then Osaka']);
    ok(t.db, ['commit', 'trip-alt', '-m', 'Theirs', '--summary', 'Kyoto, then Nara']);
    const before = dump(t.db);
    const r = run(t.db, ['merge', 'trip', 'trip-alt', '-m', 'Joined']);
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /^smriti: 1 conflict: summary; nothing was written/);
    assert.equal(dump(t.db), before);
    ok(t.db, ['merge', 'trip', 'trip-alt', '-m', 'Joined', '--theirs']);
    const m = ok(t.db, ['head', 'trip', '--json']);
    assert.equal(m.title, 'Joined');
    assert.equal(m.summary, 'Kyoto, then Nara');
  });

  test('export --git names the merge\'s author', () => {
    const dir = path.join(t.dir, 'repo');
    ok(t.db, ['export', '--git', dir, 'trip']);
    const merges = execFileSync('git', ['-C', dir, 'log', '--all', '--merges', '--format=%an|%s'], { encoding: 'utf8' });
    assert.match(merges, /^bob\|Merge trip-alt into trip$/m);
    assert.doesNotMatch(merges, /^unknown\|/m);
  });
});

describe('patch and merge over HTTP', () => {
  let t, srv;
  before(async () => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'web']);
    ok(t.db, ['commit', 'web', '-m', 'start', '--decision', 'Use C', '--task', 'Ship']);
    ok(t.db, ['fork', 'web', '--into', 'web-alt']);
    srv = await startServer(t.db);
  });
  after(async () => {
    await srv.stop();
    t.cleanup();
  });

  test('PATCH /v4/repos/{id}/head applies a patch to HEAD', async () => {
    const r = await expectStatus(srv, 'PATCH', '/v4/repos/web/head', 201,
      { body: { add: { decisions: ['Use SQLite'] }, done: [1], title: 'next' } });
    assert.equal(r.changed, '+1 decision, 1 task done, new title');
    assert.deepEqual(r.checkpoint.decisions.map((d) => d.text), ['Use C', 'Use SQLite']);
    const bad = await request(srv, 'PATCH', '/v4/repos/web/head', { body: { drop: { decisions: ['Use Go'] } } });
    assert.equal(bad.status, 422);
    const stale = await request(srv, 'PATCH', '/v4/repos/web/head',
      { body: { parent: r.checkpoint.parent_hash, title: 'late' } });
    assert.equal(stale.status, 409);
  });

  test('POST /v4/repos/{id}/merge: 409 with the conflicts, then merged', async () => {
    await expectStatus(srv, 'PATCH', '/v4/repos/web-alt/head', 201, { body: { title: 'alt', summary: 'theirs' } });
    await expectStatus(srv, 'PATCH', '/v4/repos/web/head', 201, { body: { summary: 'ours' } });
    const c = await request(srv, 'POST', '/v4/repos/web/merge', { body: { ref: 'web-alt' } });
    assert.equal(c.status, 409, c.text);
    assert.equal(c.json.error.code, 'conflict');
    assert.deepEqual(c.json.conflicts.map((x) => x.field), ['summary'], 'the titles differ, but never conflict');
    const m = await expectStatus(srv, 'POST', '/v4/repos/web/merge', 200,
      { body: { ref: 'web-alt', resolution: { summary: 'ours' } } });
    assert.equal(m.status, 'merged');
    assert.equal(m.checkpoint.title, 'Merge web-alt into web');
    assert.equal(m.checkpoint.summary, 'ours');
    assert.ok(m.checkpoint.merge_parent_hash);
  });

  test('two lines with different titles merge cleanly over HTTP, titled by the caller', async () => {
    await expectStatus(srv, 'PATCH', '/v4/repos/web/head', 201, { body: { title: 'Main line', add: { decisions: ['Use Make'] } } });
    await expectStatus(srv, 'PATCH', '/v4/repos/web-alt/head', 201, { body: { title: 'Hotfix', add: { decisions: ['Fix the build'] } } });
    const m = await expectStatus(srv, 'POST', '/v4/repos/web/merge', 200,
      { body: { ref: 'web-alt', title: 'Hotfix back into web' } });
    assert.equal(m.status, 'merged');
    assert.equal(m.checkpoint.title, 'Hotfix back into web');
    assert.ok(m.checkpoint.decisions.some((d) => d.text === 'Fix the build'));
    // the operation itself, as every transport reaches it
    await expectStatus(srv, 'PATCH', '/v4/repos/web/head', 201, { body: { title: 'Main again' } });
    await expectStatus(srv, 'PATCH', '/v4/repos/web-alt/head', 201, { body: { title: 'Alt again' } });
    const op = await expectStatus(srv, 'POST', '/api/ops/merge', 200, { body: { space: 'web', ref: 'web-alt' } });
    assert.equal(op.result.checkpoint.title, 'Merge web-alt into web');
    // an empty title is bad input, and writes nothing
    await expectStatus(srv, 'PATCH', '/v4/repos/web-alt/head', 201, { body: { title: 'Once more' } });
    const bad = await request(srv, 'POST', '/v4/repos/web/merge', { body: { ref: 'web-alt', title: ' ' } });
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.json.error.message, /merge title cannot be empty/);
    assert.equal((await expectStatus(srv, 'GET', '/repos/web/head', 200)).title, 'Merge web-alt into web');
  });
});

// A schema of its own in the PostgreSQL of SMRITI_TEST_PG: {db, drop}.
function pgSchema(prefix) {
  const PG = process.env.SMRITI_TEST_PG;
  const schema = `${prefix}_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
  const psql = (sql) => spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', PG, '-c', sql], { encoding: 'utf8' });
  assert.equal(psql(`CREATE SCHEMA ${schema}`).status, 0);
  return { db: `${PG}${PG.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`,
    drop: () => psql(`DROP SCHEMA ${schema} CASCADE`) };
}

// Every move of both Spaces' HEADs, as the server tells them: equal before and after means nothing was written.
async function movesOf(srv) {
  return Promise.all(['plan', 'plan-alt'].map((sp) => expectStatus(srv, 'GET', `/v4/repos/${sp}/reflog`, 200)));
}

function dryRunSuite(backend, skip) {
describe(`dry run, ahead/behind, edit and a moved HEAD over HTTP (${backend})`, { skip }, () => {
  let t, srv, db, dropSchema;
  before(async () => {
    t = tempDb();
    db = t.db;
    if (backend === 'postgres') ({ db, drop: dropSchema } = pgSchema('smriti_dry'));
    const cli = (args) => ok(db, args, { bin: SMRITI_FULL });
    cli(['space', 'create', 'plan']);
    cli(['commit', 'plan', '-m', 'start', '--decision', 'Use C', '--task', 'Ship', '--question', 'When?']);
    cli(['fork', 'plan', '--into', 'plan-alt']);
    srv = await startServer(db);
  });
  after(async () => {
    await srv?.stop();
    dropSchema?.();
    t.cleanup();
  });

  test('a dry run says clean or names the conflicts, counts ahead and behind, and writes nothing', async () => {
    const even = await expectStatus(srv, 'POST', '/v4/repos/plan/merge', 200, { body: { ref: 'plan-alt', dry_run: true } });
    assert.deepEqual([even.status, even.ahead, even.behind, even.dry_run], ['up-to-date', 0, 0, true]);
    await expectStatus(srv, 'PATCH', '/v4/repos/plan-alt/head', 201, { body: { add: { decisions: ['Use Make'] } } });
    await expectStatus(srv, 'PATCH', '/v4/repos/plan-alt/head', 201, { body: { add: { decisions: ['Use CI'] } } });
    const ff = await expectStatus(srv, 'POST', '/v4/repos/plan/merge', 200, { body: { ref: 'plan-alt', dry_run: true } });
    assert.deepEqual([ff.status, ff.ahead, ff.behind], ['fast-forward', 2, 0]);
    await expectStatus(srv, 'PATCH', '/v4/repos/plan/head', 201, { body: { add: { decisions: ['Use SQLite'] } } });
    const clean = await expectStatus(srv, 'POST', '/v4/repos/plan/merge', 200, { body: { ref: 'plan-alt', dry_run: true } });
    assert.deepEqual([clean.status, clean.ahead, clean.behind], ['merged', 2, 1]);
    assert.equal(clean.title, 'Merge plan-alt into plan');
    assert.equal(clean.checkpoint.commit_hash, null, 'not sealed: nothing was written');
    assert.deepEqual(clean.checkpoint.decisions.map((d) => d.text), ['Use C', 'Use SQLite', 'Use Make', 'Use CI']);
    // the other way round, ahead and behind swap
    const back = await expectStatus(srv, 'POST', '/v4/repos/plan-alt/merge', 200, { body: { ref: 'plan', dry_run: true } });
    assert.deepEqual([back.ahead, back.behind], [1, 2]);
    await expectStatus(srv, 'PATCH', '/v4/repos/plan/head', 201, { body: { summary: 'ours', done: [1] } });
    await expectStatus(srv, 'PATCH', '/v4/repos/plan-alt/head', 201, { body: { summary: 'theirs', drop: { tasks: ['Ship'] } } });
    const before = await movesOf(srv);
    const c = await expectStatus(srv, 'POST', '/v4/repos/plan/merge', 200, { body: { ref: 'plan-alt', dry_run: true } });
    assert.equal(c.status, 'conflict');
    assert.deepEqual(c.conflicts.map((x) => [x.field, x.item ?? null]), [['summary', null], ['tasks', 'Ship']]);
    assert.deepEqual(await movesOf(srv), before, 'a dry run writes nothing');
    const op = await expectStatus(srv, 'POST', '/api/ops/merge', 200, { body: { space: 'plan', ref: 'plan-alt', dry_run: true } });
    assert.equal(op.result.status, 'conflict');
    const bad = await request(srv, 'POST', '/v4/repos/plan/merge', { body: { ref: 'plan-alt', dry_run: 'yes' } });
    assert.equal(bad.status, 400, bad.text);
  });

  test('a resolution can edit an item; a merge against a HEAD that moved is refused', async () => {
    const head = (await expectStatus(srv, 'GET', '/repos/plan/head', 200)).commit_hash;
    const resolution = { summary: { edit: 'both, edited' }, tasks: { Ship: { edit: { text: 'Ship v2', status: 'open' } } } };
    const stale = await request(srv, 'POST', '/v4/repos/plan/merge',
      { body: { ref: 'plan-alt', resolution, expect_head: 'f'.repeat(64) } });
    assert.equal(stale.status, 409, stale.text);
    assert.match(stale.json.error.message, /HEAD of Space 'plan' moved/);
    assert.equal((await expectStatus(srv, 'GET', '/repos/plan/head', 200)).commit_hash, head);
    const badEdit = await request(srv, 'POST', '/v4/repos/plan/merge',
      { body: { ref: 'plan-alt', resolution: { summary: { edit: 3 }, tasks: { Ship: 'ours' } } } });
    assert.equal(badEdit.status, 400, badEdit.text);
    const m = await expectStatus(srv, 'POST', '/v4/repos/plan/merge', 200,
      { body: { ref: 'plan-alt', resolution, expect_head: head } });
    assert.equal(m.status, 'merged');
    assert.equal(m.checkpoint.summary, 'both, edited');
    assert.deepEqual(m.checkpoint.tasks, [{ text: 'Ship v2', status: 'open' }]);
    assert.equal(m.checkpoint.parent_hash, head);
  });

  test('space.forks answers every fork\'s origin and ahead/behind in one call, as a dry run counts them', async () => {
    const cli = (args) => ok(db, args, { bin: SMRITI_FULL });
    cli(['fork', 'plan-alt', '--into', 'plan-alt2']);
    cli(['commit', 'plan-alt2', '--decision', 'Use Zig']);
    cli(['space', 'create', 'gone']);
    cli(['commit', 'gone', '-m', 'soon gone']);
    cli(['fork', 'gone', '--into', 'gone-fork']);
    cli(['space', 'delete', 'gone', '--yes']);
    // its name is free again: a new Space under it is not what gone-fork came from
    cli(['space', 'create', 'gone']);
    cli(['commit', 'gone', '-m', 'another line']);
    const forks = (await expectStatus(srv, 'POST', '/api/ops/space.forks', 200, { body: {} })).result
      .sort((a, b) => a.space.localeCompare(b.space));
    // plan is no fork; gone-fork's origin is no more (the gone there now never held its fork point)
    assert.deepEqual(forks.map((f) => [f.space, f.origin]), [['plan-alt', 'plan'], ['plan-alt2', 'plan-alt']]);
    for (const f of forks) {
      const dry = await expectStatus(srv, 'POST', `/v4/repos/${f.origin}/merge`, 200, { body: { ref: f.space, dry_run: true } });
      assert.deepEqual([f.ahead, f.behind], [dry.ahead, dry.behind], f.space);
    }
    assert.deepEqual([forks[1].ahead, forks[1].behind], [1, 0]);
  });

  test('space.forks reads the reflog of the forked Spaces alone, not of every Space', async () => {
    const cli = (args) => ok(db, args, { bin: SMRITI_FULL });
    for (let i = 0; i < 12; i++) cli(['space', 'create', `plain-${i}`]);
    const traced = await startServer(db, { env: { SMRITI_STORE_TRACE: '1' } });
    try {
      const before = traced.log().length;
      const forks = (await expectStatus(traced, 'POST', '/api/ops/space.forks', 200, { body: {} })).result;
      assert.deepEqual(forks.map((f) => f.space).sort(), ['plan-alt', 'plan-alt2']);
      // the server's standard error is a pipe read apart from the answer: a later call's line marks the end
      await expectStatus(traced, 'GET', '/v4/overview', 200);
      for (let i = 0; i < 200 && !traced.log().slice(before).includes('summing up spaces'); i++) await new Promise((r) => setTimeout(r, 10));
      const reads = traced.log().slice(before).split('\n').filter((l) => /: sql_text reading the reflog ok/.test(l));
      // plan-alt, plan-alt2 and gone-fork (its origin is gone): 3 of 18 Spaces
      assert.equal(reads.length, 3, traced.log().slice(before));
    } finally {
      await traced.stop();
    }
  });
});
}

dryRunSuite('sqlite', false);
dryRunSuite('postgres', process.env.SMRITI_TEST_PG ? false : 'SMRITI_TEST_PG is not set');

// The same session of commits and merges on SQLite and on PostgreSQL: the
// outputs agree once hashes and times are replaced by placeholders (hashes
// cover the time, so they differ between runs; their pattern must not).
describe('SQLite and PostgreSQL agree', () => {
  const PG = process.env.SMRITI_TEST_PG;

  function normalize(text) {
    const seen = new Map();
    const tag = (h) => {
      if (!seen.has(h)) seen.set(h, `<H${seen.size}>`);
      return seen.get(h);
    };
    return text.replace(/\b[0-9a-f]{64}\b/g, (m) => tag(m.slice(0, 12)))
      .replace(/\b[0-9a-f]{12}\b/g, tag)
      .replace(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?Z?/g, '<TIME>');
  }

  function session(db) {
    const out = [];
    const step = (args) => {
      const r = run(db, args, { bin: SMRITI_FULL });
      out.push(`${args.join(' ')} -> ${r.code}\n${normalize(r.stdout)}${normalize(r.stderr)}`);
    };
    step(['space', 'create', 'p']);
    step(['commit', 'p', '-m', 'base', '--decision', 'Use C', '--task', 'Ship', '--question', 'When?']);
    step(['fork', 'p', '--into', 'q']);
    step(['commit', 'p', '--decision', 'Use SQLite', '--done', 'Ship']);
    step(['commit', 'q', '--decision', 'Use PostgreSQL', '--drop', 'question=1']);
    step(['merge', 'p', 'q', '--dry-run']);
    step(['merge', 'p', 'q']);
    step(['commit', 'q', '-m', 'q title', '--summary', 'q summary']);
    step(['commit', 'p', '-m', 'p title', '--summary', 'p summary']);
    step(['merge', 'p', 'q', '--dry-run', '--json']);
    step(['merge', 'p', 'q', '--dry-run']);
    step(['merge', 'p', 'q']);
    step(['merge', 'p', 'q', '--ours', '-m', 'Settled']);
    step(['merge', 'q', 'p']);
    step(['log', 'p', '--graph']);
    step(['show', 'p^2']);
    step(['diff', 'p^1', 'p']);
    step(['fsck']);
    return out;
  }

  test('one session, two stores, the same answers', { skip: PG ? false : 'SMRITI_TEST_PG is not set' }, () => {
    const t = tempDb();
    const schema = `smriti_merge_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
    const psql = (sql) => spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', PG, '-c', sql], { encoding: 'utf8' });
    assert.equal(psql(`CREATE SCHEMA ${schema}`).status, 0);
    try {
      const lite = session(t.db);
      const pg = session(`${PG}${PG.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`);
      assert.deepEqual(pg, lite);
      assert.match(lite.at(-1), /^fsck -> 0\n/);
      assert.match(lite.join('\n'), /merge p q -> 4\n/);
      assert.match(lite.join('\n'), /merge p q --dry-run -> 0\nq is 1 ahead of and 1 behind p\nwould merge cleanly/);
      assert.match(lite.join('\n'), /merge p q --dry-run -> 0\nq is 1 ahead of and 3 behind p\nwould not merge cleanly: 1 conflict \(nothing written\)\n {2}summary:/);
    } finally {
      psql(`DROP SCHEMA ${schema} CASCADE`);
      t.cleanup();
    }
  });
});
