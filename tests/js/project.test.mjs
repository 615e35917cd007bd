// project.test.mjs -- a project that knows its Space (issue 31): `smriti init`
// writes .smriti.json, found from any directory below it; `smriti status`
// says which file, Space and store are in force and where the store came
// from; every command that takes a SPACE (or a REF) uses the project's when
// none is named; and `smriti prime`, the agent's primer: the loop, HEAD, the
// last hand-off note and the open work, trimmed to --budget in the stated
// order, as text, JSON and hook replies.  On SQLite and (with
// SMRITI_TEST_PG) PostgreSQL.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { tempDb, childEnv, SMRITI, SMRITI_FULL } from './helpers.mjs';

let schemas = 0;
const LONG = 'Keep the schema flat: one row per checkpoint field, no nested tables, no JSON columns that a later migration would have to split again, and no triggers';
function pgDb(base) {
  const schema = `smriti_project_${process.pid}_${++schemas}_${Math.floor(Math.random() * 1e6)}`;
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

// Runs smriti in cwd with exactly env (no SMRITI_DB unless given).
function sm(cwd, args, { env = {}, input, bin = SMRITI } = {}) {
  const r = spawnSync(bin, args, { cwd, input, encoding: 'utf8', env: childEnv(env) });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
}
function must(cwd, args, opts) {
  const r = sm(cwd, args, opts);
  assert.equal(r.code, 0, `smriti ${args.join(' ')}: ${r.stderr}`);
  return r;
}

// A project directory with a subdirectory, and its database.
function project(store) {
  const t = tempDb();
  const dir = path.join(t.dir, 'proj');
  const sub = path.join(dir, 'src', 'deep');
  mkdirSync(sub, { recursive: true });
  mkdirSync(path.join(t.dir, 'home'));
  const home = path.join(t.dir, 'home');
  const db = store ? store.db : t.db;
  return { dir, sub, home, db, root: t.dir, cleanup: () => { t.cleanup(); store?.cleanup(); } };
}

function suite(name, makeStore, bin) {
  describe(`project file and prime (${name})`, () => {
    test('init writes the file, makes the Space, and status reports file, Space and store with its source', () => {
      const p = project(makeStore());
      try {
        const env = { HOME: p.home, SMRITI_DB: p.db };
        const r = must(p.dir, ['init', 'demo', '--json'], { env, bin });
        assert.deepEqual(r.json().created_space, true);
        const file = JSON.parse(readFileSync(path.join(p.dir, '.smriti.json'), 'utf8'));
        assert.deepEqual(file, { space: 'demo', db: p.db });
        // from a subdirectory, with no SMRITI_DB: the file names both
        const st = must(p.sub, ['status', '--json'], { env: { HOME: p.home }, bin }).json();
        assert.equal(st.project_file, path.join(p.dir, '.smriti.json'));
        assert.equal(st.space, 'demo');
        assert.deepEqual(st.store, { kind: 'database', name: p.db, from: 'project' });
        assert.equal(st.head, null);
        assert.match(st.problem, /no checkpoints yet/);
        const text = must(p.sub, ['status'], { env: { HOME: p.home }, bin }).stdout;
        assert.match(text, /project file: .*\.smriti\.json/);
        assert.match(text, /Space: +demo/);
        // init again: same Space, nothing to change; another Space needs --force
        assert.match(must(p.dir, ['init', 'demo'], { env, bin }).stdout, /Kept Space 'demo'/);
        const other = sm(p.dir, ['init', 'other'], { env, bin });
        assert.equal(other.code, 4);
        assert.match(other.stderr, /already names Space 'demo'.*--force/);
        assert.equal(JSON.parse(readFileSync(path.join(p.dir, '.smriti.json'), 'utf8')).space, 'demo');
        must(p.dir, ['init', 'other', '--force'], { env, bin });
        assert.equal(must(p.sub, ['status', '--json'], { env: { HOME: p.home }, bin }).json().space, 'other');
      } finally { p.cleanup(); }
    });

    test('the command line and the environment beat the file\'s store; the file beats the default', () => {
      const p = project(makeStore());
      const elsewhere = tempDb();
      try {
        must(p.dir, ['init', 'demo'], { env: { HOME: p.home, SMRITI_DB: p.db }, bin });
        const viaEnv = must(p.sub, ['status', '--json'], { env: { HOME: p.home, SMRITI_DB: elsewhere.db }, bin }).json();
        assert.deepEqual(viaEnv.store, { kind: 'database', name: elsewhere.db, from: 'SMRITI_DB' });
        const viaFlag = must(p.sub, ['--db', elsewhere.db, 'status', '--json'], { env: { HOME: p.home, SMRITI_DB: p.db }, bin }).json();
        assert.deepEqual(viaFlag.store, { kind: 'database', name: elsewhere.db, from: '--db' });
        // the Space still comes from the file: not found in the other store
        assert.equal(viaFlag.space, 'demo');
        assert.equal(sm(p.sub, ['--db', elsewhere.db, 'head'], { env: { HOME: p.home }, bin }).code, 3);
        // no db in the file: the default database
        writeFileSync(path.join(p.dir, '.smriti.json'), '{"space": "demo"}\n');
        const dflt = must(p.sub, ['status', '--json'], { env: { HOME: p.home }, bin }).json();
        assert.equal(dflt.store.from, 'default');
        assert.equal(dflt.store.name, path.join(p.home, '.local/share/smriti/smriti.db'));
      } finally { p.cleanup(); elsewhere.cleanup(); }
    });

    test('a broken project file stops commands with exit 2 and a way out; init --force repairs it', () => {
      const p = project(makeStore());
      try {
        writeFileSync(path.join(p.dir, '.smriti.json'), '{"space": ');
        const r = sm(p.sub, ['head'], { env: { HOME: p.home, SMRITI_DB: p.db }, bin });
        assert.equal(r.code, 2);
        assert.match(r.stderr, /\.smriti\.json is not a JSON object.*smriti init --force/);
        must(p.dir, ['init', 'demo', '--force'], { env: { HOME: p.home, SMRITI_DB: p.db }, bin });
        assert.equal(sm(p.sub, ['status'], { env: { HOME: p.home }, bin }).code, 0);
      } finally { p.cleanup(); }
    });

    test('commands use the project\'s Space when none is named, and say so when there is none', () => {
      const p = project(makeStore());
      try {
        const env = { HOME: p.home };
        must(p.dir, ['init', 'demo'], { env: { ...env, SMRITI_DB: p.db }, bin });
        const c1 = must(p.sub, ['checkpoint', 'create', '--title', 'one', '--decision', 'd1', '--json'], { env, bin }).json();
        assert.equal(c1.space, 'demo');
        const c2 = must(p.sub, ['commit', '--title', 'two', '--task', 't1', '--json'], { env, bin }).json();
        assert.equal(c2.space, 'demo');
        assert.equal(must(p.sub, ['head', '--json'], { env, bin }).json().commit_hash, c2.commit_hash);
        assert.equal(must(p.sub, ['show', '--json'], { env, bin }).json().commit_hash, c2.commit_hash);
        assert.equal(must(p.sub, ['log', '--json'], { env, bin }).json().length, 2);
        assert.equal(must(p.sub, ['reflog', '--json'], { env, bin }).json().length >= 2, true);
        assert.equal(must(p.sub, ['blame', '--json'], { env, bin }).json().commit_hash, c2.commit_hash);
        must(p.sub, ['handoff', '-m', 'next: finish t1', '--json'], { env, bin });
        assert.equal(must(p.sub, ['head', '--json'], { env, bin }).json().handoff.note, 'next: finish t1');
        const back = must(p.sub, ['restore', c1.commit_hash, '--json'], { env, bin }).json();
        assert.equal(back.space, 'demo');
        // a SPACE or REF on the command line still wins, whatever else is left out
        must(p.sub, ['space', 'create', 'other'], { env, bin });
        assert.equal(sm(p.sub, ['head', 'other'], { env, bin }).code, 3);
        const o = must(p.sub, ['commit', 'other', '--title', 'elsewhere', '--json'], { env, bin }).json();
        assert.deepEqual(must(p.sub, ['log', 'other', '--json'], { env, bin }).json().map((c) => c.commit_hash), [o.commit_hash]);
        must(p.sub, ['handoff', 'other', '-m', 'for other'], { env, bin });
        assert.equal(must(p.sub, ['head', 'other', '--json'], { env, bin }).json().handoff.note, 'for other');
        assert.equal(must(p.sub, ['head', '--json'], { env, bin }).json().handoff.note, 'next: finish t1');
        // fsck without a Space still checks the whole store
        assert.equal(must(p.sub, ['fsck', '--json'], { env, bin }).json().spaces, 2);
        // outside any project: a clear usage error naming init
        const outside = sm(p.root, ['head'], { env: { ...env, SMRITI_DB: p.db }, bin });
        assert.equal(outside.code, 2);
        assert.match(outside.stderr, /name a SPACE, or run 'smriti init SPACE'/);
        const nolog = sm(p.root, ['log'], { env: { ...env, SMRITI_DB: p.db }, bin });
        assert.equal(nolog.code, 2);
        assert.match(nolog.stderr, /name a REF, or run 'smriti init SPACE'/);
        const noshow = sm(p.root, ['show'], { env: { ...env, SMRITI_DB: p.db }, bin });
        assert.equal(noshow.code, 2);
        assert.match(noshow.stderr, /name a REF, or run 'smriti init SPACE'/);
      } finally { p.cleanup(); }
    });

    test('prime: the loop, HEAD, the last note and open work; --json; the trim order of --budget', () => {
      const p = project(makeStore());
      try {
        const env = { HOME: p.home };
        must(p.dir, ['init', 'demo'], { env: { ...env, SMRITI_DB: p.db }, bin });
        const empty = must(p.sub, ['prime'], { env, bin }).stdout;
        assert.match(empty, /# Smriti: Space 'demo'/);
        assert.match(empty, /HEAD: none yet/);
        const c = must(p.sub, ['checkpoint', 'create', '--title', 'Pick the store', '--summary',
          'We compared SQLite and PostgreSQL and chose SQLite for local use.',
          '--decision', 'Use SQLite locally', '--decision', LONG,
          '--task', 'Write the migration', '--task', 'Ship it', '--question', 'Do teams need PostgreSQL?',
          '--json'], { env, bin }).json();
        must(p.sub, ['checkpoint', 'create', '--done', 'Ship it'], { env, bin });
        must(p.sub, ['handoff', '-m', 'Migration half done: keep the foreign keys'], { env, bin });
        const text = must(p.sub, ['prime'], { env, bin }).stdout;
        for (const re of [/The hand-off loop:/, /1\. Read HEAD first/, /write a Checkpoint on the parent you read/,
          /conflict \(exit 4\)/, /`smriti handoff demo -m NOTE`/, /`smriti checkpoint create demo --parent HASH/, /HEAD: [0-9a-f]{12} "Pick the store"/,
          /Summary: We compared/, /Last hand-off note \(tester, .*\): Migration half done/,
          /Open tasks:\n- \[open\] Write the migration\n/, /Open questions:\n- Do teams need PostgreSQL\?/,
          /Decisions:\n- Use SQLite locally\n- Keep the schema flat/]) assert.match(text, re);
        assert.doesNotMatch(text, /Ship it/, 'a done task is not open work');
        assert.notEqual(c.commit_hash, undefined);
        const doc = must(p.sub, ['prime', '--json'], { env, bin }).json();
        assert.equal(doc.space, 'demo');
        assert.equal(doc.budget, 600);
        assert.ok(doc.tokens <= 600 && doc.tokens === Math.ceil([...doc.text].length / 4));
        assert.equal(doc.handoff.note, 'Migration half done: keep the foreign keys');
        assert.deepEqual(doc.open_tasks.map((t) => t.text), ['Write the migration']);
        assert.deepEqual(doc.omitted, { open_tasks: 0, open_questions: 0, decisions: 0, summary_cut: false });
        // decisions go first, the last one first
        const full = doc.tokens;
        const d1 = must(p.sub, ['prime', '--json', '--budget', String(full - 1)], { env, bin }).json();
        assert.deepEqual(d1.omitted, { open_tasks: 0, open_questions: 0, decisions: 1, summary_cut: false });
        assert.deepEqual(d1.decisions.map((d) => d.text), ['Use SQLite locally']);
        assert.match(d1.text, /\(Left out for length: 1 decisions; `smriti head` shows all\.\)/);
        // then questions, then tasks, then the summary; loop, HEAD and note always stay
        const tiny = must(p.sub, ['prime', '--json', '--budget', '50'], { env, bin }).json();
        assert.deepEqual(tiny.omitted, { open_tasks: 1, open_questions: 1, decisions: 2, summary_cut: true });
        assert.match(tiny.text, /The hand-off loop:/);
        assert.match(tiny.text, /HEAD: [0-9a-f]{12}/);
        assert.match(tiny.text, /Migration half done/);
        assert.doesNotMatch(tiny.text, /Summary:/);
        // a name that is not one shell word is quoted in the commands of the loop
        must(p.sub, ['space', 'create', "it's a trip"], { env, bin });
        assert.match(must(p.sub, ['prime', "it's a trip"], { env, bin }).stdout, /`smriti head 'it'\\''s a trip'`/);
        // the MCP form names tools
        assert.match(must(p.sub, ['prime', '--mcp'], { env, bin }).stdout, /tool read_head/);
        for (const bad of ['0', 'x', '-5']) assert.equal(sm(p.sub, ['prime', '--budget', bad], { env, bin }).code, 2);
        assert.equal(sm(p.sub, ['prime', '--budget', '10'], { env, bin }).code, 2, 'below the minimum of 50');
        assert.equal(sm(p.sub, ['prime', 'nosuch'], { env, bin }).code, 3);
      } finally { p.cleanup(); }
    });

    test('prime as a hook: each host\'s envelope, and a failure still starts the session', () => {
      const p = project(makeStore());
      try {
        const env = { HOME: p.home };
        must(p.dir, ['init', 'demo'], { env: { ...env, SMRITI_DB: p.db }, bin });
        must(p.sub, ['checkpoint', 'create', '--title', 'T', '--task', 'open one'], { env, bin });
        const plain = must(p.sub, ['prime'], { env, bin }).stdout;
        for (const host of ['claude', 'codex', 'gemini', 'vscode']) {
          const out = must(p.sub, ['prime', '--hook', host], { env, bin }).stdout;
          assert.equal(out.split('\n').filter(Boolean).length, 1, 'one line of JSON');
          assert.deepEqual(JSON.parse(out), { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: plain } });
        }
        assert.deepEqual(JSON.parse(must(p.sub, ['prime', '--hook', 'cursor'], { env, bin }).stdout), { additional_context: plain });
        // outside a project: exit 0 with the reason in the context
        const lost = must(p.root, ['prime', '--hook', 'claude'], { env: { ...env, SMRITI_DB: p.db }, bin });
        assert.match(JSON.parse(lost.stdout).hookSpecificOutput.additionalContext, /^Smriti: no Space/);
        assert.equal(sm(p.root, ['prime'], { env: { ...env, SMRITI_DB: p.db }, bin }).code, 2);
        assert.equal(sm(p.sub, ['prime', '--hook', 'emacs'], { env, bin }).code, 2);
        // the stop nudge: once, never again while the host says it already went on
        const first = must(p.sub, ['prime', '--stop-hook', 'claude'], { env, bin, input: '{"stop_hook_active":false}' }).stdout;
        assert.equal(JSON.parse(first).decision, 'block');
        assert.match(JSON.parse(first).reason, /write a Checkpoint on the HEAD you read/);
        assert.equal(must(p.sub, ['prime', '--stop-hook', 'claude'], { env, bin, input: '{"stop_hook_active":true}' }).stdout, '');
        assert.equal(JSON.parse(must(p.sub, ['prime', '--stop-hook', 'gemini'], { env, bin, input: '{}' }).stdout).decision, 'deny');
        assert.equal(JSON.parse(must(p.sub, ['prime', '--stop-hook', 'vscode'], { env, bin, input: '{}' }).stdout).hookSpecificOutput.decision, 'block');
        assert.ok(JSON.parse(must(p.sub, ['prime', '--stop-hook', 'cursor'], { env, bin, input: '{"loop_count":0}' }).stdout).followup_message);
        assert.equal(must(p.sub, ['prime', '--stop-hook', 'cursor'], { env, bin, input: '{"loop_count":1}' }).stdout, '');
        // nothing was written by a nudge
        assert.equal(must(p.sub, ['log', '--json'], { env, bin }).json().length, 1);
      } finally { p.cleanup(); }
    });
  });
}

suite('SQLite', () => null, SMRITI);
if (process.env.SMRITI_TEST_PG) suite('PostgreSQL', () => pgDb(process.env.SMRITI_TEST_PG), SMRITI_FULL);

test('init without a name takes the directory\'s; the project file is found from below', () => {
  const t = tempDb();
  try {
    const dir = path.join(t.dir, 'my-project');
    mkdirSync(path.join(dir, 'a', 'b'), { recursive: true });
    must(dir, ['init'], { env: { HOME: t.dir, SMRITI_DB: t.db } });
    assert.equal(JSON.parse(readFileSync(path.join(dir, '.smriti.json'), 'utf8')).space, 'my-project');
    assert.equal(must(path.join(dir, 'a', 'b'), ['status', '--json'], { env: { HOME: t.dir } }).json().space, 'my-project');
    assert.ok(!existsSync(path.join(t.dir, '.smriti.json')));
  } finally { t.cleanup(); }
});
