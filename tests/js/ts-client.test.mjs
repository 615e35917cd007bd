// ts-client.test.mjs -- a TypeScript client generated from the served
// /openapi.json works without a cast: openapi-typescript writes the types
// from the live document, tsc --strict compiles tests/ts-client/ against them
// (workflow.ts: no cast, no `any`, no non-null assertion; precise.ts: what
// the types must refuse), and the compiled workflow runs against `smriti
// serve` through a whole workflow (a Space; checkpoints with items, tasks
// with status, artifacts and metadata; HEAD; diff; fork; merge; restore;
// search; blame; reflog; export and import), with every response it got
// checked against its route's schema in the same document.  On SQLite, and
// on PostgreSQL when SMRITI_TEST_PG is set.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, tempDb, pgSchemaDb } from './helpers.mjs';
import { startServer, expectStatus } from './http-helpers.mjs';
import { checkResponse, openapi } from './openapi-check.mjs';

const SRC = path.join(ROOT, 'tests/ts-client');
const SOURCES = ['workflow.ts', 'precise.ts', 'tsconfig.json'];
const BIN = path.join(ROOT, 'node_modules/.bin');

// Runs a tool of node_modules/.bin; fails the test with its output when it fails.
function tool(name, args, cwd) {
  const r = spawnSync(path.join(BIN, name), args, { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `${name} ${args.join(' ')}:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

// A directory with the client's sources, the types generated from url's
// document, and the compiled JavaScript under build/.
function buildClient(url) {
  const dir = mkdtempSync(path.join(tmpdir(), 'smriti-ts-'));
  for (const f of SOURCES) copyFileSync(path.join(SRC, f), path.join(dir, f));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  writeFileSync(path.join(dir, 'package.json'), '{"type": "module"}\n');
  try {
    tool('openapi-typescript', [`${url}/openapi.json`, '-o', 'schema.d.ts'], dir);
    tool('tsc', ['-p', '.'], dir);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return dir;
}

// The client of the document srv serves: built for the first server asked,
// then shared by every server serving the same document (it does not depend
// on the store), so tsc runs once per process.
let built = null;
async function clientFor(srv) {
  const doc = await expectStatus(srv, 'GET', '/openapi.json', 200);
  if (!built) built = { doc, dir: buildClient(srv.url) };
  assert.deepEqual(doc, built.doc, 'every server serves the same document');
  return built.dir;
}

// Every response the workflow reported, checked as the HTTP tests check theirs.
function checkAll(seen) {
  for (const s of seen) {
    let json = null;
    try { json = JSON.parse(s.text); } catch { /* not JSON: checkResponse says so */ }
    checkResponse(s.method, s.path, { status: s.status, headers: { 'content-type': s.contentType }, text: s.text, json });
  }
}

test('the client sources have no cast, no any, no non-null assertion and no ts-ignore', () => {
  const text = readFileSync(path.join(SRC, 'workflow.ts'), 'utf8')
    .replace(/\/\/.*$/gm, '').replace(/'[^'\n]*'|`[^`\n]*`/g, "''");
  assert.doesNotMatch(text, /\bas\s+(?!const\b)[A-Za-z{[(]/, 'a cast');
  assert.doesNotMatch(text, /\bany\b/, 'any');
  assert.doesNotMatch(text, /[\w)\]]!(?!=)/, 'a non-null assertion');
  assert.doesNotMatch(text, /@ts-|<[A-Z]\w*>\s*\w/, 'a directive or an angle-bracket cast');
  const precise = readFileSync(path.join(SRC, 'precise.ts'), 'utf8');
  assert.doesNotMatch(precise, /@ts-ignore|@ts-nocheck|\bany\b/);
  assert.ok((precise.match(/@ts-expect-error/g) ?? []).length >= 6, 'precise.ts checks what the types refuse');
});

function suite(name, makeDb) {
  describe(name, () => {
    let a;
    let b;
    let srv;
    let other;
    let dir;

    before(async () => {
      a = makeDb();
      b = makeDb();
      srv = await startServer(a.db, { args: ['--quiet'] });
      other = await startServer(b.db, { args: ['--quiet'] });
    });
    after(async () => {
      await srv?.stop();
      await other?.stop();
      a?.cleanup();
      b?.cleanup();
    });

    test('generated from the served document, it compiles with tsc --strict', async () => {
      // the document the responses are checked against is the one served
      assert.deepEqual(await expectStatus(srv, 'GET', '/openapi.json', 200), openapi().doc);
      dir = await clientFor(srv);
      const types = readFileSync(path.join(dir, 'schema.d.ts'), 'utf8');
      assert.match(types, /status\?: "open" \| "done"/);
    });

    test('runs a whole workflow; every response matches its schema', async () => {
      assert.ok(dir, 'the client was built');
      const { workflow } = await import(pathToFileURL(path.join(dir, 'build/workflow.js')).href);
      const seen = [];
      const s = await workflow({ baseUrl: srv.url, importUrl: other.url, report: (x) => seen.push(x) });
      assert.equal(seen.length, s.calls);
      assert.ok(seen.length >= 20, `${seen.length} calls`);
      checkAll(seen);
      assert.deepEqual(seen.filter((x) => x.status >= 400).map((x) => `${x.method} ${x.path.split('?')[0]} ${x.status}`),
        ['POST /v4/repos/typed/merge 409', 'GET /repos/no-such-space/head 404']);
      assert.deepEqual(s.conflictFields, ['summary']);
      assert.equal(s.missingCode, 'not_found');
      assert.equal(s.restored.title, 'Pick a database');
      assert.deepEqual(s.reflogActions.slice(0, 2), ['restore', 'merge']);
      assert.deepEqual(s.imported.spaces, ['typed', 'typed-wal']);
      assert.ok(s.searchHits >= 1);
      const ops = new Set(seen.map((x) => `${x.method} ${x.path.split('?')[0]}`));
      for (const r of ['POST /v4/repos', 'POST /chat/commit', 'POST /v4/repos/typed/commits', 'PATCH /v4/repos/typed/head',
        'GET /repos/typed/head', 'GET /v4/diff', 'POST /v4/repos/typed/fork', 'POST /v4/repos/typed/merge',
        'POST /v4/repos/typed/restore', 'GET /v4/search', 'GET /v4/blame', 'GET /v4/repos/typed/reflog',
        'GET /v4/export', 'POST /v4/import']) assert.ok(ops.has(r), `the workflow calls ${r}`);
    });
  });
}

after(() => { if (built) rmSync(built.dir, { recursive: true, force: true }); });

suite('SQLite', () => tempDb());
if (process.env.SMRITI_TEST_PG) suite('PostgreSQL', () => pgSchemaDb(process.env.SMRITI_TEST_PG, 'ts_client'));
