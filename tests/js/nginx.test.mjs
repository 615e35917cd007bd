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
// test reads it from there.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from './helpers.mjs';
import { startServer, expectStatus } from './http-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';

const PG = process.env.SMRITI_TEST_PG;
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => spawnSync(p, ['-v']).status === 0);
const skip = !PG ? 'SMRITI_TEST_PG is not set (export SMRITI_TEST_PG=$(scripts/pg-cluster.sh start))'
  : !NGINX ? "nginx is not installed (scripts/deps.sh test installs Debian's nginx)" : false;
const NAME = 'smriti.test';
const PER_ADDRESS = 2;

let dir;
let fake;
let db;
let servers = [];
let nginx;
let port;
let cert;

function psql(url, sql) {
  const r = spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', url, '-c', sql], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`psql ${sql}: ${r.stderr}`);
  return r.stdout.trim();
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

// The nginx configuration of docs/scale-out.md, its placeholders filled in for this run.
function nginxConf(upstreams) {
  const doc = readFileSync(path.join(ROOT, 'docs/scale-out.md'), 'utf8');
  const m = doc.match(/<!-- nginx\.conf -->\n```nginx\n([\s\S]*?)```/);
  assert.ok(m, 'docs/scale-out.md shows the nginx configuration after <!-- nginx.conf -->');
  const servers_ = upstreams.map((u) => `    server ${u};`).join('\n');
  const site = m[1]
    .replace(/ {4}server 10\.0\.0\.\d+:7411;\n/g, '')
    .replace('upstream smriti {\n', `upstream smriti {\n${servers_}\n`)
    .replace('listen 443 ssl http2;', `listen 127.0.0.1:${port} ssl http2;`)
    .replace('server_name smriti.example.com;', `server_name ${NAME};`)
    .replace('/etc/ssl/smriti.pem', path.join(dir, 'cert.pem'))
    .replace('/etc/ssl/smriti.key', path.join(dir, 'key.pem'));
  const t = path.join(dir, 'tmp');
  return `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 512; }
http {
    log_format upstream '$remote_addr $upstream_addr $status';
    access_log ${dir}/access.log upstream;
    client_body_temp_path ${t}/body;
    proxy_temp_path ${t}/proxy;
    fastcgi_temp_path ${t}/fastcgi;
    uwsgi_temp_path ${t}/uwsgi;
    scgi_temp_path ${t}/scgi;
${site.replace(/^/gm, '    ')}
}
`;
}

async function waitListening(p) {
  for (let i = 0; i < 200; i++) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(p, '127.0.0.1', () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nginx did not listen: ${readFileSync(path.join(dir, 'error.log'), 'utf8')}`);
}

before(async () => {
  if (skip) return;
  dir = mkdtempSync(path.join(tmpdir(), 'smriti-nginx-'));
  mkdirSync(path.join(dir, 'tmp'));
  const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
    '-nodes', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1',
    '-subj', `/CN=${NAME}`, '-addext', `subjectAltName=DNS:${NAME}`], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  cert = readFileSync(path.join(dir, 'cert.pem'));
  fake = await startFakeProvider({ port: 0 });
  port = await freePort();
  const schema = `smriti_nginx_${process.pid}`;
  psql(PG, `CREATE SCHEMA ${schema}`);
  db = { dsn: `${PG}${PG.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`, schema };
  const env = {
    OPENAI_API_KEY: 'sk-test-openai-key-0123456789', OPENAI_BASE_URL: `${fake.url}/v1`,
    SMRITI_PROVIDER_RETRIES: '0',
    SMRITI_ALLOWED_HOSTS: `${NAME}:${port}`,
    SMRITI_TRUSTED_PROXIES: '127.0.0.1',
  };
  for (let i = 0; i < 2; i++) {
    servers.push(await startServer(db.dsn, { args: ['--quiet', '--max-connections-per-address', String(PER_ADDRESS)], env }));
  }
  writeFileSync(path.join(dir, 'nginx.conf'), nginxConf(servers.map((s) => s.host)));
  const t = spawnSync(NGINX, ['-t', '-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')], { encoding: 'utf8' });
  assert.equal(t.status, 0, t.stderr);
  nginx = spawn(NGINX, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')], { stdio: 'ignore' });
  await waitListening(port);
});

after(async () => {
  if (nginx) {
    nginx.kill('SIGQUIT');
    await new Promise((r) => nginx.on('exit', r));
  }
  for (const s of servers) await s.stop();
  await fake?.close();
  if (db) psql(PG, `DROP SCHEMA ${db.schema} CASCADE`);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// One request through nginx over TLS, from local address `from` (127.0.0.x).
function via(method, p, { body, headers = {}, from = '127.0.0.2', stream = false } = {}) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const h = { Host: `${NAME}:${port}`, ...headers };
  if (payload) h['Content-Type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, method, path: p, headers: h, ca: cert,
      servername: NAME, localAddress: from, agent: false }, (res) => {
      if (stream) { resolve({ status: res.statusCode, headers: res.headers, res, req }); return; }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => {
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, headers: res.headers, text, json, cipher: res.socket.getCipher?.() });
      });
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

// Server-sent events of a streamed response, one at a time: next() resolves to {event, data} or null.
function events(res) {
  const queue = [];
  const waiters = [];
  let buf = '';
  let ended = false;
  res.setEncoding('utf8');
  res.on('data', (chunk) => {
    buf += chunk;
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const e = { event: 'message', data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) e.event = line.slice(6).trim();
        else if (line.startsWith('data:')) e.data += line.slice(5).trim();
      }
      if (!e.data) continue;
      e.data = JSON.parse(e.data);
      const w = waiters.shift();
      if (w) w(e); else queue.push(e);
    }
  });
  res.on('end', () => { ended = true; while (waiters.length) waiters.shift()(null); });
  return { next: () => (queue.length ? Promise.resolve(queue.shift()) : ended ? Promise.resolve(null) : new Promise((r) => waiters.push(r))) };
}

test('TLS: requests land on both servers, round robin', { skip }, async () => {
  const r0 = await via('GET', '/healthz');
  assert.equal(r0.status, 200, r0.text);
  assert.ok(r0.cipher?.name, 'over TLS');
  for (let i = 0; i < 6; i++) assert.equal((await via('GET', '/v4/repos')).status, 200);
  const log = readFileSync(path.join(dir, 'access.log'), 'utf8').trim().split('\n');
  const used = new Set(log.map((l) => l.split(' ')[1]));
  for (const s of servers) assert.ok(used.has(s.host), `${s.host} answered some: ${[...used]}`);
});

test('Host and Origin of a browser on https pass; a write through one server is read through the other', { skip }, async () => {
  const w = await via('POST', '/v4/repos', { body: { name: 'through-nginx' }, headers: { Origin: `https://${NAME}:${port}` } });
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
  const ev = events(st.res);
  assert.equal((await ev.next()).event, 'generation');
  const first = await ev.next();
  assert.equal(first.event, 'delta');
  assert.equal(first.data.text, 'one ');
  assert.equal(fake.holds()['nginx-sse'].waiting, 1, 'the provider still holds the rest');
  fake.release('nginx-sse');
  let last;
  for (let e = await ev.next(); e; e = await ev.next()) last = e;
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
    const ev = events(st.res);
    assert.equal((await ev.next()).event, 'generation');
    held.push({ st, ev });
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
    for (const h of held) for (let e = await h.ev.next(); e; e = await h.ev.next());
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
  const tlsAgent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: cert, servername: NAME });
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
    const [s1, ms1] = await once(https, { host: '127.0.0.1', port, path: '/repos/figure/head', agent: tlsAgent,
      headers: { Host: `${NAME}:${port}` } });
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
