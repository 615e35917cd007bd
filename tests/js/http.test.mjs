// http.test.mjs -- end-to-end tests of `smriti serve`: every route of the
// Spaces/Checkpoints API and the agent surface against a real server on
// loopback and a temporary SQLite database, the error contract, and the
// security defaults (Host, Origin, Content-Type, bearer token, body cap).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { tempDb, childEnv, SMRITI_FULL } from './helpers.mjs';
import { startServer, request, expectStatus, assertError } from './http-helpers.mjs';

let tmp;
let srv;

before(async () => {
  tmp = tempDb();
  srv = await startServer(tmp.db);
});

after(async () => {
  await srv?.stop();
  tmp?.cleanup();
});

// The state of every Space, to assert that a refused request wrote nothing.
async function snapshot() {
  const spaces = await expectStatus(srv, 'GET', '/v4/repos', 200);
  const out = [];
  for (const s of spaces) {
    const log = await expectStatus(srv, 'GET', `/v4/repos/${s.id}/commits`, 200);
    out.push({ ...s, log: log.map((c) => c.commit_hash) });
  }
  return JSON.stringify(out);
}

const commitBody = (repo, extra = {}) => ({
  repo_id: repo, title: 'first', summary: 'the summary', decisions: ['use C'],
  assumptions: ['loopback only'], tasks: [{ text: 'write tests', status: 'open' }],
  open_questions: ['which port?'], entities: [{ name: 'smriti' }],
  artifacts: [{ name: 'plan.md', kind: 'text', content: 'step 1' }],
  metadata: { tool: 'test' }, author: 'agent-a', ...extra,
});

describe('health and documentation', () => {
  test('GET /healthz names the store', async () => {
    const r = await request(srv, 'GET', '/healthz');
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { ok: true, store: 'sqlite' });
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
  });

  test('HEAD is answered like GET without a body', async () => {
    const r = await request(srv, 'HEAD', '/healthz');
    assert.equal(r.status, 200);
    assert.equal(r.text, '');
  });

  test('/openapi.json documents the routes, and every documented route is served', async () => {
    const doc = await expectStatus(srv, 'GET', '/openapi.json', 200);
    assert.equal(doc.openapi, '3.1.0');
    const routes = [
      ['get', '/healthz'], ['get', '/openapi.json'], ['post', '/api/ops/{op}'],
      ['get', '/v4/repos'], ['post', '/v4/repos'], ['get', '/v4/repos/{id}'],
      ['patch', '/v4/repos/{id}'], ['delete', '/v4/repos/{id}'],
      ['get', '/v4/repos/{id}/commits'], ['get', '/v4/repos/{id}/sessions'],
      ['patch', '/v4/repos/{id}/head'], ['post', '/v4/repos/{id}/merge'],
      ['post', '/v4/repos/{id}/sessions'], ['get', '/v4/sessions/{id}'],
      ['post', '/v4/chat/send'], ['post', '/v5/sessions/{id}/mount'],
      ['get', '/repos/{id}/head'], ['get', '/commits/{hash}'], ['post', '/chat/commit'],
      ['post', '/mcp'], ['post', '/v5/checkpoints/draft'], ['get', '/v5/checkpoints/draft/{job_id}'],
      ['post', '/v5/checkpoints/{hash}/review'], ['post', '/v1/ingest'], ['post', '/v1/context-pack'],
    ];
    for (const [m, p] of routes) {
      assert.ok(doc.paths[p]?.[m], `${m} ${p} missing from openapi.json`);
      assert.ok(doc.paths[p][m].responses, `${m} ${p} has no responses`);
    }
    // (tests/unit/test_http.c checks the other direction on the table itself)
    for (const [p, item] of Object.entries(doc.paths)) {
      for (const m of Object.keys(item)) {
        // A documented route must be routed: never a 404 "no route" or a 405.
        const concrete = p.replace(/\{op\}/, 'space.list').replace(/\{hash\}/, 'abcd')
          .replace(/\{[a-z_]+\}/, 'nosuch');
        const r = await request(srv, m.toUpperCase(), concrete, { body: m === 'get' ? undefined : {} });
        assert.notEqual(r.status, 405, `${m} ${p}`);
        assert.ok(!(r.status === 404 && /no route/.test(r.json?.error?.message)), `${m} ${p} not routed`);
      }
    }
  });
});

