// http-frontdoor.test.mjs -- the HTTP server's front door against requests
// a normal client never sends (issue 16): ambiguous framing (two
// Content-Length headers, Transfer-Encoding beside Content-Length), chunked
// uploads with a huge chunk extension, one address holding a thousand idle
// connections, and a connection that never finishes its request head.
// Raw sockets, because node:http would refuse to send most of these.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { tempDb } from './helpers.mjs';
import { startServer, request, expectStatus, assertError } from './http-helpers.mjs';

let tmp;
let srv;

before(async () => {
  tmp = tempDb();
  srv = await startServer(tmp.db, { args: ['--quiet'] });
});

after(async () => {
  await srv?.stop();
  tmp?.cleanup();
});

// Sends text on a new connection and resolves to everything the server
// answered by the time it closed the connection (or after `wait` ms idle).
function raw(text, { localAddress } = {}) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ port: srv.port, host: '127.0.0.1', localAddress });
    let got = '';
    sock.on('connect', () => sock.write(text));
    sock.on('data', (d) => { got += d; });
    sock.on('error', (e) => (got ? resolve(got) : reject(e)));
    sock.on('close', () => resolve(got));
  });
}

// Splits a raw answer into status and JSON body; insists on a JSON error.
function jsonError(answer, status, code) {
  const [head, body] = answer.split('\r\n\r\n');
  assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} `), answer.slice(0, 200));
  assert.match(head, /\r\ncontent-type: application\/json\r\n/i);
  const doc = JSON.parse(body);
  assert.equal(doc.error.code, code);
  assert.ok(doc.error.message.length > 0);
  return doc;
}

const head = (extra) => `POST /v4/repos HTTP/1.1\r\nHost: ${srv.host}\r\n`
  + `Content-Type: application/json\r\n${extra}Connection: close\r\n\r\n`;

async function names() {
  return (await expectStatus(srv, 'GET', '/v4/repos', 200)).map((s) => s.name);
}

describe('request framing', () => {
  test('two Content-Length headers are a 400 and write nothing', async () => {
    const body = '{"name":"dup-cl"}';
    const a = await raw(head(`Content-Length: ${body.length}\r\nContent-Length: 3\r\n`) + body);
    jsonError(a, 400, 'invalid_framing');
    // the same value twice is refused as well: no proxy has to guess
    const b = await raw(head(`Content-Length: ${body.length}\r\nContent-Length: ${body.length}\r\n`) + body);
    jsonError(b, 400, 'invalid_framing');
    assert.ok(!(await names()).includes('dup-cl'));
  });

  test('Transfer-Encoding beside Content-Length is a 400 and writes nothing', async () => {
    const body = '{"name":"te-cl"}';
    const chunk = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const a = await raw(head(`Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n`) + chunk);
    jsonError(a, 400, 'invalid_framing');
    assert.ok(!(await names()).includes('te-cl'));
  });

  test('a transfer coding other than chunked is a 400 and writes nothing', async () => {
    for (const te of ['gzip', 'chunked, gzip']) {
      const a = await raw(head(`Transfer-Encoding: ${te}\r\n`) + 'xxxx');
      jsonError(a, 400, 'invalid_framing');
    }
    const body = '{"name":"te-twice"}';
    const chunk = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const b = await raw(head('Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n') + chunk);
    jsonError(b, 400, 'invalid_framing');
    assert.ok(!(await names()).includes('te-twice'));
  });

  test('a chunked upload with a short chunk extension is accepted', async () => {
    const body = '{"name":"chunk-ext"}';
    const chunk = `${body.length.toString(16)};name=value\r\n${body}\r\n0\r\n\r\n`;
    const a = await raw(head('Transfer-Encoding: chunked\r\n') + chunk);
    assert.match(a, /^HTTP\/1\.1 201 /);
  });

  // What libmicrohttpd refuses before the server sees the request gets its
  // own short answer (not JSON: no handler ran), but a 4xx, never a 500.
  test('malformed framing that libmicrohttpd refuses itself is a 4xx', async () => {
    const cases = [
      [head('Content-Length: abc\r\n') + '{}', 400],
      [head('Content-Length: -1\r\n') + '{}', 400],
      [head('Content-Length: 99999999999999999999999\r\n') + '{}', 413],
      [head('Transfer-Encoding: chunked\r\n') + 'zz\r\n{}\r\n0\r\n\r\n', 400],
      [`GET /healthz HTTP/1.1\r\nHost: ${srv.host}\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`, 431],
      [`GET /${'a'.repeat(20000)} HTTP/1.1\r\nHost: ${srv.host}\r\n\r\n`, 414],
    ];
    for (const [text, status] of cases) {
      const a = await raw(text);
      assert.match(a, new RegExp(`^HTTP/1\\.1 ${status} `), text.slice(0, 80));
    }
  });

  test('a well-framed request on the same server still works', async () => {
    const body = '{"name":"fine"}';
    const a = await raw(head(`Content-Length: ${body.length}\r\n`) + body);
    assert.match(a, /^HTTP\/1\.1 201 /);
    assert.ok((await names()).includes('fine'));
  });
});

// One strict reading of the request (issue 25): what the route, the access
// check and the log see is what was sent, or the request is a 400 that
// writes nothing.  Each case runs on its own connection, which the server
// closes after the 400 (what follows a bad head is not trusted as a body).
describe('strict parsing', () => {
  const get = (target, extra = '') => `GET ${target} HTTP/1.1\r\nHost: ${srv.host}\r\n${extra}Connection: close\r\n\r\n`;
  const commits = async (name) => (await expectStatus(srv, 'GET', `/v4/repos/${name}/commits`, 200)).length;

  before(async () => {
    await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'victim' } });
    await expectStatus(srv, 'POST', '/chat/commit', 201, { body: { repo_id: 'victim', title: 'kept' } });
  });

  test('a percent-encoded NUL or control byte in the path or query is a 400 and writes nothing', async () => {
    const cases = [
      `DELETE /v4/repos/victim%00/commits HTTP/1.1\r\nHost: ${srv.host}\r\nConnection: close\r\n\r\n`,
      `DELETE /v4/repos/victim%00 HTTP/1.1\r\nHost: ${srv.host}\r\nConnection: close\r\n\r\n`,
      get('/v4/repos/victim%00/commits'),
      get('/ui/app.js%00.png'),
      get('/v4/repos/victim/commits?limit=1%00'),
      get('/v4/repos/victim/commits?limit%00=1'),
      get('/v4/repos/victim%0a/commits'),
      get('/v4/repos/victim%7F/commits'),
      get('/v4/repos/victim%1/commits'),         // a '%' without two hex digits
      get('/v4/repos/victim%zz/commits'),
      get('/healthz\x00x'),                       // a NUL sent as it is
      get('/heal th'),                            // a space inside the target
      get('/healthz\x01'),
    ];
    for (const text of cases) {
      const a = await raw(text);
      jsonError(a, 400, 'invalid_input');
      assert.match(a, /\r\nconnection: close\r\n/i, text);
    }
    assert.ok((await names()).includes('victim'));
    assert.equal(await commits('victim'), 1);
    // what decodes cleanly still works, %-escapes and all
    assert.match(await raw(get('/v4/repos/vict%69m/commits?limit=1')), /^HTTP\/1\.1 200 /);
  });

  test('whitespace before a colon, a repeated single-value header or a control byte in a value is a 400', async () => {
    const body = '{"name":"smuggled"}';
    const post = (headers, payload = body) => `POST /v4/repos HTTP/1.1\r\nHost: ${srv.host}\r\n`
      + `Content-Type: application/json\r\n${headers}\r\n${payload}`;
    const chunk = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const cases = [
      // today's libmicrohttpd keeps this as a header named "Content-Length ": no body, so the
      // body would be read as a second request
      post(`Content-Length : ${body.length}\r\n`),
      post(`Content-Length\t: ${body.length}\r\n`),
      post(`Content-Length: ${chunk.length}\r\nTransfer-Encoding : chunked\r\n`, chunk),
      post(`Content-Length: ${body.length}\r\nHost: ${srv.host}\r\n`),
      post(`Content-Length: ${body.length}\r\nOrigin: http://${srv.host}\r\nOrigin: http://evil.test\r\n`),
      post(`Content-Length: ${body.length}\r\nContent-Type: application/json\r\n`),
      post(`Content-Length: ${body.length}\r\nX-Note: a\x01b\r\n`),
      post(`Content-Length: ${body.length}\r\nX-Note: a\rb\r\n`),
      post(`Content-Length: ${body.length}\r\nX-Note: a\x7fb\r\n`),
      post(`Content-Length: ${body.length}\r\nX(Note): a\r\n`),
      get('/healthz', `Host: ${srv.host}\r\n`),
      get('/healthz', `Authorization: Bearer a\r\nAuthorization: Bearer b\r\n`),
      get('/healthz').replace(`Host: ${srv.host}`, `Host: ${srv.host}\x01`),
    ];
    for (const text of cases) {
      const a = await raw(text);
      const doc = jsonError(a, 400, 'invalid_header');
      assert.match(doc.error.message, /^the request header '.+' /);
      // one answer and the connection closed: nothing after the head ran as a request
      assert.equal(a.match(/HTTP\/1\.1 /g).length, 1, a);
    }
    assert.ok(!(await names()).includes('smuggled'));
  });

  test('a tab in a header value and a repeated list header are fine', async () => {
    const a = await raw(get('/healthz', 'X-Note: a\tb\r\nAccept: text/plain\r\nAccept: application/json\r\n'));
    assert.match(a, /^HTTP\/1\.1 200 /);
  });
});

