// helpers.mjs -- shared helpers of the end-to-end tests: where the binaries
// are, temporary databases, and running the CLI as a whole process.
import { spawnSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BUILD = path.resolve(ROOT, process.env.SMRITI_BUILD || 'build');
export const SMRITI = path.join(BUILD, 'smriti');
export const SMRITI_FULL = path.join(BUILD, 'smriti-full');

// Sanitized binaries cost several times their CPU per call.  A stress test
// (many rounds of the same race) shows its race in the normal build; under
// the sanitizers it runs stress(n) rounds, a fifth, to check the same path
// for memory errors.  scripts/test sets SMRITI_SANITIZED=1 for its sanitizer
// pass; a build directory named like build-asan implies it (docs/testing.md).
export const SANITIZED = process.env.SMRITI_SANITIZED === '1'
  || (process.env.SMRITI_SANITIZED !== '0' && /asan/.test(path.basename(BUILD)));
export const stress = (n) => (SANITIZED ? Math.max(2, Math.ceil(n / 5)) : n);

// A fresh directory with a database path in it; call cleanup() when done.
export function tempDb(name = 'smriti.db') {
  const dir = mkdtempSync(path.join(tmpdir(), 'smriti-test-'));
  return { dir, db: path.join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

// Environment for a child: only what the test chooses, plus PATH and HOME.
export function childEnv(extra = {}) {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME || '/tmp', USER: 'tester' };
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) if (process.env[k]) env[k] = process.env[k];
  return { ...env, ...extra };
}

// Runs the CLI synchronously: { code, stdout, stderr, json() }.
export function run(db, args, { input, env = {}, bin = SMRITI } = {}) {
  const r = spawnSync(bin, args, {
    input, encoding: 'utf8', env: childEnv({ SMRITI_DB: db, ...env }),
  });
  return {
    code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr,
    json() { return JSON.parse(r.stdout); },
  };
}

// Runs the CLI and insists on exit 0; returns parsed JSON when --json was given.
export function ok(db, args, opts) {
  const r = run(db, args, opts);
  if (r.code !== 0) throw new Error(`smriti ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return args.includes('--json') ? r.json() : r.stdout;
}

// The URL a `smriti serve` line announces: "listening on URL", or under
// --log-format json {"message":"listening","url":URL}; null for another line.
export function listeningUrl(line) {
  const text = line.match(/^listening on (http:\/\/\S+:\d+)$/);
  if (text) return text[1];
  if (!line.startsWith('{')) return null;
  try {
    const o = JSON.parse(line);
    return o.message === 'listening' && /^http:\/\/\S+:\d+$/.test(o.url) ? o.url : null;
  } catch { return null; }
}

// Starts a long-running child; resolves once `ready(line)` matches a stdout/stderr line.
export function startProcess(bin, args, { env = {}, ready = () => true, timeoutMs = 15000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${bin} did not start: ${out}`)); }, timeoutMs);
    const onData = (d) => {
      out += d;
      for (const line of out.split('\n')) {
        if (ready(line)) {
          clearTimeout(timer);
          const served = args[0] === 'serve' && out.split('\n').map(listeningUrl).find(Boolean);
          if (!served) {
            resolve({ child, output: () => out });
            return;
          }
          checkFetchesTo(served);
          // The OpenAPI checker of every answer (a child process, schema
          // compiles: seconds on a loaded machine, the event loop blocked) is
          // built now, before any request to this server, not between two
          // requests: a kept-alive socket idle that long is closed by the
          // server, and the next request could take it ("fetch failed: other
          // side closed", seen at load average 25 in chat, authors and
          // noparent-writes).
          import('./openapi-check.mjs').then((m) => m.openapi())
            .then(() => resolve({ child, output: () => out }), reject);
          return;
        }
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${bin} exited ${code}: ${out}`)); });
  });
}

// Every fetch() a test makes to a `smriti serve` started here is checked
// against the OpenAPI document like http-helpers.mjs's request() (an
// undocumented status or a JSON body off its schema rejects the fetch), so
// tests and clients on fetch (the MCP SDK's HTTP transport among them)
// cannot see the server drift from its document either.
const servers = new Set();
let realFetch = null;

function checkFetchesTo(url) {
  servers.add(new URL(url).origin);
  if (realFetch) return;
  realFetch = globalThis.fetch;
  globalThis.fetch = async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (!servers.has(url.origin)) return realFetch(input, init);
    // built before the first request (startProcess), never between two
    const { checkResponse, openapi } = await import('./openapi-check.mjs');
    openapi();
    const res = await realFetch(input, init);
    const method = (init.method || (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const type = res.headers.get('content-type') || '';
    const isJson = /^application\/json\b/.test(type);
    const text = isJson ? await res.clone().text() : '';
    let json = null;
    try { json = JSON.parse(text); } catch { /* not JSON */ }
    checkResponse(method, url.pathname + url.search, { status: res.status, headers: { 'content-type': type }, text, json });
    return res;
  };
}

// A PostgreSQL database of its own on the cluster at base: a fresh schema
// (named from prefix, the process and a counter) that cleanup() drops.
let pgSchemas = 0;
export function pgSchemaDb(base, prefix = 'smriti') {
  const schema = `${prefix}_${process.pid}_${++pgSchemas}_${Math.floor(Math.random() * 1e6)}`;
  const psql = (sql) => {
    const r = spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', base, '-c', sql], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`psql ${sql}: ${r.stderr}`);
  };
  psql(`CREATE SCHEMA ${schema}`);
  const sep = base.includes('?') ? '&' : '?';
  return {
    db: `${base}${sep}options=-csearch_path%3D${schema}`,
    cleanup: () => { try { psql(`DROP SCHEMA ${schema} CASCADE`); } catch { /* cluster gone */ } },
  };
}