describe('V4 Spaces', () => {
  test('create, list, get by id and name, rename, commits, delete', async () => {
    const created = await expectStatus(srv, 'POST', '/v4/repos', 201,
      { body: { name: 'alpha', description: 'first space' } });
    assert.equal(created.name, 'alpha');
    assert.equal(created.description, 'first space');
    assert.equal(created.head, null);
    assert.match(created.id, /^[0-9a-f-]{36}$/);

    const list = await expectStatus(srv, 'GET', '/v4/repos', 200);
    assert.ok(list.some((s) => s.id === created.id && s.name === 'alpha'));

    assert.deepEqual(await expectStatus(srv, 'GET', `/v4/repos/${created.id}`, 200), created);
    assert.deepEqual(await expectStatus(srv, 'GET', '/v4/repos/alpha', 200), created);

    // an empty Space has no checkpoints
    assert.deepEqual(await expectStatus(srv, 'GET', '/v4/repos/alpha/commits', 200), []);

    const renamed = await expectStatus(srv, 'PATCH', `/v4/repos/${created.id}`, 200,
      { body: { name: 'alpha two' } });
    assert.equal(renamed.name, 'alpha two');
    assert.equal(renamed.id, created.id);
    assertError(await request(srv, 'GET', '/v4/repos/alpha'), 404, 'not_found');
    assert.equal((await expectStatus(srv, 'GET', '/v4/repos/alpha%20two', 200)).id, created.id);

    const c1 = await expectStatus(srv, 'POST', '/chat/commit', 201,
      { body: { repo_id: created.id, title: 'one', decisions: ['a'] } });
    const c2 = await expectStatus(srv, 'POST', '/chat/commit', 201,
      { body: { repo_id: 'alpha two', title: 'two', parent_commit_id: c1.commit_hash } });
    const log = await expectStatus(srv, 'GET', `/v4/repos/${created.id}/commits`, 200);
    assert.deepEqual(log.map((c) => c.commit_hash), [c2.commit_hash, c1.commit_hash]);
    const one = await expectStatus(srv, 'GET', `/v4/repos/${created.id}/commits?limit=1`, 200);
    assert.deepEqual(one.map((c) => c.commit_hash), [c2.commit_hash]);
    assertError(await request(srv, 'GET', `/v4/repos/${created.id}/commits?limit=-1`), 400, 'invalid_input');
    assertError(await request(srv, 'GET', `/v4/repos/${created.id}/commits?limit=x`), 400, 'invalid_input');

    const del = await expectStatus(srv, 'DELETE', `/v4/repos/${created.id}`, 200);
    assert.deepEqual(del, { deleted: 'alpha two', id: created.id });
    assertError(await request(srv, 'GET', `/v4/repos/${created.id}`), 404, 'not_found');
    assertError(await request(srv, 'GET', `/v4/repos/${created.id}/commits`), 404, 'not_found');
    assertError(await request(srv, 'DELETE', `/v4/repos/${created.id}`), 404, 'not_found');
  });

  test('a taken name is a 409 and a bad name a 400, nothing written', async () => {
    await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'taken' } });
    const before = await snapshot();
    assertError(await request(srv, 'POST', '/v4/repos', { body: { name: 'taken' } }), 409, 'conflict');
    assertError(await request(srv, 'POST', '/v4/repos', { body: { name: 'a/b' } }), 400, 'invalid_input');
    assertError(await request(srv, 'POST', '/v4/repos', { body: { name: '' } }), 400);
    assertError(await request(srv, 'POST', '/v4/repos', { body: {} }), 400, 'usage');
    assertError(await request(srv, 'PATCH', '/v4/repos/taken', { body: {} }), 400);
    assertError(await request(srv, 'PATCH', '/v4/repos/nosuch', { body: { name: 'x' } }), 404, 'not_found');
    assert.equal(await snapshot(), before);
  });
});