describe('connections', () => {
  test('1,100 idle connections from one address do not block /healthz for another', async () => {
    const held = [];
    let closedByServer = 0;
    try {
      for (let i = 0; i < 1100; i++) {
        held.push(await new Promise((resolve, reject) => {
          const s = net.connect({ port: srv.port, host: '127.0.0.1' }, () => resolve(s));
          s.on('error', () => {});
          s.on('close', () => { closedByServer++; });
          s.once('error', reject);
        }));
      }
      // another address (all of 127/8 is loopback) is still served
      const a = await raw(`GET /healthz HTTP/1.1\r\nHost: ${srv.host}\r\nConnection: close\r\n\r\n`,
        { localAddress: '127.0.0.2' });
      assert.match(a, /^HTTP\/1\.1 200 /);
      assert.match(a, /"ok":true/);
      // the crowding address got at most its share; the rest were closed
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.ok(closedByServer >= 1100 - 256, `only ${closedByServer} were closed`);
    } finally {
      for (const s of held) s.destroy();
    }
  });

  test('a connection that never finishes its request head is closed by the server', async () => {
    // half a request line, then silence: the short idle timeout closes it.  From an address
    // of its own: the crowd of the test before may still hold 127.0.0.1's share while the
    // server lets it go, and a connection over the share is reset at once, not timed out
    const a = await raw('GET /heal', { localAddress: '127.0.0.3' });
    assert.equal(a, '');
  });
});

