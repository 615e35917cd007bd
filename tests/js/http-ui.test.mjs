// http-ui.test.mjs -- what `smriti serve` adds for the web UI, over raw
// HTTP: the embedded files (security headers, ETag revalidation), the
// read-only views (graph with a fork and a restore, paging, overview, the
// change version that moves when the CLI writes, providers, what the model
// sees) and the token cookie.  Viewing never writes: every view leaves the
// change version where it was.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { ROOT } from './helpers.mjs';
import { tempDb, ok } from './helpers.mjs';
import { startServer, request, expectStatus, assertError } from './http-helpers.mjs';

let tmp;
let srv;

before(async () => {
  tmp = tempDb();
  ok(tmp.db, ['space', 'create', 'trip']);
  ok(tmp.db, ['checkpoint', 'create', 'trip', '--title', 'one', '--decision', 'd1']);
  ok(tmp.db, ['checkpoint', 'create', 'trip', '--title', 'two', '--decision', 'd2']);
  ok(tmp.db, ['fork', 'trip~1', '--into', 'trip-alt']);
  ok(tmp.db, ['checkpoint', 'create', 'trip-alt', '--title', 'alt three', '--task', 't']);
  ok(tmp.db, ['restore', 'trip', 'trip~1']);
  ok(tmp.db, ['space', 'create', 'other']);
  srv = await startServer(tmp.db, { args: ['--quiet'], env: { SMRITI_PROVIDER: 'openai' } });
});

after(async () => {
  await srv?.stop();
  tmp?.cleanup();
});