describe('agent surface', () => {
  test('write a checkpoint, read HEAD, fetch by hash and by prefix', async () => {
    await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'agents' } });
    const c = await expectStatus(srv, 'POST', '/chat/commit', 201, { body: commitBody('agents') });
    assert.match(c.commit_hash, /^[0-9a-f]{64}$/);
    assert.equal(c.parent_hash, null);
    assert.equal(c.space, 'agents');
    assert.equal(c.title, 'first');
    assert.equal(c.author, 'agent-a');
    assert.deepEqual(c.decisions, [{ text: 'use C' }]);
    assert.deepEqual(c.artifacts, [{ name: 'plan.md', kind: 'text', content: 'step 1' }]);
    assert.deepEqual(c.metadata, { tool: 'test' });

    assert.deepEqual(await expectStatus(srv, 'GET', '/repos/agents/head', 200), c);
    assert.deepEqual(await expectStatus(srv, 'GET', `/commits/${c.commit_hash}`, 200), c);
    assert.deepEqual(await expectStatus(srv, 'GET', `/commits/${c.commit_hash.slice(0, 12)}`, 200), c);
    assert.deepEqual(await expectStatus(srv, 'GET', `/commits/${c.commit_hash.toUpperCase()}`, 200), c);

    const c2 = await expectStatus(srv, 'POST', '/chat/commit', 201,
      { body: commitBody('agents', { title: 'second', parent_commit_id: c.commit_hash }) });
    assert.equal(c2.parent_hash, c.commit_hash);
    assert.equal((await expectStatus(srv, 'GET', '/repos/agents/head', 200)).commit_hash, c2.commit_hash);
  });

  test('a stale parent_commit_id is a 409 naming HEAD, and nothing is written', async () => {
    await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'race' } });
    const base = await expectStatus(srv, 'POST', '/chat/commit', 201, { body: commitBody('race') });
    const winner = await expectStatus(srv, 'POST', '/chat/commit', 201,
      { body: commitBody('race', { title: 'winner', parent_commit_id: base.commit_hash }) });
    const before = await snapshot();
    const r = await request(srv, 'POST', '/chat/commit',
      { body: commitBody('race', { title: 'loser', parent_commit_id: base.commit_hash }) });
    assertError(r, 409, 'conflict');
    assert.ok(r.json.error.message.includes(winner.commit_hash), r.json.error.message);
    const unknown = await request(srv, 'POST', '/chat/commit',
      { body: commitBody('race', { parent_commit_id: 'f'.repeat(64) }) });
    assertError(unknown, 409, 'conflict');
    assert.equal(await snapshot(), before);
    assert.equal((await expectStatus(srv, 'GET', '/repos/race/head', 200)).commit_hash, winner.commit_hash);
  });

  test('bad checkpoint writes are refused with the right status and write nothing', async () => {
    await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'strict' } });
    const before = await snapshot();
    const cases = [
      [{ title: 'no repo' }, 400],
      [{ repo_id: 5, title: 'x' }, 400],
      [{ repo_id: 'strict', parent_commit_id: 7, title: 'x' }, 400],
      [{ repo_id: 'strict', parent_commit_id: 'not-a-hash!', title: 'x' }, 400],
      [{ repo_id: 'strict', parent_commit_id: 'ab', title: 'x' }, 400],
      [{ repo_id: 'strict', title: 5 }, 400],
      [{ repo_id: 'strict', decisions: 'not a list' }, 400],
      [{ repo_id: 'strict', title: 'x', bogus_field: 1 }, 400],
      [{ repo_id: 'strict' }, 422],
      [{ repo_id: 'nosuch', title: 'x' }, 404],
    ];
    for (const [body, status] of cases) {
      const r = await request(srv, 'POST', '/chat/commit', { body });
      assert.ok(r.status === status || (status === 400 && r.status === 422),
        `${JSON.stringify(body)}: got ${r.status} ${r.text}`);
      assertError(r, r.status);
    }
    assert.equal(await snapshot(), before);
  });

  test('unknown Space, empty Space, unknown and malformed hashes', async () => {
    await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'empty' } });
    assertError(await request(srv, 'GET', '/repos/nosuch/head'), 404, 'not_found');
    assertError(await request(srv, 'GET', '/repos/empty/head'), 404, 'not_found');
    assertError(await request(srv, 'GET', `/commits/${'0'.repeat(64)}`), 404, 'not_found');
    assertError(await request(srv, 'GET', '/commits/not-a-hash'), 400, 'invalid_input');
    assertError(await request(srv, 'GET', '/commits/abc'), 400, 'invalid_input');
  });
});

