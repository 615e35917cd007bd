// nginx.test.mjs -- the deployment of docs/scale-out.md ("The load balancer:
// nginx") as users run it: Debian's nginx, started here as this user with
// its own prefix and configuration in a temporary directory, terminating TLS
// (a throwaway self-signed certificate made with openssl) in front of two
// `smriti serve` on one PostgreSQL, round robin.  Checks that requests land
// on both servers, that a chat reply streams through nginx unbuffered (its
// first delta arrives while the provider still holds the rest), that the
// Host and Origin of a browser on https pass, and that the per-address
// connection limit counts the client's address as nginx forwards it
// (SMRITI_TRUSTED_PROXIES), while X-Forwarded-For from any other peer
// is ignored.  The configuration is the one docs/scale-out.md shows: the
// test reads it from there (nginx-helpers.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import http from 'node:http';
import { pgSchemaDb } from './helpers.mjs';
import { startServer } from './http-helpers.mjs';
import { NO_NGINX, prepareBalancer } from './nginx-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';

const PG = process.env.SMRITI_TEST_PG;
const skip = !PG ? 'SMRITI_TEST_PG is not set (export SMRITI_TEST_PG=$(scripts/pg-cluster.sh start))' : NO_NGINX;
const PER_ADDRESS = 2;

let fake;
let db;
let servers = [];
let lb;

before(async () => {
  if (skip) return;
  lb = await prepareBalancer();
  fake = await startFakeProvider({ port: 0 });
  db = pgSchemaDb(PG, 'smriti_nginx');
  const env = {
    OPENAI_API_KEY: 'sk-test-openai-key-0123456789', OPENAI_BASE_URL: `${fake.url}/v1`,
    SMRITI_PROVIDER_RETRIES: '0',
    SMRITI_ALLOWED_HOSTS: lb.host,
    SMRITI_TRUSTED_PROXIES: '127.0.0.1',
  };
  for (let i = 0; i < 2; i++) {
    servers.push(await startServer(db.db, { args: ['--quiet', '--max-connections-per-address', String(PER_ADDRESS)], env }));
  }
  await lb.start(servers.map((s) => s.host));
});

after(async () => {
  await lb?.stop();
  for (const s of servers) await s.stop();
  await fake?.close();
  db?.cleanup();
});

const via = (...args) => lb.via(...args);

test('TLS: requests land on both servers, round robin', { skip }, async () => {
  const r0 = await via('GET', '/healthz');
  assert.equal(r0.status, 200, r0.text);
  assert.ok(r0.cipher?.name, 'over TLS');
  for (let i = 0; i < 6; i++) assert.equal((await via('GET', '/v4/repos')).status, 200);
  const used = new Set(lb.accessLog().map((l) => l.split(' ')[1]));
  for (const s of servers) assert.ok(used.has(s.host), `${s.host} answered some: ${[...used]}`);
});

test('Host and Origin of a browser on https pass; a write through one server is read through the other', { skip }, async () => {
  const w = await via('POST', '/v4/repos', { body: { name: 'through-nginx' }, headers: { Origin: `https://${lb.host}` } });
  assert.equal(w.status, 201, w.text);
  for (let i = 0; i < 2; i++) {
    const r = await via('GET', '/v4/repos/through-nginx');
    assert.equal(r.status, 200, r.text);
  }
  const cross = await via('POST', '/v4/repos', { body: { name: 'csrf' }, headers: { Origin: 'https://evil.example' } });
  assert.equal(cross.status, 403, cross.text);
});

test('a chat reply streams through nginx unbuffered: its first delta arrives while the provider holds the rest', { skip }, async () => {
  await via('POST', '/v4/repos', { body: { name: 'sse' } });
  const s = (await via('POST', '/v4/repos/sse/sessions', { body: {} })).json;
  fake.script([{ reply: 'one two three', deltas: 3, hold: 'nginx-sse', pause_after: 1 }]);
  const st = await via('POST', '/v4/chat/send', { stream: true, headers: { Accept: 'text/event-stream' },
    body: { session_id: s.id, message: 'hi', provider: 'openai', model: 'm' } });
  assert.equal(st.status, 200);
  assert.match(st.headers['content-type'], /^text\/event-stream/);
  assert.equal((await st.next()).event, 'generation');
  const first = await st.next();
  assert.equal(first.event, 'delta');
  assert.equal(first.data.text, 'one ');
  assert.equal(fake.holds()['nginx-sse'].waiting, 1, 'the provider still holds the rest');
  fake.release('nginx-sse');
  let last;
  for (let e = await st.next(); e; e = await st.next()) last = e;
  assert.equal(last.event, 'done');
  assert.equal(last.data.assistant_turn.content, 'one two three');
});

