// http-slowclients.test.mjs -- clients that send slowly cannot hold the
// server's door (issue 25): a request head must be complete a fixed time
// after its first byte however often bytes trickle in, a body must keep a
// minimum rate, and connection slots are shared, so that five addresses
// dripping 256 connections each do not keep a sixth from being served.
// Raw sockets bound to addresses of 127/8 (all loopback on Linux).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { tempDb } from './helpers.mjs';
import { startServer, expectStatus } from './http-helpers.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The server's log once it matches re (the log thread writes every 50 ms).
async function logMatching(srv, re) {
  for (let i = 0; i < 40 && !re.test(srv.log()); i++) await sleep(50);
  return srv.log();
}

// Opens a connection (from localAddress) and sends first; resolves to
// { sock, closed: Promise<ms open>, answer() } once connected, or to null
// when it could not connect within 3 s (a server that stopped accepting).
function open(srv, first, { localAddress } = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    const sock = net.connect({ port: srv.port, host: '127.0.0.1', localAddress });
    let got = '';
    const closed = new Promise((done) => sock.on('close', () => done(Date.now() - started)));
    const timer = setTimeout(() => { sock.destroy(); resolve(null); }, 3000);
    sock.on('data', (d) => { got += d; });
    sock.on('error', () => { clearTimeout(timer); resolve(null); });
    sock.on('connect', () => {
      clearTimeout(timer);
      if (first) sock.write(first);
      resolve({ sock, closed, answer: () => got });
    });
  });
}

// Writes one byte of text every `everyMs` until the socket closes or `forMs` passed.
async function drip(conn, text, everyMs, forMs) {
  const until = Date.now() + forMs;
  let open = true;
  conn.closed.then(() => { open = false; });
  for (let i = 0; open && Date.now() < until; i++) {
    conn.sock.write(text[i % text.length]);
    await sleep(everyMs);
  }
  return open;
}

describe('deadlines', () => {
  let t;
  let srv;

  before(async () => {
    t = tempDb();
    srv = await startServer(t.db, {
      args: ['--header-timeout', '2', '--body-timeout', '2', '--body-min-rate', '100'],
    });
  });

  after(async () => {
    await srv?.stop();
    t?.cleanup();
  });

  test('a request head dripped a byte every 300 ms is closed at --header-timeout', async () => {
    // each byte would restart an idle timer; the head's deadline runs from its first byte
    const c = await open(srv, 'G');
    assert.ok(c);
    const stillOpen = await drip(c, `ET /healthz HTTP/1.1\r\nHost: ${srv.host}\r\nX-Drip: ${'a'.repeat(400)}`, 300, 10000);
    assert.equal(stillOpen, false, 'the server kept a dripping head open for 10 s');
    assert.ok((await c.closed) < 10000);
    assert.equal(c.answer(), '');
    const re = /closed a connection from 127\.0\.0\.1: its request head was not complete 2 s after its first byte/;
    assert.match(await logMatching(srv, re), re);
  });

  test('a body dripped below --body-min-rate is closed and writes nothing', async () => {
    const body = JSON.stringify({ name: 'dripped', description: 'x'.repeat(300) });
    const c = await open(srv, `POST /v4/repos HTTP/1.1\r\nHost: ${srv.host}\r\n`
      + `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
    const stillOpen = await drip(c, body, 300, 10000);
    assert.equal(stillOpen, false, 'the server kept a dripping body open for 10 s');
    assert.match(await logMatching(srv, /its request body came slower/), /its request body came slower than 100 bytes a second/);
    const names = (await expectStatus(srv, 'GET', '/v4/repos', 200)).map((s) => s.name);
    assert.ok(!names.includes('dripped'));
  });

  test('a kept-alive connection idle between requests is not cut by the head deadline', async () => {
    // the deadline starts at the next head's first byte, not at the end of the last answer
    const get = `GET /healthz HTTP/1.1\r\nHost: ${srv.host}\r\n\r\n`;
    const c = await open(srv, get);
    await sleep(3500);
    c.sock.write(get);
    // the second answer, waited for rather than a fixed half second
    for (let i = 0; i < 250 && !(c.answer().match(/HTTP\/1\.1 200 /g)?.length >= 2); i++) await sleep(20);
    assert.equal(c.answer().match(/HTTP\/1\.1 200 /g)?.length, 2, c.answer());
    c.sock.destroy();
  });

  test('a head and a body sent at an ordinary pace are served', async () => {
    const body = JSON.stringify({ name: 'steady' });
    const c = await open(srv, `POST /v4/repos HTTP/1.1\r\nHost: ${srv.host}\r\n`
      + `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
    for (const ch of body) {
      c.sock.write(ch);
      await sleep(20);
    }
    await c.closed;
    assert.match(c.answer(), /^HTTP\/1\.1 201 /);
  });
});

describe('shared slots', () => {
  let t;
  let srv;

  before(async () => {
    t = tempDb();
    srv = await startServer(t.db, { args: ['--quiet'] });
  });

  after(async () => {
    await srv?.stop();
    t?.cleanup();
  });

  test('5 addresses x 256 dripping connections: a fresh client is served within a second', async (tc) => {
    const held = [];
    const partial = `GET /healthz HTTP/1.1\r\nHost: ${srv.host}\r\nX-Drip: `;
    let dripping = true;
    try {
      for (let a = 2; a <= 6; a++) {
        held.push(...await Promise.all(Array.from({ length: 256 },
          () => open(srv, partial, { localAddress: `127.0.0.${a}` }))));
      }
      const opened = held.filter(Boolean);
      assert.ok(opened.length >= 1024, `only ${opened.length} connections opened`);
      // they keep dripping, a byte a second each, while the fresh client comes
      const drips = opened.map(async (c) => {
        let gone = false;
        c.closed.then(() => { gone = true; });
        while (dripping && !gone) {
          c.sock.write('a');
          await sleep(1000);
        }
      });
      await sleep(1500);
      const started = Date.now();
      const fresh = await open(srv, `GET /healthz HTTP/1.1\r\nHost: ${srv.host}\r\nConnection: close\r\n\r\n`,
        { localAddress: '127.0.0.7' });
      assert.ok(fresh, 'the fresh client could not connect');
      await Promise.race([fresh.closed, sleep(5000)]);
      const took = Date.now() - started;
      assert.match(fresh.answer(), /^HTTP\/1\.1 200 /, `the fresh client got ${JSON.stringify(fresh.answer())}`);
      assert.ok(took < 1000, `the fresh client was answered after ${took} ms`);
      tc.diagnostic(`${opened.length} connections opened, the fresh client answered in ${took} ms`);
      dripping = false;
      await Promise.all(drips);
    } finally {
      dripping = false;
      for (const c of held) c?.sock.destroy();
    }
  });
});