describe('POST /api/ops/{op}', () => {
  test('runs an operation and wraps its result', async () => {
    const r = await expectStatus(srv, 'POST', '/api/ops/space.create', 200, { body: { name: 'via-ops' } });
    assert.equal(r.result.name, 'via-ops');
    const list = await expectStatus(srv, 'POST', '/api/ops/space.list', 200, { body: {} });
    assert.ok(list.result.some((s) => s.name === 'via-ops'));
    const empty = await expectStatus(srv, 'POST', '/api/ops/space.list', 200);
    assert.deepEqual(empty, list);
    const head = await request(srv, 'POST', '/api/ops/head', { body: { space: 'via-ops' } });
    assertError(head, 404, 'not_found');
    const fsck = await expectStatus(srv, 'POST', '/api/ops/fsck', 200, { body: {} });
    assert.equal(fsck.result.ok, true);
  });

  test('unknown operations are 404 and GET is 405', async () => {
    assertError(await request(srv, 'POST', '/api/ops/nope', { body: {} }), 404, 'not_found');
    const r = await request(srv, 'GET', '/api/ops/space.list');
    assertError(r, 405, 'method_not_allowed');
    assert.equal(r.headers.allow, 'POST');
  });
});

describe('bad requests change nothing', () => {
  test('malformed JSON, non-objects, duplicate keys, invalid UTF-8, wrong types', async () => {
    const before = await snapshot();
    const bodies = [
      '{"name": "x"', '{name: "x"}', '[]', '"x"', '42', 'null', '{"name":"a","name":"b"}',
      Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      '{"name":"\\u0000"}',
    ];
    for (const body of bodies) {
      for (const path of ['/v4/repos', '/chat/commit', '/api/ops/space.create']) {
        const r = await request(srv, 'POST', path, { body });
        assertError(r, 400, 'invalid_input');
        assert.ok(!r.text.includes('"result"'));
      }
    }
    assertError(await request(srv, 'POST', '/v4/repos', { body: { name: 5 } }), 400, 'invalid_input');
    assertError(await request(srv, 'POST', '/v4/repos', { body: { name: 'ok', description: [] } }), 400);
    assertError(await request(srv, 'POST', '/api/ops/space.create', { body: { name: true } }), 400);
    assertError(await request(srv, 'GET', '/v4/repos/%FF%FE'), 400, 'invalid_input');
    // a query parameter that decodes to bytes that are not UTF-8 is named, not taken as missing
    for (const path of ['/v4/search?q=%FF%FE', '/v4/blame?ref=main%C0', '/v4/search?q=ok&since=%FE']) {
      const r = await request(srv, 'GET', path);
      assertError(r, 400, 'invalid_input');
      assert.match(r.json.error.message, /query parameter '(q|ref|since)' is not valid UTF-8/);
    }
    assertError(await request(srv, 'GET', '/v4/search?q=ok&x%FF=1'), 400, 'invalid_input');
    assert.equal(await snapshot(), before);
  });

  test('unknown routes are JSON 404s, wrong methods JSON 405s with Allow', async () => {
    assertError(await request(srv, 'GET', '/nope'), 404, 'not_found');
    assertError(await request(srv, 'GET', '/v4/repos/a/b/c'), 404, 'not_found');
    const r = await request(srv, 'PUT', '/v4/repos/x', { body: {} });
    assertError(r, 405, 'method_not_allowed');
    assert.equal(r.headers.allow, 'GET, PATCH, DELETE');
    assertError(await request(srv, 'DELETE', '/v4/repos'), 405);
  });

  test('a body over the cap is a 413, declared or streamed, and writes nothing', async () => {
    const t = tempDb();
    const small = await startServer(t.db, { args: ['--max-body', '1024'] });
    try {
      const big = JSON.stringify({ name: 'big', description: 'x'.repeat(2000) });
      assertError(await request(small, 'POST', '/v4/repos', { body: big }), 413, 'too_large');
      // chunked: no Content-Length, so the cap is found while reading
      const chunked = await new Promise((resolve, reject) => {
        import('node:http').then(({ default: http }) => {
          const req = http.request({ host: '127.0.0.1', port: small.port, method: 'POST',
            path: '/v4/repos', headers: { Host: small.host, 'Content-Type': 'application/json',
              'Transfer-Encoding': 'chunked' } }, (res) => {
            let text = '';
            res.on('data', (d) => { text += d; });
            res.on('end', () => resolve({ status: res.statusCode, json: JSON.parse(text) }));
          });
          req.on('error', reject);
          for (let i = 0; i < 4; i++) req.write(i === 0 ? big.slice(0, 1000) : big.slice(1000 * i, 1000 * (i + 1)));
          req.end();
        });
      });
      assert.equal(chunked.status, 413);
      assert.equal(chunked.json.error.code, 'too_large');
      const fits = JSON.stringify({ name: 'fits', description: 'y'.repeat(900) });
      await expectStatus(small, 'POST', '/v4/repos', 201, { body: fits });
      const list = await expectStatus(small, 'GET', '/v4/repos', 200);
      assert.deepEqual(list.map((s) => s.name), ['fits']);
    } finally {
      await small.stop();
      t.cleanup();
    }
  });

  test('bodies held by all requests together are capped (503), then freed', async () => {
    const net = (await import('node:net')).default;
    const t = tempDb();
    const s = await startServer(t.db, { args: ['--max-body', '1024', '--quiet'] });
    const body = (name) => {
      const head = `{"name":"${name}","description":"`;
      return `${head}${'x'.repeat(1000 - head.length - 2)}"}`;
    };
    // A POST whose last byte is held back; finish() sends it and resolves to the status.
    const held = (name) => new Promise((resolve) => {
      const sock = net.connect(s.port, '127.0.0.1', () => {
        const b = body(name);
        sock.write(`POST /v4/repos HTTP/1.1\r\nHost: ${s.host}\r\nContent-Type: application/json\r\n`
          + `Content-Length: ${b.length}\r\nConnection: close\r\n\r\n${b.slice(0, -1)}`);
        let text = '';
        sock.on('data', (d) => { text += d; });
        const done = new Promise((res) => sock.on('close', () => res(Number(text.split(' ')[1]))));
        resolve({ finish: () => { sock.write(b.slice(-1)); return done; } });
      });
    });
    try {
      const holds = await Promise.all(Array.from({ length: 32 }, (_, i) => held(`held${i}`)));
      // 32 x 999 bytes are held; one more 1000-byte body passes the 32 KiB cap once the
      // server has read them all: on a loaded machine (sanitizers, files beside) that took
      // more than the 250 probes (12.5 s) once in about thirty runs, so the probes go on
      // for up to a minute
      let busy = null;
      let busyName = null;
      const until = Date.now() + 60000;
      for (let i = 0; Date.now() < until && !busy; i++) {
        const r = await request(s, 'POST', '/v4/repos', { body: body(`probe${i}`) });
        if (r.status === 503) {
          busy = r;
          busyName = `probe${i}`;
        } else {
          await new Promise((res) => setTimeout(res, 20));
        }
      }
      assert.ok(busy, 'the server never refused a body while 32 were held');
      assertError(busy, 503, 'unavailable');
      const statuses = await Promise.all(holds.map((h) => h.finish()));
      assert.deepEqual(statuses, Array(32).fill(201));
      const after = await request(s, 'POST', '/v4/repos', { body: body('after') });
      assert.equal(after.status, 201, after.text);
      const names = (await expectStatus(s, 'GET', '/v4/repos', 200)).map((x) => x.name);
      assert.equal(names.filter((n) => n.startsWith('held')).length, 32);
      assert.ok(!names.includes(busyName), 'a refused body was written');
    } finally {
      await s.stop();
      t.cleanup();
    }
  });

  test('the default cap is 8 MiB', async () => {
    const before = await snapshot();
    const over = JSON.stringify({ name: 'huge', description: 'z'.repeat(8 * 1024 * 1024) });
    const r = await request(srv, 'POST', '/v4/repos', { body: over, headers: { Expect: '100-continue' } });
    assertError(r, 413, 'too_large');
    assert.equal(await snapshot(), before);
  });
});