describe('UI files', () => {
  test('/ is the page, with a strict CSP and revalidation by ETag', async () => {
    const r = await request(srv, 'GET', '/');
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /^text\/html/);
    const csp = r.headers['content-security-policy'];
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.ok(!/unsafe-inline|unsafe-eval|https?:/.test(csp), csp);
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.equal(r.headers['referrer-policy'], 'no-referrer');
    assert.ok(!/<script>|<script [^>]*>[^<]/.test(r.text), 'no inline script');
    const again = await request(srv, 'GET', '/', { headers: { 'If-None-Match': r.headers.etag } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    const other = await request(srv, 'GET', '/', { headers: { 'If-None-Match': '"0000"' } });
    assert.equal(other.status, 200);
  });

  test('every file the page loads is served with its type; unknown files are 404', async () => {
    const js = await request(srv, 'GET', '/ui/app.js');
    assert.equal(js.status, 200);
    assert.match(js.headers['content-type'], /^text\/javascript/);
    const css = await request(srv, 'GET', '/ui/app.css');
    assert.match(css.headers['content-type'], /^text\/css/);
    assertError(await request(srv, 'GET', '/ui/nope.js'), 404, 'not_found');
    assertError(await request(srv, 'GET', '/ui/..%2Fserver.c'), 404, 'not_found');
  });
});

// A GET whose body stays bytes (request() decodes it as text).
function getBytes(p, headers = {}) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: srv.port, path: p, headers: { Host: srv.host, ...headers }, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

const uiNames = () => [...readdirSync(path.join(ROOT, 'src/ui')).filter((f) => /\.(html|css|js|svg)$/.test(f)),
  ...readdirSync(path.join(ROOT, 'src/ui/vendor')).filter((f) => f.endsWith('.mjs'))];

describe('UI files, compressed', () => {
  test('gzip when the client accepts it, the same bytes once unzipped, an ETag per encoding', async () => {
    const plain = await getBytes('/ui/app.js');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.match(plain.headers.vary || '', /Accept-Encoding/i);
    const gz = await getBytes('/ui/app.js', { 'Accept-Encoding': 'gzip, deflate' });
    assert.equal(gz.status, 200);
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.match(gz.headers.vary || '', /Accept-Encoding/i);
    assert.match(gz.headers['content-type'], /^text\/javascript/);
    assert.match(gz.headers['content-security-policy'], /default-src 'self'/);
    assert.equal(Number(gz.headers['content-length']), gz.body.length);
    assert.ok(gz.body.length < plain.body.length / 2, `${gz.body.length} of ${plain.body.length} bytes`);
    assert.deepEqual(gunzipSync(gz.body), plain.body);
    assert.notEqual(gz.headers.etag, plain.headers.etag, 'each encoding has its own ETag');
    // revalidation, per encoding
    const again = await getBytes('/ui/app.js', { 'Accept-Encoding': 'gzip', 'If-None-Match': gz.headers.etag });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    assert.equal(again.headers.etag, gz.headers.etag);
    const plainAgain = await getBytes('/ui/app.js', { 'If-None-Match': plain.headers.etag });
    assert.equal(plainAgain.status, 304);
    // a gzip ETag asked without gzip is another representation: the whole plain file
    const cross = await getBytes('/ui/app.js', { 'If-None-Match': gz.headers.etag });
    assert.equal(cross.status, 200);
    assert.deepEqual(cross.body, plain.body);
    // refused: gzip;q=0, identity only
    for (const ae of ['gzip;q=0', 'identity', 'zstd', 'gzip;q=0.000, *;q=0', 'br;q=0, gzip;q=0']) {
      const r = await getBytes('/ui/app.js', { 'Accept-Encoding': ae });
      assert.equal(r.headers['content-encoding'], undefined, ae);
      assert.deepEqual(r.body, plain.body, ae);
    }
    for (const ae of ['GZIP', 'deflate;q=1, gzip;q=0.5', 'x-gzip', 'br;q=0, gzip', 'br;q=0, *']) {
      const r = await getBytes('/ui/app.js', { 'Accept-Encoding': ae });
      assert.equal(r.headers['content-encoding'], 'gzip', ae);
    }
  });

  test('brotli before gzip when the client takes both, smaller, with its own ETag and 304', async () => {
    const plain = await getBytes('/ui/app.js');
    const gz = await getBytes('/ui/app.js', { 'Accept-Encoding': 'gzip' });
    for (const ae of ['gzip, deflate, br, zstd', 'br', 'BR;q=0.5', '*', 'gzip;q=1, br;q=0.1']) {
      const br = await getBytes('/ui/app.js', { 'Accept-Encoding': ae });
      assert.equal(br.status, 200, ae);
      assert.equal(br.headers['content-encoding'], 'br', ae);
      assert.match(br.headers.vary || '', /Accept-Encoding/i);
      assert.match(br.headers['content-security-policy'], /default-src 'self'/);
      assert.equal(Number(br.headers['content-length']), br.body.length);
      assert.deepEqual(brotliDecompressSync(br.body), plain.body, ae);
      assert.ok(br.body.length < gz.body.length, `${br.body.length} of gzip's ${gz.body.length} bytes`);
      assert.notEqual(br.headers.etag, gz.headers.etag);
      assert.notEqual(br.headers.etag, plain.headers.etag);
    }
    const br = await getBytes('/ui/app.js', { 'Accept-Encoding': 'br' });
    const again = await getBytes('/ui/app.js', { 'Accept-Encoding': 'br', 'If-None-Match': br.headers.etag });
    assert.equal(again.status, 304);
    assert.equal(again.headers.etag, br.headers.etag);
    assert.equal(again.headers['content-encoding'], 'br');
    // brotli's ETag asked by a gzip-only client is another representation
    const cross = await getBytes('/ui/app.js', { 'Accept-Encoding': 'gzip', 'If-None-Match': br.headers.etag });
    assert.equal(cross.status, 200);
    assert.equal(cross.headers['content-encoding'], 'gzip');
  });

  test('every UI file is served compressed, and the page is under 100 KB so', async () => {
    const decode = { gzip: gunzipSync, br: brotliDecompressSync };
    let raw = 0;
    const sent = { gzip: 0, br: 0 };
    for (const name of uiNames()) {
      const p = name === 'index.html' ? '/' : `/ui/${name}`;
      const plain = await getBytes(p);
      raw += plain.body.length;
      for (const coding of ['gzip', 'br']) {
        const z = await getBytes(p, { 'Accept-Encoding': coding });
        assert.equal(z.status, 200, name);
        const ce = z.headers['content-encoding'];
        assert.ok(ce === undefined || ce === coding, `${name}: ${ce}`);
        assert.deepEqual(ce ? decode[ce](z.body) : z.body, plain.body, name);
        sent[coding] += z.body.length;
      }
    }
    console.log(`# figure: UI files ${uiNames().length}, ${raw} bytes raw, ${sent.gzip} bytes sent gzip-compressed, ${sent.br} brotli-compressed`);
    // what a browser of today is sent (Chromium takes br on localhost and over HTTPS)
    assert.ok(sent.br < 100 * 1000, `${sent.br} bytes`);
  });
});

describe('views', () => {
  test('the graph holds the Space, its fork and the restore link, newest first', async () => {
    const g = await expectStatus(srv, 'GET', '/v4/repos/trip/graph', 200);
    assert.equal(g.nodes.length, 4);
    assert.equal(g.next, null);
    const titles = g.nodes.map((n) => n.title);
    assert.equal(titles[titles.length - 1], 'one');
    const restore = g.nodes.find((n) => n.restored_from);
    assert.deepEqual(restore.heads, ['trip']);
    const one = g.nodes.find((n) => n.title === 'one' && !n.restored_from);
    assert.equal(restore.restored_from, one.hash);
    assert.deepEqual(one.spaces.sort(), ['trip', 'trip-alt']);
    const alt = g.nodes.find((n) => n.title === 'alt three');
    assert.equal(alt.own, false);
    assert.deepEqual(alt.heads, ['trip-alt']);
    assert.equal(alt.parent, one.hash);
    // every node comes before its parent
    const at = new Map(g.nodes.map((n, i) => [n.hash, i]));
    for (const n of g.nodes) if (n.parent) assert.ok(at.get(n.parent) > at.get(n.hash));
  });

  test('pages: limit and after walk the same order; an unknown after is 404', async () => {
    const all = (await expectStatus(srv, 'GET', '/v4/repos/trip/graph', 200)).nodes;
    const p1 = await expectStatus(srv, 'GET', '/v4/repos/trip/graph?limit=3', 200);
    assert.equal(p1.nodes.length, 3);
    assert.equal(p1.next, p1.nodes[2].hash);
    const p2 = await expectStatus(srv, 'GET', `/v4/repos/trip/graph?limit=3&after=${p1.next}`, 200);
    assert.deepEqual([...p1.nodes, ...p2.nodes].map((n) => n.hash), all.map((n) => n.hash));
    assert.equal(p2.next, null);
    assertError(await request(srv, 'GET', `/v4/repos/trip/graph?after=${'a'.repeat(64)}`), 404);
    assertError(await request(srv, 'GET', '/v4/repos/nosuch/graph'), 404);
    const empty = await expectStatus(srv, 'GET', '/v4/repos/other/graph', 200);
    assert.deepEqual(empty.nodes, []);
  });

  test('changes=1: each node of a page counts what the diff against its first parent finds', async () => {
    const plain = await expectStatus(srv, 'GET', '/v4/repos/trip/graph?limit=2', 200);
    assert.ok(plain.nodes.every((n) => !('changes' in n)), 'only when asked');
    const g = await expectStatus(srv, 'GET', '/v4/repos/trip/graph?changes=1', 200);
    for (const n of g.nodes) {
      const d = n.parent ? (await expectStatus(srv, 'POST', '/api/ops/diff', 200, { body: { from: n.parent, to: n.hash } })).result : null;
      for (const f of ['decisions', 'assumptions', 'tasks', 'open_questions', 'entities', 'artifacts']) {
        const want = d ? d[f] : null;
        const got = n.changes[f];
        if (!d) continue;
        if (!want) { assert.equal(got, undefined, `${n.title} ${f}`); continue; }
        assert.deepEqual([got.added, got.removed, got.changed], [want.added.length, want.removed.length, want.changed.length], `${n.title} ${f}`);
      }
    }
    const first = g.nodes.find((n) => !n.parent);
    assert.ok(Object.keys(first.changes).length > 0, 'a first checkpoint adds what it holds');
    const p2 = await expectStatus(srv, 'GET', `/v4/repos/trip/graph?limit=2&changes=1&after=${plain.next}`, 200);
    assert.ok(p2.nodes.every((n) => n.changes), 'later pages too');
  });

  test('overview: HEAD title and author, sessions, last activity', async () => {
    const v = await expectStatus(srv, 'GET', '/v4/overview', 200);
    const trip = v.find((s) => s.name === 'trip');
    assert.equal(trip.head_checkpoint.title, 'one');
    assert.equal(trip.sessions, 0);
    assert.ok(trip.last_activity >= trip.created_at);
    assert.equal(v.find((s) => s.name === 'other').head_checkpoint, null);
  });

  test('overview: the most recently active first; limit takes the first; match filters name, description and HEAD title', async () => {
    ok(tmp.db, ['space', 'create', 'ov-quiet', '--description', 'Nothing Here Yet']);
    ok(tmp.db, ['space', 'create', 'ov-busy']);
    ok(tmp.db, ['checkpoint', 'create', 'ov-busy', '--title', 'Latency budget', '--decision', 'x']);
    const all = await expectStatus(srv, 'GET', '/v4/overview', 200);
    const order = all.map((s) => s.last_activity + s.name);
    assert.deepEqual(order, [...order].sort().reverse(), 'the most recently active first');
    assert.equal(all[0].name, 'ov-busy');
    assert.deepEqual(await expectStatus(srv, 'GET', '/v4/overview?limit=2', 200), all.slice(0, 2));
    assert.deepEqual((await expectStatus(srv, 'GET', '/v4/overview?match=LATENCY', 200)).map((s) => s.name), ['ov-busy']);
    assert.deepEqual((await expectStatus(srv, 'GET', '/v4/overview?match=here%20yet', 200)).map((s) => s.name), ['ov-quiet']);
    assert.deepEqual((await expectStatus(srv, 'GET', '/v4/overview?match=ov-&limit=1', 200)).map((s) => s.name), ['ov-busy']);
    assert.deepEqual(await expectStatus(srv, 'GET', '/v4/overview?match=no%20such%20thing', 200), []);
    assertError(await request(srv, 'GET', '/v4/overview?limit=-1'), 400);
    assertError(await request(srv, 'GET', '/v4/overview?match='), 400);
    ok(tmp.db, ['space', 'delete', 'ov-quiet', '--yes']);
    ok(tmp.db, ['space', 'delete', 'ov-busy', '--yes']);
  });

  test('the change version moves when the CLI writes, and not when anyone reads', async () => {
    const v0 = (await expectStatus(srv, 'GET', '/v4/changes?space=trip', 200)).version;
    await expectStatus(srv, 'GET', '/v4/repos/trip/graph', 200);
    await expectStatus(srv, 'GET', '/v4/overview', 200);
    assert.equal((await expectStatus(srv, 'GET', '/v4/changes?space=trip', 200)).version, v0);
    ok(tmp.db, ['checkpoint', 'create', 'trip', '--title', 'from an agent', '--decision', 'x']);
    const v1 = (await expectStatus(srv, 'GET', '/v4/changes?space=trip', 200)).version;
    assert.notEqual(v1, v0);
    await expectStatus(srv, 'POST', '/v4/repos/trip/sessions', 201, { body: { title: 's' } });
    assert.notEqual((await expectStatus(srv, 'GET', '/v4/changes?space=trip', 200)).version, v1);
    assertError(await request(srv, 'GET', '/v4/changes?space=nosuch'), 404);
  });

  test('providers: names, default models and whether configured, never a key', async () => {
    const p = await expectStatus(srv, 'GET', '/v4/providers', 200);
    assert.equal(p.default, 'openai');
    const openai = p.providers.find((x) => x.name === 'openai');
    assert.equal(openai.configured, false);
    assert.match(openai.reason, /OPENAI_API_KEY/);
    assert.equal(typeof openai.default_model, 'string');
  });

  test('what the model sees: the mounted checkpoint and only the turns after it', async () => {
    const s = await expectStatus(srv, 'POST', '/v4/repos/trip/sessions', 201, { body: {} });
    const head = await expectStatus(srv, 'GET', '/repos/trip/head', 200);
    const m = await expectStatus(srv, 'POST', `/v5/sessions/${s.id}/mount`, 201,
      { body: { commit_hash: head.commit_hash } });
    const c = await expectStatus(srv, 'GET', `/v4/sessions/${m.id}/context?model=gpt-4o`, 200);
    assert.equal(c.commit_hash, head.commit_hash);
    assert.equal(c.model, 'gpt-4o');
    assert.match(c.system, /from an agent/);
    assert.deepEqual(c.messages, [{ role: 'user', content: '', seq: 0 }]);
    // a session started on a checkpoint: mounted from its first turn
    const started = await expectStatus(srv, 'POST', '/v4/repos/trip/sessions', 201,
      { body: { title: 'from head', commit_hash: head.commit_hash.slice(0, 12) } });
    assert.equal(started.mounted_commit_hash, head.commit_hash);
    assert.equal(started.forked_from_session_id, null);
    const c2 = await expectStatus(srv, 'GET', `/v4/sessions/${started.id}/context`, 200);
    assert.equal(c2.commit_hash, head.commit_hash);
    assert.equal(c2.history_base_seq, 0);
    const alt = await expectStatus(srv, 'GET', '/repos/trip-alt/head', 200);
    assertError(await request(srv, 'POST', '/v4/repos/trip/sessions',
      { body: { commit_hash: alt.commit_hash } }), 422);
    assertError(await request(srv, 'GET', '/v4/sessions/nosuch/context'), 404);
    assertError(await request(srv, 'GET', `/v4/sessions/${m.id}/context?provider=nope`), 422);
  });
});

describe('token cookie', () => {
  const TOKEN = 'ui-test-token-123';
  let tsrv;
  let tdb;
  before(async () => {
    tdb = tempDb();
    tsrv = await startServer(tdb.db, { args: ['--quiet'], env: { SMRITI_TOKEN: TOKEN } });
  });
  after(async () => {
    await tsrv?.stop();
    tdb?.cleanup();
  });

  test('the page loads without the token; the API wants it; the cookie admits', async () => {
    assert.equal((await request(tsrv, 'GET', '/')).status, 200);
    assert.equal((await request(tsrv, 'GET', '/ui/app.js')).status, 200);
    assert.deepEqual((await request(tsrv, 'GET', '/v4/auth')).json,
      { token_required: true, authenticated: false, user: null });
    assertError(await request(tsrv, 'GET', '/v4/repos'), 401, 'unauthorized');
    const origin = `http://${tsrv.host}`;
    const wrong = await request(tsrv, 'POST', '/v4/auth', { body: { token: 'nope' }, headers: { Origin: origin } });
    assertError(wrong, 401);
    assert.equal(wrong.headers['set-cookie'], undefined);
    const good = await request(tsrv, 'POST', '/v4/auth', { body: { token: TOKEN }, headers: { Origin: origin } });
    assert.equal(good.status, 200);
    const cookie = good.headers['set-cookie'][0];
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    assert.ok(!cookie.includes(TOKEN), 'the cookie holds a hash, not the token');
    const jar = cookie.split(';')[0];
    assert.equal((await request(tsrv, 'GET', '/v4/repos', { headers: { Cookie: jar } })).status, 200);
    assert.deepEqual((await request(tsrv, 'GET', '/v4/auth', { headers: { Cookie: jar } })).json,
      { token_required: true, authenticated: true, user: { name: null, kind: 'admin', admin: true } });
    // writes with the cookie need our Origin; a foreign one is refused
    assertError(await request(tsrv, 'POST', '/v4/repos', { body: { name: 'x' }, headers: { Cookie: jar } }), 403);
    assertError(await request(tsrv, 'POST', '/v4/repos',
      { body: { name: 'x' }, headers: { Cookie: jar, Origin: 'http://evil.example' } }), 403);
    assert.equal((await request(tsrv, 'POST', '/v4/repos',
      { body: { name: 'x' }, headers: { Cookie: jar, Origin: origin } })).status, 201);
    assertError(await request(tsrv, 'GET', '/v4/repos', { headers: { Cookie: 'smriti_auth=' + '0'.repeat(64) } }), 401);
    const out = await request(tsrv, 'DELETE', '/v4/auth', { headers: { Origin: origin } });
    assert.match(out.headers['set-cookie'][0], /Max-Age=0/);
  });
});