test('the per-address limit counts the client nginx forwards for; X-Forwarded-For from anyone else is ignored', { skip }, async () => {
  await via('POST', '/v4/repos', { body: { name: 'limit' } });
  // two replies held on each server, all from 127.0.0.2 through nginx
  const n = PER_ADDRESS * servers.length;
  fake.script(Array.from({ length: n }, () => ({ reply: 'held reply', deltas: 2, hold: 'nginx-limit', pause_after: 1 })));
  const held = [];
  const sessions = [];
  for (let i = 0; i < n; i++) sessions.push((await via('POST', '/v4/repos/limit/sessions', { body: {} })).json);
  // one after the other: round robin puts every other one on each server
  for (const [i, s] of sessions.entries()) {
    const st = await via('POST', '/v4/chat/send', { stream: true, headers: { Accept: 'text/event-stream' },
      body: { session_id: s.id, message: `m${i}`, provider: 'openai', model: 'm' } });
    assert.equal(st.status, 200);
    assert.equal((await st.next()).event, 'generation');
    held.push(st);
  }
  try {
    // 127.0.0.2 holds its two on whichever server answers: refused
    const over = await via('GET', '/v4/repos', { from: '127.0.0.2' });
    assert.equal(over.status, 503, over.text);
    assert.match(over.json.error.message, /your address holds 3 connections, more than the 2 one address may/);
    // another client through the same nginx is not
    assert.equal((await via('GET', '/v4/repos', { from: '127.0.0.3' })).status, 200);
    // straight to a server: the proxy's own address (trusted) names 127.0.0.2 and is refused,
    // a peer that is no proxy of ours names it in vain
    const direct = (from, forwarded) => new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: servers[0].port, path: '/v4/repos', localAddress: from,
        headers: { Host: servers[0].host, 'X-Forwarded-For': forwarded, 'X-Real-IP': forwarded }, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(await direct('127.0.0.1', '127.0.0.2'), 503);
    assert.equal(await direct('127.0.0.3', '127.0.0.2'), 200, 'a forged X-Forwarded-For is ignored');
  } finally {
    fake.release('nginx-limit');
    for (const h of held) await h.all();
  }
  // the replies ended: the client may come back
  assert.equal((await via('GET', '/v4/repos', { from: '127.0.0.2' })).status, 200);
});

// A figure, not a check (speed belongs to bench/): what nginx adds to a HEAD
// read, TLS and a round trip to one of the servers, against asking a server
// directly; both over kept-alive connections, medians of 200 reads.
test('figure: the balancer\'s added latency on a HEAD read', { skip }, async (t) => {
  await via('POST', '/v4/repos', { body: { name: 'figure' } });
  const c = await via('POST', '/chat/commit', { body: { repo_id: 'figure', title: 'one', decisions: ['a'] } });
  assert.equal(c.status, 201, c.text);
  const tlsAgent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: lb.cert, servername: lb.name });
  const plainAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const once = (mod, opts) => new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    mod.request(opts, (res) => {
      res.resume();
      res.on('end', () => resolve([res.statusCode, Number(process.hrtime.bigint() - t0) / 1e6]));
    }).on('error', reject).end();
  });
  const median = (v) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)];
  const through = [];
  const direct = [];
  for (let i = 0; i < 200; i++) {
    const [s1, ms1] = await once(https, { host: '127.0.0.1', port: lb.port, path: '/repos/figure/head', agent: tlsAgent,
      headers: { Host: lb.host } });
    const [s2, ms2] = await once(http, { host: '127.0.0.1', port: servers[0].port, path: '/repos/figure/head',
      agent: plainAgent, headers: { Host: servers[0].host } });
    assert.equal(s1, 200);
    assert.equal(s2, 200);
    through.push(ms1);
    direct.push(ms2);
  }
  tlsAgent.destroy();
  plainAgent.destroy();
  t.diagnostic(`HEAD read, median of 200: through nginx (TLS) ${median(through).toFixed(3)} ms,`
    + ` straight to a server ${median(direct).toFixed(3)} ms`);
});
