// http-jsonlog.test.mjs -- with --log-format json every line the server
// writes is a JSON object (issue 25): the first ("listening"), the access
// log, libmicrohttpd's own messages, and the lines about connections the
// server closed; and the access log records the path as it was sent when a
// request is refused for it, not a path cut at a %00.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { tempDb, run, SMRITI_FULL } from './helpers.mjs';
import { startServer, expectStatus } from './http-helpers.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let t;
let srv;

before(async () => {
  t = tempDb();
  // an unknown token parameter: the provider settings' warning, written before the server starts
  srv = await startServer(t.db, {
    args: ['--log-format', 'json', '--header-timeout', '1'],
    env: { OPENAI_API_KEY: 'sk-test', SMRITI_OPENAI_TOKEN_PARAM: 'bogus' },
  });
});

after(async () => {
  await srv?.stop();
  t?.cleanup();
});

// Sends text on a new connection; resolves to what came back once the server closed it.
function raw(text, { hold = 0 } = {}) {
  return new Promise((resolve) => {
    const sock = net.connect({ port: srv.port, host: '127.0.0.1' });
    let got = '';
    sock.on('connect', async () => {
      sock.write(text);
      for (let i = 0; i < hold && !sock.destroyed; i++) {
        await sleep(200);
        if (!sock.destroyed) sock.write('a');
      }
    });
    sock.on('data', (d) => { got += d; });
    sock.on('error', () => {});
    sock.on('close', () => resolve(got));
  });
}

test('every line of the log is a JSON object, the first and libmicrohttpd\'s included', async () => {
  await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'victim' } });
  const get = (target, extra = '') => `GET ${target} HTTP/1.1\r\nHost: ${srv.host}\r\n${extra}Connection: close\r\n\r\n`;
  assert.match(await raw(`DELETE /v4/repos/victim%00/commits HTTP/1.1\r\nHost: ${srv.host}\r\nConnection: close\r\n\r\n`), /^HTTP\/1\.1 400 /);
  assert.match(await raw(get('/healthz', 'X\x00y: z\r\n')), /^HTTP\/1\.1 400 /);    // libmicrohttpd's own 400
  assert.match(await raw(get('/healthz', `X-Big: ${'y'.repeat(70000)}\r\n`)), /^HTTP\/1\.1 431 /);
  assert.match(await raw(get('/healthz', 'Host: again\r\n')), /^HTTP\/1\.1 400 /);
  // a head that drips past --header-timeout: the server closes it and says so
  assert.equal(await raw(`GET /healthz HTTP/1.1\r\nHost: ${srv.host}\r\nX-Drip: `, { hold: 50 }), '');
  await expectStatus(srv, 'GET', '/v4/repos/victim', 200);
  await srv.stop();
  const lines = srv.log().split('\n').filter((l) => l !== '');
  const docs = lines.map((l) => {
    try { return JSON.parse(l); } catch { assert.fail(`not JSON: ${JSON.stringify(l)}`); }
  });
  // the provider settings' warning comes first (before the server listens), then "listening"
  assert.equal(docs.find((d) => d.message === 'listening').url, srv.url);
  for (const d of docs) assert.match(d.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  assert.ok(docs.some((d) => d.source === 'libmicrohttpd' && /400/.test(d.message)), srv.log());
  assert.ok(docs.some((d) => d.source === 'smriti' && /SMRITI_OPENAI_TOKEN_PARAM='bogus'/.test(d.message)), srv.log());
  assert.ok(docs.some((d) => d.event === 'connection_closed' && d.client === '127.0.0.1'
    && /request head was not complete/.test(d.reason)), srv.log());
  // the refused request is logged with the path it was sent with
  const refused = docs.find((d) => d.method === 'DELETE');
  assert.equal(refused.path, '/v4/repos/victim%00/commits');
  assert.equal(refused.status, 400);
});

test('a server that cannot start says why in JSON too', async () => {
  const t2 = tempDb();
  try {
    const held = net.createServer();
    await new Promise((resolve) => held.listen(0, '127.0.0.1', resolve));
    const r = run(t2.db, ['serve', '--log-format', 'json', '--listen', `127.0.0.1:${held.address().port}`],
      { bin: SMRITI_FULL });
    held.close();
    assert.notEqual(r.code, 0);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    assert.ok(lines.length >= 1);
    for (const l of lines) assert.match(JSON.parse(l).message, /cannot listen/, l);
  } finally {
    t2.cleanup();
  }
});
