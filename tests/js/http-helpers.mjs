// http-helpers.mjs -- helpers of the HTTP server tests: start `smriti serve`
// on a free port and make raw HTTP requests (node:http, so that tests can
// set any Host, Origin or Content-Type header, which fetch forbids).
// Every response request() receives is validated against the OpenAPI
// document (openapi-check.mjs): an undocumented status or a body that does
// not match its route's schema fails the test that received it.
import assert from 'node:assert/strict';
import http from 'node:http';
import { SMRITI_FULL, listeningUrl, startProcess } from './helpers.mjs';
import { checkResponse } from './openapi-check.mjs';

// Starts `smriti-full serve` on 127.0.0.1:0 with db; resolves to
// { url, port, host, child, log(), stop() } once it printed its address.
export async function startServer(db, { args = [], env = {} } = {}) {
  const p = await startProcess(SMRITI_FULL, ['serve', '--listen', '127.0.0.1:0', ...args], {
    env: { SMRITI_DB: db, ...env },
    ready: (line) => listeningUrl(line) !== null,
  });
  const url = p.output().split('\n').map(listeningUrl).find(Boolean);
  const port = Number(url.match(/:(\d+)$/)[1]);
  let exited = null;
  const exit = new Promise((resolve) => p.child.on('exit', (code, signal) => {
    exited = { code, signal };
    resolve(exited);
  }));
  return {
    url,
    port,
    host: `127.0.0.1:${port}`,
    child: p.child,
    log: p.output,
    exit,
    // Stops the server; after SIGTERM or SIGINT insists on a clean exit
    // (code 0, no sanitizer report).
    async stop(signal = 'SIGTERM') {
      if (!exited) p.child.kill(signal);
      const e = await exit;
      const log = p.output();
      if (signal === 'SIGKILL') return e;
      if (e.code !== 0 || /Sanitizer|runtime error:/.test(log)) {
        throw new Error(`server did not stop cleanly (${JSON.stringify(e)}):\n${log.slice(-4000)}`);
      }
      return e;
    },
  };
}

// One HTTP request.  body: an object (sent as JSON), a string or a Buffer.
// Resolves to { status, headers, text, json } (json null when not JSON),
// after checking it against the OpenAPI document (unchecked: true skips
// that, for a test that sends something no client would).
export async function request(server, method, path, opts = {}) {
  const res = await rawRequest(server, method, path, opts);
  if (!opts.unchecked) checkResponse(method, path, res);
  return res;
}

function rawRequest(server, method, path, { body, headers = {}, agent = false } = {}) {
  let payload = body;
  const h = { Host: server.host, ...headers };
  if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) {
    payload = JSON.stringify(body);
  }
  if (payload !== undefined && !Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) {
    h['Content-Type'] = 'application/json';
  }
  for (const k of Object.keys(h)) if (h[k] === null) delete h[k];
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port: server.port, method, path, headers: h, agent,
      setHost: false,
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

// Shorthands that insist on a status and return the JSON body.
export async function expectStatus(server, method, path, status, opts) {
  const r = await request(server, method, path, opts);
  if (r.status !== status) {
    throw new Error(`${method} ${path}: expected ${status}, got ${r.status} ${r.text}`);
  }
  return r.json;
}

// Asserts an error answer: the status, a JSON body {"error":{"code","message"}}
// with a non-empty message, and (when given) the code.
export function assertError(r, status, code) {
  assert.equal(r.status, status, r.text);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(typeof r.json?.error?.message, 'string', r.text);
  assert.ok(r.json.error.message.length > 0);
  if (code) assert.equal(r.json.error.code, code, r.text);
}

// Opens a request answered with server-sent events.  Resolves once the
// headers are in, to sseReader()'s { status, headers, next(), all(), close(),
// endedAt(), text() }.
export function openStream(server, method, path, { body, headers = {} } = {}) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const h = { Host: server.host, Accept: 'text/event-stream', ...headers };
  if (payload) h['Content-Type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, method, path, headers: h,
      agent: false, setHost: false }, (res) => resolve(sseReader(req, res)));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

// The server-sent events of response res (of request req), one at a time:
// { status, headers, next(), all(), close(), endedAt(), text() }.  next()
// resolves to the next event {id, event, data} or null at the end; all() to
// the rest; close() drops the connection; endedAt() is when the response
// ended (Date.now()), or null while open; text() what came, as it came.
export function sseReader(req, res) {
  const queue = [];
  const waiters = [];
  let ended = false;
  let buf = '';
  let text = '';
  const push = (e) => { const w = waiters.shift(); if (w) w(e); else queue.push(e); };
  res.setEncoding('utf8');
  res.on('data', (chunk) => {
    text += chunk;
    buf += chunk;
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const e = { id: null, event: 'message', data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const k = line.indexOf(':');
        const f = line.slice(0, k);
        const v = line.slice(k + 1).replace(/^ /, '');
        if (f === 'id') e.id = Number(v);
        else if (f === 'event') e.event = v;
        else if (f === 'data') e.data += v;
      }
      if (!e.data) continue;     /* a comment (keep-alive) only */
      e.data = JSON.parse(e.data);
      push(e);
    }
  });
  let endedAt = null;
  const end = () => {
    if (!ended) { ended = true; endedAt = Date.now(); while (waiters.length) waiters.shift()(null); }
  };
  res.on('end', end);
  res.on('close', end);
  res.on('error', end);
  return {
    status: res.statusCode,
    headers: res.headers,
    text: () => text,
    next: () => (queue.length ? Promise.resolve(queue.shift())
      : ended ? Promise.resolve(null) : new Promise((r) => waiters.push(r))),
    async all() {
      const out = [];
      for (let e = await this.next(); e; e = await this.next()) out.push(e);
      return out;
    },
    close: () => req.destroy(),
    endedAt: () => endedAt,
  };
}
