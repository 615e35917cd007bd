// prefer-minimal.test.mjs -- minimal answers to writes (issue 32), on SQLite
// and (with SMRITI_TEST_PG) PostgreSQL: a write route asked for
// `Prefer: return=minimal` (RFC 7240) answers 204 with no body,
// Preference-Applied and a Location naming what it wrote, and writes exactly
// what the whole answer would have; `return=representation` or no Prefer
// keeps the whole answer; failures, dry runs and reads are answered as ever;
// /openapi.json declares the header and the 204.  The CLI's --quiet on the
// write commands prints only the hash HEAD is at after the write, locally
// and against a server.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb, ok, run, pgSchemaDb, SMRITI_FULL } from './helpers.mjs';
import { startServer, request } from './http-helpers.mjs';
import { openapi } from './openapi-check.mjs';

const HASH = /^[0-9a-f]{64}$/;
const MINIMAL = { Prefer: 'return=minimal' };
// Insists on a minimal answer; returns the hash its Location names (/commits/HASH).
function minimalHash(r) {
  assert.equal(r.status, 204, r.text);
  assert.equal(r.text, '', 'a 204 has no body');
  assert.equal(r.headers['preference-applied'], 'return=minimal');
  const m = /^\/commits\/([0-9a-f]{64})$/.exec(r.headers.location || '');
  assert.ok(m, `Location names the checkpoint: ${r.headers.location}`);
  return m[1];
}

