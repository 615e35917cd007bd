// authors.test.mjs -- every write records who made it (issue 24), on every
// transport and every write operation, on SQLite and, when SMRITI_TEST_PG
// is set, on PostgreSQL.
//
// The rule (ops/auth.h's ops_writer): the token's identity when there is
// one; else the author the caller gave; else the program's default, which
// for the CLI is what `smriti commit` uses (SMRITI_AUTHOR, USER, ...) and
// for a server is the server process's own, computed at start-up.  No
// write stores an empty author or reflog actor.  Each transport runs one
// scenario without naming an author (commit, patch, fork, merge, restore,
// a saved draft, an import) and the test reads what was stored: the
// checkpoint's author and the reflog row's actor.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tempDb, run, childEnv, SMRITI_FULL } from './helpers.mjs';
import { startServer, request, expectStatus } from './http-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';
import { providerEnv, TRANSCRIPT, EXTRACTED, draft, runAsync } from './draft-helpers.mjs';

const SERVER_USER = 'srv-default';   // USER of the server processes
const CLI_USER = 'cli-default';      // USER of the CLI and `smriti mcp` processes
const ADMIN = 'admin-secret-token-0123456789';
const PG = process.env.SMRITI_TEST_PG;

function full(db, args, env = {}) {
  return run(db, args, { bin: SMRITI_FULL, env: { USER: CLI_USER, ...env } });
}

