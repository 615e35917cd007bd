// metrics.test.mjs -- GET /metrics in the Prometheus text format (requests by
// route template and status with latency histograms, provider calls by
// outcome, store errors, the draft queue), --no-metrics, and the JSON access
// log of --log-format json (issue 15).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { tempDb, run, SMRITI_FULL } from './helpers.mjs';
import { startServer, request, expectStatus, assertError } from './http-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';

// { 'name{labels}': value } of a Prometheus text body, and the # TYPE of each family.
function parse(text) {
  const samples = new Map();
  const types = new Map();
  for (const line of text.split('\n')) {
    if (!line) continue;
    const type = line.match(/^# TYPE (\S+) (counter|gauge|histogram)$/);
    if (type) { types.set(type[1], type[2]); continue; }
    if (line.startsWith('# HELP ')) continue;
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{(?:[^"}]|"(?:[^"\\]|\\.)*")*\})?) (\S+)$/);
    assert.ok(m, `not a sample line: ${JSON.stringify(line)}`);
    samples.set(m[1], Number(m[2]));
  }
  return { samples, types };
}

let t;
let fake;
let srv;

before(async () => {
  t = tempDb();
  fake = await startFakeProvider({ port: 0 });
  srv = await startServer(t.db, {
    args: ['--log-format', 'json'],
    env: {
      OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${fake.url}/v1`, SMRITI_PROVIDER_RETRIES: '0',
      SMRITI_PROVIDER_TIMEOUT_MS: '1000',
    },
  });
});

after(async () => {
  await srv?.stop();
  await fake?.close();
  t?.cleanup();
});

const HEAD = 'smriti_http_requests_total{method="GET",route="/repos/{id}/head",status=';

describe('GET /metrics', () => {
  test('counts requests by route template and status, with a latency histogram', async () => {
    assertError(await request(srv, 'GET', '/repos/demo/head'), 404);
    await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'demo' } });
    await expectStatus(srv, 'POST', '/chat/commit', 201, { body: { repo_id: 'demo', title: 'one' } });
    for (let i = 0; i < 3; i++) await expectStatus(srv, 'GET', '/repos/demo/head', 200);
    assertError(await request(srv, 'GET', '/no/such/route'), 404);
    assertError(await request(srv, 'POST', '/no/such/route', { body: {} }), 404);
    const r = await request(srv, 'GET', '/metrics');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    const { samples, types } = parse(r.text);
    assert.equal(samples.get(`${HEAD}"200"}`), 3);
    assert.equal(samples.get(`${HEAD}"404"}`), 1);
    assert.equal(samples.get('smriti_http_requests_total{method="POST",route="/chat/commit",status="201"}'), 1);
    // unmatched requests keep their method, so a scan of POSTs stands apart from stray GETs
    assert.equal(samples.get('smriti_http_requests_total{method="GET",route="unmatched",status="404"}'), 1);
    assert.equal(samples.get('smriti_http_requests_total{method="POST",route="unmatched",status="404"}'), 1);
    assert.ok(!r.text.includes('method=""'), 'no empty method label');
    // the process family every Prometheus exporter has
    for (const [name, type] of [['process_cpu_seconds_total', 'counter'], ['process_resident_memory_bytes', 'gauge'],
      ['process_virtual_memory_bytes', 'gauge'], ['process_open_fds', 'gauge'], ['process_max_fds', 'gauge'],
      ['process_start_time_seconds', 'gauge']]) {
      assert.equal(types.get(name), type, name);
      assert.ok(samples.get(name) > 0, `${name} ${samples.get(name)}`);
    }
    assert.ok(samples.get('process_resident_memory_bytes') > 1024 * 1024);
    assert.ok(samples.get('process_resident_memory_bytes') < samples.get('process_virtual_memory_bytes'));
    assert.ok(samples.get('process_open_fds') >= 3 && samples.get('process_open_fds') <= samples.get('process_max_fds'));
    assert.ok(Math.abs(samples.get('process_start_time_seconds') - Date.now() / 1000) < 3600);
    assert.ok(!r.text.includes('route="/repos/demo/head"'), 'raw paths never become labels');
    // the histogram: cumulative buckets ending in +Inf = _count = the requests of the route
    const h = 'smriti_http_request_seconds';
    const lbl = 'method="GET",route="/repos/{id}/head"';
    const buckets = [...samples].filter(([k]) => k.startsWith(`${h}_bucket{${lbl},`)).map(([, v]) => v);
    assert.equal(buckets.length, 19);
    for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i] >= buckets[i - 1]);
    assert.equal(buckets.at(-1), 4);
    assert.equal(samples.get(`${h}_count{${lbl}}`), 4);
    assert.ok(samples.get(`${h}_sum{${lbl}}`) > 0);
    assert.equal(types.get(h), 'histogram');
    assert.equal(types.get('smriti_http_requests_total'), 'counter');
    for (const fam of ['smriti_provider_calls_total', 'smriti_store_errors_total', 'smriti_draft_queue_depth',
      'smriti_http_requests_in_flight', 'smriti_build_info', 'process_start_time_seconds']) {
      assert.ok(types.has(fam), `no # TYPE for ${fam}`);
    }
    assert.equal(samples.get('smriti_store_errors_total{backend="sqlite",kind="internal"}'), 0);
    assert.equal(samples.get('smriti_draft_queue_depth'), 0);
    // where a write's time went: the worker queue, behind other transactions, its own
    for (const fam of ['smriti_store_write_wait_seconds', 'smriti_store_write_seconds',
      'smriti_http_worker_queue_seconds']) assert.equal(types.get(fam), 'histogram');
    assert.ok(samples.get('smriti_store_write_seconds_count{writer="foreground"}') >= 2, 'the Space and the commit');
    assert.equal(samples.get('smriti_store_write_wait_seconds_count{writer="foreground"}'),
      samples.get('smriti_store_write_seconds_count{writer="foreground"}'));
    assert.equal(samples.get('smriti_store_write_seconds_count{writer="background"}'), 0);
    const batches = samples.get('smriti_store_write_batches_total');
    assert.ok(batches >= 1 && batches <= samples.get('smriti_store_write_seconds_count{writer="foreground"}'));
    assert.ok(samples.get('smriti_http_worker_queue_seconds_count{pool="worker"}') >= 2);
    assert.equal(samples.get('smriti_http_worker_queue_seconds_count{pool="chat"}'), 0);
  });

  test('counts provider calls by outcome, with their latency', async () => {
    const s = await expectStatus(srv, 'POST', '/v4/repos/demo/sessions', 201, { body: {} });
    await fake.reset();
    await fake.script([{ reply: 'fine' }, { status: 500, message: 'upstream broke' },
      { delay_ms: 3000, reply: 'too late' }]);
    await expectStatus(srv, 'POST', '/v4/chat/send', 200, { body: { session_id: s.id, message: 'one' } });
    assertError(await request(srv, 'POST', '/v4/chat/send', { body: { session_id: s.id, message: 'two' } }), 502);
    assertError(await request(srv, 'POST', '/v4/chat/send', { body: { session_id: s.id, message: 'three' } }), 504);
    const { samples } = parse((await request(srv, 'GET', '/metrics')).text);
    assert.equal(samples.get('smriti_provider_calls_total{provider="openai",outcome="ok"}'), 1);
    assert.equal(samples.get('smriti_provider_calls_total{provider="openai",outcome="http_error"}'), 1);
    assert.equal(samples.get('smriti_provider_calls_total{provider="anthropic",outcome="ok"}'), 0);
    assert.equal(samples.get('smriti_provider_calls_total{provider="openai",outcome="timeout"}'), 1);
    assert.equal(samples.get('smriti_provider_call_seconds_count{provider="openai"}'), 3);
    assert.equal(samples.get('smriti_http_requests_total{method="POST",route="/v4/chat/send",status="502"}'), 1);
    // sends start on the chat pool, whose store writes (the user turns) count as background
    assert.equal(samples.get('smriti_http_worker_queue_seconds_count{pool="chat"}'), 3);
    assert.ok(samples.get('smriti_store_write_seconds_count{writer="background"}') >= 3);
  });

  test('the access log is one JSON object a line with --log-format json', () => {
    const lines = srv.log().split('\n').filter((l) => l.startsWith('{'));
    assert.ok(lines.length >= 8, srv.log());
    const head = lines.map((l) => JSON.parse(l)).find((e) => e.path === '/repos/demo/head' && e.status === 200);
    assert.equal(head.method, 'GET');
    assert.equal(head.route, '/repos/{id}/head');
    assert.equal(typeof head.duration_ms, 'number');
    assert.equal(head.closed, false);
    assert.match(head.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const unmatched = lines.map((l) => JSON.parse(l)).find((e) => e.path === '/no/such/route');
    assert.equal(unmatched.route, null);
    assert.ok(!srv.log().includes('sk-test'), 'no key in the log');
  });

  test("libmicrohttpd's own messages are JSON lines too", async () => {
    // a header larger than a connection's memory: the library answers 431 and logs it itself
    const answer = await new Promise((resolve, reject) => {
      const sock = net.connect({ port: srv.port, host: '127.0.0.1' });
      let got = '';
      sock.on('connect', () => sock.write(`GET /healthz HTTP/1.1\r\nHost: ${srv.host}\r\nX-Big: ${'y'.repeat(70000)}\r\n\r\n`));
      sock.on('data', (d) => { got += d; });
      sock.on('error', (e) => (got ? resolve(got) : reject(e)));
      sock.on('close', () => resolve(got));
    });
    assert.match(answer, /^HTTP\/1\.1 431 /);
    // the library's line, by its message: a line of another source once matched /431/ by its
    // time (".431..."), and a line that is not JSON (what this guards against) is never found
    const json = (l) => { try { return JSON.parse(l); } catch { return null; } };
    let e;
    for (let i = 0; i < 100 && !e; i++) {
      e = srv.log().split('\n').map(json).find((x) => x && x.source === 'libmicrohttpd' &&
        /431/.test(x.message));
      if (!e) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(e, srv.log().slice(-2000));
    assert.equal(e.level, 'error');
    assert.match(e.message, /431/);
    assert.match(e.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });
});

describe('switches', () => {
  test('--no-metrics: /metrics is 404 and nothing is counted', async () => {
    const t2 = tempDb();
    const s2 = await startServer(t2.db, { args: ['--no-metrics', '--quiet'] });
    try {
      assertError(await request(s2, 'GET', '/metrics'), 404, 'not_found');
    } finally {
      await s2.stop();
      t2.cleanup();
    }
  });

  test('with SMRITI_TOKEN, /metrics wants the bearer token like every other route', async () => {
    const t2 = tempDb();
    const s2 = await startServer(t2.db, { args: ['--quiet'], env: { SMRITI_TOKEN: 'tok-123' } });
    try {
      assertError(await request(s2, 'GET', '/metrics'), 401);
      const r = await request(s2, 'GET', '/metrics', { headers: { Authorization: 'Bearer tok-123' } });
      assert.equal(r.status, 200);
    } finally {
      await s2.stop();
      t2.cleanup();
    }
  });

  test('with users, /metrics is the administrator\'s: a reader, a writer and an owner get 403', async () => {
    const t2 = tempDb();
    const cli = (args) => {
      const r = run(t2.db, args, { bin: SMRITI_FULL });
      assert.equal(r.code, 0, r.stderr);
      return r.stdout.trim();
    };
    cli(['space', 'create', 'mon']);
    const tokens = {};
    for (const [u, role] of [['rea', 'reader'], ['wri', 'writer'], ['own', 'owner']]) {
      cli(['user', 'add', u]);
      cli(['grant', u, 'mon', role]);
      tokens[u] = cli(['token', 'create', u]);
    }
    const s2 = await startServer(t2.db, { args: ['--quiet'], env: { SMRITI_TOKEN: 'tok-admin' } });
    try {
      for (const u of ['rea', 'wri', 'own']) {
        const r = await request(s2, 'GET', '/metrics', { headers: { Authorization: `Bearer ${tokens[u]}` } });
        assertError(r, 403, 'forbidden');
        assert.match(r.json.error.message, /administrator/);
        assert.doesNotMatch(r.text, /smriti_http_requests_total/);
      }
      // a request is counted once it is done, which may be just after its client read the answer
      const counted = /smriti_http_requests_total\{method="GET",route="\/metrics",status="403"\} 3/;
      let r;
      for (const t0 = Date.now(); ;) {
        r = await request(s2, 'GET', '/metrics', { headers: { Authorization: 'Bearer tok-admin' } });
        if (r.status !== 200 || counted.test(r.text) || Date.now() - t0 > 5000) break;
        await new Promise((ok) => setTimeout(ok, 50));
      }
      assert.equal(r.status, 200);
      assert.match(r.text, /smriti_http_requests_total\{method="GET",route="\/metrics",status="403"\} 3/);
    } finally {
      await s2.stop();
      t2.cleanup();
    }
  });

  test('--metrics-listen: /metrics alone on a listener of its own, without a token, loopback by default', async () => {
    const t2 = tempDb();
    const s2 = await startServer(t2.db, { args: ['--quiet', '--metrics-listen', '0'],
      env: { SMRITI_TOKEN: 'tok-admin' } });
    try {
      const m = s2.log().match(/^metrics on http:\/\/(127\.0\.0\.1):(\d+)\/metrics$/m);
      assert.ok(m, s2.log());
      const door = { port: Number(m[2]), host: `127.0.0.1:${m[2]}` };
      const r = await request(door, 'GET', '/metrics', { unchecked: true });
      assert.equal(r.status, 200, r.text);
      assert.match(r.headers['content-type'], /^text\/plain; version=0\.0\.4/);
      const { samples } = parse(r.text);
      assert.ok(samples.size > 0);
      // nothing else is served there, and nothing but a GET
      assertError(await request(door, 'GET', '/v4/repos', { unchecked: true }), 404, 'not_found');
      assertError(await request(door, 'GET', '/healthz', { unchecked: true }), 404, 'not_found');
      assertError(await request(door, 'POST', '/metrics', { body: {}, unchecked: true }), 405);
      // the Host check (DNS rebinding) holds there too
      assertError(await request(door, 'GET', '/metrics', { headers: { Host: 'evil.example:80' }, unchecked: true }), 421);
      // the main listener still wants the administrator
      assertError(await request(s2, 'GET', '/metrics'), 401);
    } finally {
      await s2.stop();
      t2.cleanup();
    }
    const bad = run(t.db, ['serve', '--no-metrics', '--metrics-listen', '127.0.0.1:0'], { bin: SMRITI_FULL });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--metrics-listen/);
  });

  test('--log-format takes text or json only', () => {
    const r = run(t.db, ['serve', '--log-format', 'xml'], { bin: SMRITI_FULL });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--log-format wants text or json, got 'xml'/);
  });
});