function suite(kind, makeDb) {
  describe(`Prefer: return=minimal and --quiet on ${kind}`, () => {
    let t;
    let server;
    before(async () => {
      t = makeDb();
      server = await startServer(t.db);
    });
    after(async () => {
      await server.stop();
      t.cleanup();
    });
    const cli = (args) => ok(t.db, args, { bin: SMRITI_FULL });
    const head = async (space) => (await request(server, 'GET', `/repos/${space}/head`)).json;

    async function space(name) {
      const r = await request(server, 'POST', '/v4/repos', { body: { name } });
      assert.equal(r.status, 201, r.text);
      return r.json;
    }

    test('PATCH head: 204 with Location of the new checkpoint, which is HEAD and holds the change', async () => {
      await space('patch-min');
      const first = await request(server, 'PATCH', '/v4/repos/patch-min/head',
        { body: { title: 'one', add: { decisions: [{ text: 'keep it small' }] } }, headers: MINIMAL });
      const h1 = minimalHash(first);
      const h2 = minimalHash(await request(server, 'PATCH', '/v4/repos/patch-min/head',
        { body: { parent: h1, add: { tasks: [{ text: 'measure', status: 'open' }] } }, headers: MINIMAL }));
      const now = await head('patch-min');
      assert.equal(now.commit_hash, h2);
      assert.equal(now.parent_hash, h1);
      assert.deepEqual(now.tasks.map((x) => x.text), ['measure']);
      const shown = await request(server, 'GET', first.headers.location);
      assert.equal(shown.status, 200);
      assert.equal(shown.json.commit_hash, h1);
    });

    test('no Prefer, return=representation or another preference alone: the whole answer, as before', async () => {
      await space('patch-full');
      const plain = await request(server, 'PATCH', '/v4/repos/patch-full/head',
        { body: { title: 'one', add: { decisions: [{ text: 'a' }] } } });
      assert.equal(plain.status, 201);
      assert.equal(plain.headers['preference-applied'], undefined);
      assert.match(plain.json.checkpoint.commit_hash, HASH);
      assert.ok(plain.json.changed);
      for (const prefer of ['return=representation', 'respond-async', 'return=minimalist', 'return=minimal-ish']) {
        const r = await request(server, 'PATCH', '/v4/repos/patch-full/head',
          { body: { add: { tasks: [{ text: prefer, status: 'open' }] } }, headers: { Prefer: prefer } });
        assert.equal(r.status, 201, prefer);
        assert.equal(r.headers['preference-applied'], undefined, prefer);
        assert.equal(r.json.checkpoint.commit_hash, (await head('patch-full')).commit_hash, prefer);
      }
    });

    test('the preference is read as RFC 7240 writes it: in a list, any case, quoted, with parameters', async () => {
      await space('patch-forms');
      for (const prefer of ['respond-async, return=minimal', 'RETURN=Minimal', 'return="minimal"',
        'return=minimal; foo=bar', 'wait=10,return=minimal']) {
        const h = minimalHash(await request(server, 'PATCH', '/v4/repos/patch-forms/head',
          { body: { add: { tasks: [{ text: prefer, status: 'open' }] } }, headers: { Prefer: prefer } }));
        assert.equal((await head('patch-forms')).commit_hash, h, prefer);
      }
    });

    test('every declared write route: commit (both routes), restore, merge, hand-off, fork', async () => {
      const sp = await space('routes-min');
      const c1 = minimalHash(await request(server, 'POST', '/chat/commit',
        { body: { repo_id: 'routes-min', title: 'one', decisions: [{ text: 'x' }] }, headers: MINIMAL }));
      const c2 = minimalHash(await request(server, 'POST', `/v4/repos/${sp.id}/commits`,
        { body: { parent: c1, checkpoint: { title: 'two', decisions: [{ text: 'y' }] } }, headers: MINIMAL }));
      assert.equal((await head('routes-min')).commit_hash, c2);
      const c3 = minimalHash(await request(server, 'POST', '/v4/repos/routes-min/restore',
        { body: { ref: c1 }, headers: MINIMAL }));
      const restored = await head('routes-min');
      assert.equal(restored.commit_hash, c3);
      assert.deepEqual(restored.decisions.map((d) => d.text), ['x']);

      const fork = await request(server, 'POST', `/v4/repos/${c3}/fork`,
        { body: { into: 'routes-fork' }, headers: MINIMAL });
      assert.equal(fork.status, 204, fork.text);
      assert.equal(fork.text, '');
      assert.equal(fork.headers['preference-applied'], 'return=minimal');
      const forked = await request(server, 'GET', fork.headers.location);
      assert.equal(forked.status, 200, `Location ${fork.headers.location} names the new Space`);
      assert.equal(forked.json.name, 'routes-fork');
      assert.equal(forked.json.head, c3);

      const f1 = minimalHash(await request(server, 'PATCH', '/v4/repos/routes-fork/head',
        { body: { add: { tasks: [{ text: 'on the fork', status: 'open' }] } }, headers: MINIMAL }));
      await request(server, 'PATCH', '/v4/repos/routes-min/head',
        { body: { add: { assumptions: [{ text: 'on main' }] } }, headers: MINIMAL });
      const m = minimalHash(await request(server, 'POST', '/v4/repos/routes-min/merge',
        { body: { ref: 'routes-fork' }, headers: MINIMAL }));
      const merged = await head('routes-min');
      assert.equal(merged.commit_hash, m);
      assert.equal(merged.merge_parent_hash, f1);

      const note = await request(server, 'POST', '/v4/repos/routes-min/handoff',
        { body: { note: 'read the merge first' }, headers: MINIMAL });
      assert.equal(minimalHash(note), m, 'a note is left on HEAD: its Location is HEAD');
      assert.equal((await head('routes-min')).handoff.note, 'read the merge first');
    });

    test('failures, dry runs and reads are answered in full whatever the client prefers', async () => {
      await space('edge-min');
      const h1 = minimalHash(await request(server, 'PATCH', '/v4/repos/edge-min/head',
        { body: { title: 'one', add: { decisions: [{ text: 'x' }] } }, headers: MINIMAL }));
      await request(server, 'PATCH', '/v4/repos/edge-min/head',
        { body: { add: { decisions: [{ text: 'y' }] } }, headers: MINIMAL });
      const stale = await request(server, 'PATCH', '/v4/repos/edge-min/head',
        { body: { parent: h1, add: { decisions: [{ text: 'z' }] } }, headers: MINIMAL });
      assert.equal(stale.status, 409);
      assert.equal(stale.json.error.code, 'conflict');
      assert.equal(stale.headers['preference-applied'], undefined);
      const bad = await request(server, 'PATCH', '/v4/repos/edge-min/head',
        { body: { add: { decisions: [{ text: 'x' }] } }, headers: MINIMAL });
      assert.equal(bad.status, 422, 'a duplicate item is refused');
      const dry = await request(server, 'POST', '/v4/repos/edge-min/merge',
        { body: { ref: h1, dry_run: true }, headers: MINIMAL });
      assert.equal(dry.status, 200, dry.text);
      assert.equal(dry.json.dry_run, true, 'a dry run wrote nothing to point at: its report is the answer');
      assert.equal(dry.headers['preference-applied'], undefined);
      const read = await request(server, 'GET', '/repos/edge-min/head', { headers: MINIMAL });
      assert.equal(read.status, 200);
      assert.equal(read.headers['preference-applied'], undefined);
      assert.match(read.json.commit_hash, HASH);
      const created = await request(server, 'POST', '/v4/repos', { body: { name: 'edge-new' }, headers: MINIMAL });
      assert.equal(created.status, 201, 'a route that declares no minimal answer answers in full');
      assert.equal(created.json.name, 'edge-new');
    });

    test('CLI --quiet: commit, restore, fork, merge and handoff print only the hash HEAD is at', () => {
      cli(['space', 'create', 'quiet']);
      const line = (args) => {
        const out = cli(args);
        assert.match(out, /^[0-9a-f]{64}\n$/, `smriti ${args.join(' ')} printed ${JSON.stringify(out)}`);
        return out.trim();
      };
      const headOf = (s) => cli(['head', s, '--json']).commit_hash;
      const h1 = line(['commit', 'quiet', '-m', 'one', '--decision', 'x', '--quiet']);
      assert.equal(headOf('quiet'), h1);
      const h2 = line(['commit', 'quiet', '--task', 'y', '--parent', h1, '-q']);
      assert.equal(headOf('quiet'), h2);
      const h3 = line(['checkpoint', 'create', 'quiet', '--replace', '-m', 'exact', '--decision', 'z', '-q']);
      assert.equal(headOf('quiet'), h3);
      const h4 = line(['restore', 'quiet', h1, '-q']);
      assert.equal(headOf('quiet'), h4);
      assert.equal(line(['fork', 'quiet', '--into', 'quiet-fork', '--quiet']), h4);
      line(['commit', 'quiet-fork', '--task', 'forked', '-q']);
      line(['commit', 'quiet', '--assumption', 'main moved', '-q']);
      const m = line(['merge', 'quiet', 'quiet-fork', '--quiet']);
      assert.equal(headOf('quiet'), m);
      assert.equal(line(['handoff', 'quiet', '-m', 'note', '-q']), m);
      assert.equal(line(['merge', 'quiet', 'quiet-fork', '-q']), m, 'already up to date: HEAD as it is');
    });

    test('CLI --quiet against a server (SMRITI_URL): the same one line', async () => {
      await space('quiet-remote');
      const r = run(t.db, ['commit', 'quiet-remote', '-m', 'one', '--decision', 'x', '-q'],
        { bin: SMRITI_FULL, env: { SMRITI_URL: server.url } });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^[0-9a-f]{64}\n$/);
      assert.equal((await head('quiet-remote')).commit_hash, r.stdout.trim());
    });

    test('CLI --quiet with --json, or merge --quiet --dry-run, is a usage error that writes nothing', () => {
      cli(['space', 'create', 'quiet-bad']);
      const h = cli(['commit', 'quiet-bad', '-m', 'one', '--decision', 'x', '-q']).trim();
      for (const args of [['commit', 'quiet-bad', '--task', 't', '--json', '--quiet'],
        ['restore', 'quiet-bad', h, '--json', '-q'],
        ['merge', 'quiet-bad', h, '--dry-run', '-q']]) {
        const r = run(t.db, args, { bin: SMRITI_FULL });
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.equal(r.stdout, '');
        assert.match(r.stderr, /--quiet/);
      }
      assert.equal(cli(['head', 'quiet-bad', '--json']).commit_hash, h);
    });
  });
}