describe('security defaults', () => {
  test('a foreign Host header is refused (DNS rebinding), our own names pass', async () => {
    const before = await snapshot();
    for (const host of ['evil.example', `evil.example:${srv.port}`, `localhost:${srv.port + 1}`]) {
      assertError(await request(srv, 'GET', '/v4/repos', { headers: { Host: host } }), 421, 'misdirected');
      assertError(await request(srv, 'POST', '/v4/repos',
        { headers: { Host: host }, body: { name: 'rebound' } }), 421);
    }
    assertError(await request(srv, 'GET', '/v4/repos', { headers: { Host: null } }), 421);
    for (const host of [`localhost:${srv.port}`, `127.0.0.1:${srv.port}`, `[::1]:${srv.port}`]) {
      await expectStatus(srv, 'GET', '/healthz', 200, { headers: { Host: host } });
    }
    assert.equal(await snapshot(), before);
  });

  test('SMRITI_ALLOWED_HOSTS adds names', async () => {
    const t = tempDb();
    const s = await startServer(t.db, { env: { SMRITI_ALLOWED_HOSTS: 'smriti.internal, other:9999' } });
    try {
      await expectStatus(s, 'GET', '/v4/repos', 200, { headers: { Host: `smriti.internal:${s.port}` } });
      await expectStatus(s, 'GET', '/v4/repos', 200, { headers: { Host: 'other:9999' } });
      assertError(await request(s, 'GET', '/v4/repos', { headers: { Host: 'other:1' } }), 421);
    } finally {
      await s.stop();
      t.cleanup();
    }
  });

  test('cross-origin and cross-site writes are refused; same-origin writes pass', async () => {
    const before = await snapshot();
    const body = { name: 'csrf' };
    for (const headers of [
      { Origin: 'http://evil.example' },
      { Origin: `http://evil.example:${srv.port}` },
      { Origin: 'null' },
      { Origin: `https://127.0.0.1:${srv.port}` },
      { 'Sec-Fetch-Site': 'cross-site' },
    ]) {
      assertError(await request(srv, 'POST', '/v4/repos', { headers, body }), 403, 'forbidden');
      assertError(await request(srv, 'DELETE', '/v4/repos/taken', { headers }), 403, 'forbidden');
      assertError(await request(srv, 'POST', '/chat/commit', { headers, body: commitBody('taken') }), 403);
    }
    for (const ct of ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain']) {
      const r = await request(srv, 'POST', '/v4/repos', { headers: { 'Content-Type': ct }, body: JSON.stringify(body) });
      assertError(r, 415, 'unsupported_media_type');
    }
    assert.equal(await snapshot(), before);
    // a read from another origin is answered (no credentials, no CORS headers)
    const read = await request(srv, 'GET', '/v4/repos', { headers: { Origin: 'http://evil.example' } });
    assert.equal(read.status, 200);
    assert.equal(read.headers['access-control-allow-origin'], undefined);
    await expectStatus(srv, 'POST', '/v4/repos', 201,
      { headers: { Origin: `http://localhost:${srv.port}`, 'Sec-Fetch-Site': 'same-origin' }, body });
  });

  test('with SMRITI_TOKEN every route but /healthz needs the bearer token', async () => {
    const t = tempDb();
    const s = await startServer(t.db, { env: { SMRITI_TOKEN: 'tok-123' } });
    try {
      await expectStatus(s, 'GET', '/healthz', 200);
      for (const auth of [null, 'Bearer wrong', 'Bearer tok-1234', 'Basic dG9rLTEyMw==', 'tok-123']) {
        const headers = auth ? { Authorization: auth } : {};
        const r = await request(s, 'GET', '/v4/repos', { headers });
        assertError(r, 401, 'unauthorized');
        assert.equal(r.headers['www-authenticate'], 'Bearer');
        assertError(await request(s, 'POST', '/v4/repos', { headers, body: { name: 'x' } }), 401);
        assertError(await request(s, 'GET', '/openapi.json', { headers }), 401);
        assertError(await request(s, 'GET', '/nope', { headers }), 401);
      }
      const ok = { Authorization: 'Bearer tok-123' };
      assert.deepEqual(await expectStatus(s, 'GET', '/v4/repos', 200, { headers: ok }), []);
      await expectStatus(s, 'POST', '/v4/repos', 201, { headers: ok, body: { name: 'x' } });
      assert.equal((await expectStatus(s, 'GET', '/v4/repos', 200, { headers: ok })).length, 1);
    } finally {
      await s.stop();
      t.cleanup();
    }
  });

  test('a non-loopback bind is refused without a token', () => {
    const t = tempDb();
    try {
      for (const listen of ['0.0.0.0:0', '[::]:0']) {
        const r = spawnSync(SMRITI_FULL, ['serve', '--listen', listen], {
          encoding: 'utf8', env: childEnv({ SMRITI_DB: t.db }), timeout: 10000,
        });
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, /refusing to listen .*SMRITI_TOKEN/);
        assert.doesNotMatch(r.stderr, /listening on/);
      }
    } finally {
      t.cleanup();
    }
  });

  test('bad serve options are usage errors', () => {
    for (const args of [['--listen', 'nope'], ['--workers', '0'], ['--max-body', 'x'], ['--bogus'], ['extra']]) {
      const r = spawnSync(SMRITI_FULL, ['serve', ...args], {
        encoding: 'utf8', env: childEnv({ SMRITI_DB: '/nonexistent/x.db' }), timeout: 10000,
      });
      assert.equal(r.status, 2, `${args}: ${r.stderr}`);
    }
  });
});

