// nginx-helpers.mjs -- Debian's nginx as the load balancer of
// docs/scale-out.md ("The load balancer: nginx") in front of any number of
// `smriti serve`, for the tests that run that deployment (nginx.test.mjs,
// cluster.test.mjs).  nginx runs as this user with its own prefix in a
// temporary directory, terminating TLS with a throwaway self-signed
// certificate (openssl); its site is the block docs/scale-out.md shows, read
// from there, so the documented configuration is the tested one.
//
// Every answer through it names the server that gave it: the test's own
// http block (not the documented site) adds `X-Upstream: $upstream_addr`,
// and the access log records it too.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from './helpers.mjs';
import { sseReader } from './http-helpers.mjs';

export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => spawnSync(p, ['-v']).status === 0);
export const NO_NGINX = NGINX ? false : "nginx is not installed (scripts/deps.sh test installs Debian's nginx)";

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

// The site of docs/scale-out.md, its placeholders filled in: N upstreams.
function site(b, upstreams) {
  const doc = readFileSync(path.join(ROOT, 'docs/scale-out.md'), 'utf8');
  const m = doc.match(/<!-- nginx\.conf -->\n```nginx\n([\s\S]*?)```/);
  assert.ok(m, 'docs/scale-out.md shows the nginx configuration after <!-- nginx.conf -->');
  const servers = upstreams.map((u) => `    server ${u};`).join('\n');
  return m[1]
    .replace(/ {4}server 10\.0\.0\.\d+:7411;\n/g, '')
    .replace('upstream smriti {\n', `upstream smriti {\n${servers}\n`)
    .replace('listen 443 ssl http2;', `listen 127.0.0.1:${b.port} ssl http2;`)
    .replace('server_name smriti.example.com;', `server_name ${b.name};`)
    .replace('/etc/ssl/smriti.pem', path.join(b.dir, 'cert.pem'))
    .replace('/etc/ssl/smriti.key', path.join(b.dir, 'key.pem'));
}

function conf(b, upstreams) {
  const t = path.join(b.dir, 'tmp');
  return `daemon off;
worker_processes 1;
pid ${b.dir}/nginx.pid;
error_log ${b.dir}/error.log info;
events { worker_connections 512; }
http {
    log_format upstream '$remote_addr $upstream_addr $status';
    access_log ${b.dir}/access.log upstream;
    add_header X-Upstream $upstream_addr always;
    client_body_temp_path ${t}/body;
    proxy_temp_path ${t}/proxy;
    fastcgi_temp_path ${t}/fastcgi;
    uwsgi_temp_path ${t}/uwsgi;
    scgi_temp_path ${t}/scgi;
${site(b, upstreams).replace(/^/gm, '    ')}
}
`;
}

async function waitListening(b) {
  for (let i = 0; i < 200; i++) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(b.port, '127.0.0.1', () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nginx did not listen: ${readFileSync(path.join(b.dir, 'error.log'), 'utf8')}`);
}

// A balancer to be: its directory, certificate and port, chosen before the
// servers start (they must know the Host it sends: b.host).  Then
// b.start(upstreams) runs nginx in front of them ("127.0.0.1:PORT" each),
// b.via(...) asks through it, b.stop() ends it and removes its directory.
export async function prepareBalancer({ name = 'smriti.test' } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'smriti-nginx-'));
  mkdirSync(path.join(dir, 'tmp'));
  const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
    '-nodes', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1',
    '-subj', `/CN=${name}`, '-addext', `subjectAltName=DNS:${name}`], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const port = await freePort();
  const b = { dir, name, port, host: `${name}:${port}`, cert: readFileSync(path.join(dir, 'cert.pem')), child: null };
  b.start = (upstreams) => start(b, upstreams);
  b.stop = () => stop(b);
  b.via = (method, p, opts) => via(b, method, p, opts);
  b.accessLog = () => readFileSync(path.join(dir, 'access.log'), 'utf8').trim().split('\n');
  return b;
}

async function start(b, upstreams) {
  const file = path.join(b.dir, 'nginx.conf');
  writeFileSync(file, conf(b, upstreams));
  const args = ['-p', b.dir, '-c', file, '-e', path.join(b.dir, 'error.log')];
  const t = spawnSync(NGINX, ['-t', ...args], { encoding: 'utf8' });
  assert.equal(t.status, 0, t.stderr);
  b.child = spawn(NGINX, args, { stdio: 'ignore' });
  b.exit = new Promise((r) => b.child.on('exit', r));
  await waitListening(b);
}

async function stop(b) {
  if (b.child) {
    b.child.kill('SIGQUIT');
    await b.exit;
  }
  rmSync(b.dir, { recursive: true, force: true });
}

// The server that answered r: the last address of X-Upstream (nginx lists
// every one it tried, "A, B" when A could not be reached).
const landed = (r) => r.headers['x-upstream']?.split(', ').at(-1);

// One request through the balancer over TLS, from local address `from`
// (127.0.0.x).  Resolves to { status, headers, text, json, cipher, upstream },
// or with stream: true, once the headers are in, to sseReader()'s
// interface plus upstream.  body: an object, sent as JSON.
function via(b, method, p, { body, headers = {}, from = '127.0.0.2', stream = false } = {}) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const h = { Host: b.host, ...(stream ? { Accept: 'text/event-stream' } : {}), ...headers };
  if (payload) h['Content-Type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: b.port, method, path: p, headers: h, ca: b.cert,
      servername: b.name, localAddress: from, agent: false }, (res) => {
      if (stream && res.statusCode === 200) {
        resolve({ ...sseReader(req, res), upstream: landed(res), res, req });
        return;
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => {
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, headers: res.headers, text, json, cipher: res.socket.getCipher?.(),
          upstream: landed(res) });
      });
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}