describe('checkpoint limits', () => {
  const write = (fields) => request(srv, 'POST', '/chat/commit', { body: { repo_id: 'limits', ...fields } });
  const log = async () => (await expectStatus(srv, 'GET', '/v4/repos/limits/commits', 200)).length;

  test('a list, an item, an artifact or a whole checkpoint over its limit is a 413 naming it', async () => {
    await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'limits' } });
    const before = await log();
    const cases = [
      [{ title: 't', decisions: Array.from({ length: 1001 }, (_, i) => `d${i}`) },
        /'decisions' has 1001 items; a list may have at most 1000/],
      // a million items: refused before they are looked at
      [{ title: 't', tasks: Array(1000000).fill('x') }, /'tasks' has 1000000 items/],
      [{ title: 't', assumptions: ['a'.repeat(10001)] }, /assumptions\[0\] has 10001 characters/],
      // characters, not bytes: 10,000 three-byte characters fit, 10,001 do not
      [{ title: 't', entities: [{ name: 'e', description: '\u20ac'.repeat(9999) }] }, null],
      [{ title: 't', entities: [{ name: 'e', description: '\u20ac'.repeat(10000) }] },
        /entities\[0\] has 10001 characters/],
      [{ title: 'x'.repeat(10001) }, /the title has 10001 characters/],
      [{ title: 't', artifacts: [{ name: 'a', content: 'c'.repeat(1000001) }] },
        /artifacts\[0\]\.content has 1000001 characters; an artifact's content may have at most 1000000/],
      [{ title: 't', artifacts: Array.from({ length: 5 }, (_, i) => ({ name: `a${i}`, content: 'c'.repeat(900000) })) },
        /at most 4194304 bytes \(4 MiB\)/],
    ];
    let written = 0;
    for (const [fields, pattern] of cases) {
      const r = await write(fields);
      if (!pattern) {
        assert.equal(r.status, 201, r.text);
        written++;
        continue;
      }
      assertError(r, 413, 'too_large');
      assert.match(r.json.error.message, pattern);
    }
    assert.equal(await log(), before + written);
    // just under every limit is fine
    const fits = await write({ title: 'x'.repeat(10000),
      decisions: Array.from({ length: 1000 }, (_, i) => `d${i}`),
      artifacts: [{ name: 'a', content: 'c'.repeat(1000000) }] });
    assert.equal(fits.status, 201, fits.text);
  });
});

describe('chat.send', () => {
  test('an unknown session is a 404 even without a provider key', async () => {
    // this server has no provider key: a real session gets 502, a bogus one 404
    await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'chat' } });
    const s = await expectStatus(srv, 'POST', '/v4/repos/chat/sessions', 201, { body: {} });
    const bogus = await request(srv, 'POST', '/v4/chat/send',
      { body: { session_id: 'no-such-session', message: 'hi', provider: 'openai' } });
    assertError(bogus, 404, 'not_found');
    const real = await request(srv, 'POST', '/v4/chat/send',
      { body: { session_id: s.id, message: 'hi', provider: 'openai' } });
    assert.equal(real.status, 502, real.text);
  });
});