describe('concurrency', () => {
  test('racing writers with the same parent: exactly one wins, the rest get 409', async () => {
    await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'racers' } });
    const base = await expectStatus(srv, 'POST', '/chat/commit', 201, { body: commitBody('racers') });
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => request(srv, 'POST',
      '/chat/commit', { body: commitBody('racers', { title: `racer ${i}`, parent_commit_id: base.commit_hash }) })));
    const won = results.filter((r) => r.status === 201);
    assert.equal(won.length, 1, results.map((r) => r.status).join(','));
    for (const r of results.filter((x) => x.status !== 201)) {
      assertError(r, 409, 'conflict');
      assert.ok(r.json.error.message.includes(won[0].json.commit_hash));
    }
    const log = await expectStatus(srv, 'GET', '/v4/repos/racers/commits', 200);
    assert.deepEqual(log.map((c) => c.commit_hash), [won[0].json.commit_hash, base.commit_hash]);
  });

  test('concurrent writers without a parent all land, in one linear history', async () => {
    await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'crowd' } });
    const writes = Array.from({ length: 24 }, (_, i) => request(srv, 'POST', '/chat/commit',
      { body: { repo_id: 'crowd', title: `w${i}` } }));
    const reads = Array.from({ length: 48 }, () => request(srv, 'GET', '/v4/repos/crowd'));
    const all = await Promise.all([...writes, ...reads]);
    assert.ok(all.every((r) => r.status === 201 || r.status === 200), all.map((r) => r.status).join(','));
    const log = await expectStatus(srv, 'GET', '/v4/repos/crowd/commits', 200);
    assert.equal(log.length, 24);
    for (let i = 0; i + 1 < log.length; i++) assert.equal(log[i].parent_hash, log[i + 1].commit_hash);
    assert.equal(log.at(-1).parent_hash, null);
  });

  test('one keep-alive connection carries many requests, refused ones included', async () => {
    const http = (await import('node:http')).default;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const ports = new Set();
    agent.on('free', (socket) => ports.add(socket.localPort));
    try {
      for (let i = 0; i < 10; i++) {
        const r = await request(srv, 'GET', i % 3 ? '/healthz' : '/nope', { agent });
        assert.equal(r.status, i % 3 ? 200 : 404);
        const w = await request(srv, 'POST', '/api/ops/space.list', { agent, body: {} });
        assert.equal(w.status, 200);
      }
      assert.equal(ports.size, 1, `${ports.size} connections were used`);
    } finally {
      agent.destroy();
    }
  });
});