function fullOk(db, args, env) {
  const r = full(db, args, env);
  if (r.code !== 0) throw new Error(`smriti ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return args.includes('--json') ? r.json() : r.stdout;
}

async function fullAsync(db, args, env = {}) {
  const r = await runAsync(db, args, { bin: SMRITI_FULL, env: { USER: CLI_USER, ...env } });
  if (r.code !== 0) throw new Error(`smriti ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r;
}

const head = (db, space) => fullOk(db, ['head', space, '--json']);
const lastActor = (db, space) => fullOk(db, ['reflog', space, '--json', '--limit', '1'])[0].actor;

let schemas = 0;
function pgStore() {
  const schema = `smriti_authors_${process.pid}_${++schemas}_${Math.floor(Math.random() * 1e6)}`;
  const psql = (sql) => spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', PG, '-c', sql], { encoding: 'utf8' });
  assert.equal(psql(`CREATE SCHEMA ${schema}`).status, 0);
  return {
    db: `${PG}${PG.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`,
    cleanup: () => psql(`DROP SCHEMA ${schema} CASCADE`),
  };
}

function sqliteStore() {
  const t = tempDb();
  return { db: t.db, cleanup: t.cleanup };
}

// Space p (by the local CLI, which is not under test here), a session in it
// for drafts, and Space p-imp imported from a bundle of its first
// checkpoint; returns the session's id and a newer bundle of p-imp, whose
// import fast-forwards (a move of the importer's own).
function prepare(db, p) {
  const scratch = tempDb();
  try {
    fullOk(db, ['space', 'create', p]);
    const talk = path.join(scratch.dir, 'talk.txt');
    writeFileSync(talk, TRANSCRIPT);
    const sessionId = fullOk(db, ['ingest', talk, '--space', p, '--json']).session.id;
    fullOk(scratch.db, ['space', 'create', `${p}-imp`]);
    fullOk(scratch.db, ['commit', `${p}-imp`, '-m', 'one', '--decision', 'one', '--author', 'setup']);
    const b1 = fullOk(scratch.db, ['export', `${p}-imp`]);
    fullOk(scratch.db, ['commit', `${p}-imp`, '-m', 'two', '--decision', 'two', '--author', 'setup']);
    const b2 = fullOk(scratch.db, ['export', `${p}-imp`]);
    const file = path.join(scratch.dir, 'b1.json');
    writeFileSync(file, b1);
    fullOk(db, ['import', file]);
    return { sessionId, bundle: b2 };
  } finally {
    scratch.cleanup();
  }
}

// The writes of one transport, none naming an author, and what each stored.
async function scenario(db, fake, p, T, want) {
  const alt = `${p}-alt`;
  const { sessionId, bundle } = prepare(db, p);
  const named = (what, space, author) => {
    const h = head(db, space);
    assert.equal(h.author, author, `${what}: the checkpoint's author`);
    assert.equal(lastActor(db, space), author, `${what}: the reflog's actor`);
    return h;
  };
  await T.commit(p);
  named('commit', p, want.author);
  await T.patch(p);
  named('patch', p, want.author);
  await T.fork(p, alt);
  assert.equal(lastActor(db, alt), want.mover, 'fork: the reflog actor');
  // one title on both lines: what this file checks is who merged (merge.test.mjs has the titles)
  fullOk(db, ['commit', p, '-m', 'Line', '--decision', 'main', '--author', 'setup']);
  fullOk(db, ['commit', alt, '-m', 'Line', '--decision', 'alt', '--author', 'setup']);
  await T.merge(p, alt);
  const m = named('merge', p, want.author);
  assert.ok(m.merge_parent_hash, 'a merge');
  assert.equal(m.title, want.title || `Merge ${alt} into ${p}`);
  // p~1 is the 'setup' line: a restore is named by who restores, not by who wrote what it brings back
  await T.restore(p, `${p}~1`);
  named('restore', p, want.author);
  if (T.draftSave) {
    fake.reset();
    fake.script([{ json: EXTRACTED }]);
    await T.draftSave(sessionId);
    named('draft save', p, want.author);
  }
  if (T.import) {
    await T.import(bundle);
    assert.equal(lastActor(db, `${p}-imp`), want.importer || want.mover, 'import: the reflog actor');
  }
  return m;
}

// The CLI with env (local, or remote with SMRITI_URL); draftEnv adds what a local draft needs.
function cliTransport(db, env, draftEnv = {}) {
  const cli = (args) => fullOk(db, args, env);
  return {
    commit: (p) => cli(['commit', '--replace', p, '-m', 'First', '--decision', 'base']),
    patch: (p) => cli(['commit', p, '--decision', 'patched']),
    fork: (p, alt) => cli(['fork', p, '--into', alt]),
    merge: (p, alt) => cli(['merge', p, alt]),
    restore: (p, ref) => cli(['restore', p, ref]),
    draftSave: (session) => fullAsync(db, ['draft', session, '--save'], { ...draftEnv, ...env }),
    import: (bundle) => {
      const r = run(db, ['import', '-'], { bin: SMRITI_FULL, input: bundle, env: { USER: CLI_USER, ...env } });
      assert.equal(r.code, 0, r.stderr);
    },
  };
}

// Plain HTTP, with headers (a bearer token) or without, and body (e.g. a claimed author).
function httpTransport(srv, headers = {}, extra = {}, importHeaders = headers) {
  const op = async (name, body, h = headers) =>
    (await expectStatus(srv, 'POST', `/api/ops/${name}`, 200, { body, headers: h })).result;
  return {
    commit: (p) => expectStatus(srv, 'POST', '/chat/commit', 201,
      { body: { repo_id: p, title: 'First', decisions: ['base'], ...extra }, headers }),
    patch: (p) => expectStatus(srv, 'PATCH', `/v4/repos/${p}/head`, 201,
      { body: { add: { decisions: ['patched'] }, ...extra }, headers }),
    fork: (p, alt) => op('fork', { ref: p, into: alt }),
    merge: (p, alt) => expectStatus(srv, 'POST', `/v4/repos/${p}/merge`, 200,
      { body: { ref: alt, ...extra }, headers }),
    restore: (p, ref) => op('restore', { space: p, ref, ...extra }),
    draftSave: async (session) => {
      const r = await request(srv, 'POST', '/v5/checkpoints/draft', { body: { session_id: session }, headers });
      assert.equal(r.status, 202, r.text);
      let job;
      for (;;) {
        job = await expectStatus(srv, 'GET', `/v5/checkpoints/draft/${r.json.job_id}`, 200, { headers });
        if (job.status === 'done' || job.status === 'failed') break;
        await new Promise((res) => setTimeout(res, 20));
      }
      assert.equal(job.status, 'done', JSON.stringify(job));
      return op('draft.save', { job_id: job.job_id, ...extra });
    },
    import: (bundle) => op('import', { bundle_text: bundle }, importHeaders),
  };
}

// MCP tools through a connected SDK client; title (if any) goes with the merge.
function mcpTransport(client, title) {
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r.content)}`);
    return r.structuredContent;
  };
  return {
    commit: (p) => call('write_checkpoint', { space: p, title: 'First', decisions: ['base'] }),
    patch: (p) => call('update_checkpoint', { space: p, add: { decisions: ['patched'] } }),
    fork: (p, alt) => call('fork', { ref: p, into: alt }),
    merge: (p, alt) => call('merge', { space: p, ref: alt, ...(title ? { title } : {}) }),
    restore: (p, ref) => call('restore', { space: p, ref }),
  };
}

function suite(kind, makeStore) {
  describe(`every write names who made it (${kind})`, { skip: kind === 'postgresql' && !PG ? 'SMRITI_TEST_PG is not set' : false }, () => {
    let store, fake, srv;
    before(async () => {
      fake = await startFakeProvider({ port: 0 });
      store = makeStore();
      srv = await startServer(store.db, { env: { ...providerEnv(fake), USER: SERVER_USER } });
    });
    after(async () => {
      await srv?.stop();
      await fake?.close();
      store?.cleanup();
    });

    test('local CLI: SMRITI_AUTHOR names every write, the merge too', async () => {
      await scenario(store.db, fake, 'cl', cliTransport(store.db, { SMRITI_AUTHOR: 'bob' }, providerEnv(fake)),
        { author: 'bob', mover: 'bob' });
      assert.match(fullOk(store.db, ['log', 'cl', '--limit', '3']), /Merge cl-alt into cl {2}\(bob\)/);
    });

    test('local CLI with no name in the environment: the account, never empty', () => {
      const env = { USER: '', LOGNAME: '', SMRITI_AUTHOR: '' };
      fullOk(store.db, ['space', 'create', 'anon']);
      fullOk(store.db, ['commit', 'anon', '-m', 'base', '--decision', 'x', '--author', 'setup']);
      fullOk(store.db, ['fork', 'anon', '--into', 'anon-alt'], env);
      const forker = lastActor(store.db, 'anon-alt');
      assert.notEqual(forker, '');
      fullOk(store.db, ['commit', 'anon', '-m', 'one', '--decision', 'y', '--author', 'setup']);
      fullOk(store.db, ['commit', 'anon-alt', '-m', 'one', '--decision', 'z', '--author', 'setup']);
      fullOk(store.db, ['merge', 'anon', 'anon-alt'], env);
      assert.equal(head(store.db, 'anon').author, forker);
    });

    test('remote CLI: the author it claims, else the server process\'s own', async () => {
      await scenario(store.db, fake, 'cr', cliTransport(store.db, { SMRITI_URL: srv.url, SMRITI_AUTHOR: 'bob' }),
        { author: 'bob', mover: SERVER_USER });
    });

    test('HTTP without a token and without an author: the server process\'s default', async () => {
      await scenario(store.db, fake, 'hn', httpTransport(srv), { author: SERVER_USER, mover: SERVER_USER });
      // and a Space's own moves: create, rename, delete
      await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'hn-space' } });
      assert.equal(lastActor(store.db, 'hn-space'), SERVER_USER);
      await expectStatus(srv, 'PATCH', '/v4/repos/hn-space', 200, { body: { name: 'hn-space2' } });
      assert.equal(lastActor(store.db, 'hn-space2'), SERVER_USER);
      await expectStatus(srv, 'DELETE', '/v4/repos/hn-space2', 200);
      assert.equal(lastActor(store.db, 'hn-space2'), SERVER_USER);
    });

    test('HTTP with an author in the body: that author', async () => {
      await scenario(store.db, fake, 'ha', httpTransport(srv, {}, { author: 'carol' }),
        { author: 'carol', mover: SERVER_USER });
    });

    test('MCP over stdio, a client that names nobody: the local user', async () => {
      const client = new Client({ name: '', version: '1.0.0' });
      await client.connect(new StdioClientTransport({
        command: SMRITI_FULL, args: ['mcp'], stderr: 'pipe',
        env: childEnv({ SMRITI_DB: store.db, USER: CLI_USER }),
      }));
      try {
        await scenario(store.db, fake, 'ms', mcpTransport(client), { author: CLI_USER, mover: CLI_USER });
      } finally {
        await client.close();
      }
    });

    test('MCP over Streamable HTTP: the server process\'s default; merge takes a title', async () => {
      const client = new Client({ name: 'http-agent', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`)));
      try {
        await scenario(store.db, fake, 'mh', mcpTransport(client, 'Joined over MCP'),
          { author: SERVER_USER, mover: SERVER_USER, title: 'Joined over MCP' });
      } finally {
        await client.close();
      }
    });
  });

  describe(`a signed-in caller is its token's identity (${kind})`, { skip: kind === 'postgresql' && !PG ? 'SMRITI_TEST_PG is not set' : false }, () => {
    let store, fake, srv, token;
    before(async () => {
      fake = await startFakeProvider({ port: 0 });
      store = makeStore();
      fullOk(store.db, ['user', 'add', 'ann']);
      token = fullOk(store.db, ['token', 'create', 'ann']).trim();
      srv = await startServer(store.db,
        { env: { ...providerEnv(fake), USER: SERVER_USER, SMRITI_TOKEN: ADMIN } });
    });
    after(async () => {
      await srv?.stop();
      await fake?.close();
      store?.cleanup();
    });

    test('HTTP with a token: its identity wins over a claimed author', async () => {
      const auth = { Authorization: `Bearer ${token}` };
      const T = httpTransport(srv, auth, { author: 'claimed' }, { Authorization: `Bearer ${ADMIN}` });
      const commit = T.commit;
      T.commit = async (p) => {
        fullOk(store.db, ['grant', 'ann', p, 'owner']);
        const c = await commit(p);
        assert.equal(c.metadata.author_tool, 'claimed', 'the claim is kept as a label');
        return c;
      };
      // the administrator's token has no identity: the server's default names the import
      await scenario(store.db, fake, 'ht', T, { author: 'ann', mover: 'ann', importer: SERVER_USER });
    });

    test('remote CLI with a token: its identity', async () => {
      const env = { SMRITI_URL: srv.url, SMRITI_TOKEN: token, SMRITI_AUTHOR: 'bob' };
      fullOk(store.db, ['space', 'create', 'rt']);
      fullOk(store.db, ['grant', 'ann', 'rt', 'owner']);
      fullOk(store.db, ['commit', 'rt', '-m', 'base', '--decision', 'x'], env);
      assert.equal(head(store.db, 'rt').author, 'ann');
      fullOk(store.db, ['fork', 'rt', '--into', 'rt-alt'], env);
      assert.equal(lastActor(store.db, 'rt-alt'), 'ann');
      fullOk(store.db, ['commit', 'rt', '-m', 'one', '--decision', 'y'], env);
      fullOk(store.db, ['commit', 'rt-alt', '-m', 'one', '--decision', 'z'], env);
      fullOk(store.db, ['merge', 'rt', 'rt-alt'], env);
      const m = head(store.db, 'rt');
      assert.equal(m.author, 'ann');
      assert.equal(m.metadata.author_tool, 'bob');
      assert.equal(m.title, 'Merge rt-alt into rt');
    });
  });
}

suite('sqlite', sqliteStore);
suite('postgresql', pgStore);