test('/openapi.json declares the Prefer header and the 204 on the write routes that honour it', () => {
  const { doc } = openapi();
  const routes = [['patch', '/v4/repos/{id}/head'], ['post', '/chat/commit'], ['post', '/v4/repos/{id}/commits'],
    ['post', '/v4/repos/{id}/restore'], ['post', '/v4/repos/{id}/merge'], ['post', '/v4/repos/{id}/handoff'],
    ['post', '/v4/repos/{id}/fork']];
  for (const [method, path] of routes) {
    const op = doc.paths[path][method];
    const prefer = op.parameters.find((p) => p.name === 'Prefer');
    assert.equal(prefer?.in, 'header', `${method} ${path} declares Prefer`);
    assert.ok(op.responses['204'], `${method} ${path} declares its 204`);
    assert.ok(op.responses['204'].headers.Location, `${method} ${path}: Location`);
    assert.equal(op.responses['204'].headers['Preference-Applied'].schema.const, 'return=minimal');
  }
  assert.equal(doc.paths['/v4/repos'].post.responses['204'], undefined, 'creating a Space answers in full');
});

suite('SQLite', () => tempDb());
if (process.env.SMRITI_TEST_PG) suite('PostgreSQL', () => pgSchemaDb(process.env.SMRITI_TEST_PG, 'smriti_minimal'));