describe('access log and shutdown', () => {
  test('one line per request without bodies or tokens; SIGTERM stops cleanly', async () => {
    const t = tempDb();
    const s = await startServer(t.db, { env: { SMRITI_TOKEN: 'very-secret-token' } });
    const auth = { Authorization: 'Bearer very-secret-token' };
    await expectStatus(s, 'POST', '/v4/repos', 201,
      { headers: auth, body: { name: 'logged', description: 'body-secret-text' } });
    await expectStatus(s, 'GET', '/repos/logged/head', 404, { headers: auth });
    await request(s, 'GET', '/v4/repos', { headers: { Authorization: 'Bearer wrong-token-text' } });
    const exit = await s.stop('SIGTERM');
    t.cleanup();
    assert.equal(exit.code, 0);
    const log = s.log();
    assert.match(log, /^http: POST \/v4\/repos 201 \d+\.\d{3}ms$/m);
    assert.match(log, /^http: GET \/repos\/logged\/head 404 \d+\.\d{3}ms$/m);
    assert.match(log, /^http: GET \/v4\/repos 401 /m);
    for (const secret of ['very-secret-token', 'body-secret-text', 'wrong-token-text']) {
      assert.ok(!log.includes(secret), `log leaks ${secret}`);
    }
  });

  test('SIGINT stops cleanly too', async () => {
    const t = tempDb();
    const s = await startServer(t.db, { args: ['--quiet'] });
    await expectStatus(s, 'GET', '/healthz', 200);
    const exit = await s.stop('SIGINT');
    t.cleanup();
    assert.equal(exit.code, 0);
    assert.doesNotMatch(s.log(), /^http: /m);
  });
});
