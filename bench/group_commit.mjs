// group_commit.mjs -- acknowledged durable checkpoint writes per second
// through `smriti-full serve` on one SQLite file, with 1 writer and with
// WRITERS (32) writers at once, each writer in a Space of its own writing on
// the HEAD it wrote before (POST /chat/commit with parent_commit_id), so no
// write conflicts with another.  The ratio is what group commit gives: many
// writes sharing one transaction and one fsync (src/store/group.c).  Every
// 201 is counted only after the server acknowledged it, which it does after
// the fsync.  Same server, same run, same checkpoint document.
//
// With DB=postgres://... the same runs on PostgreSQL (fresh Spaces each
// run), where the server does no grouping of its own: each worker commits on
// its connection, and what 32 writers gain is PostgreSQL's group commit
// (concurrent commits flushed by one WAL write).
//
// usage: node bench/group_commit.mjs [BUILD_DIR]
// Environment: SECS (per phase, default 5), WRITERS (32), SERVE_WORKERS
// (--workers of the server, default 32; the server's own default is 8), DB.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHECKPOINT_DOC as DOC } from './checkpoint_doc.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUILD = path.resolve(ROOT, process.argv[2] || 'build');
const SECS = Number(process.env.SECS || 5);
const WRITERS = Number(process.env.WRITERS || 32);
const SERVE_WORKERS = String(process.env.SERVE_WORKERS || 32);
const agent = new http.Agent({ keepAlive: true, maxSockets: WRITERS + 4 });

function startServer(db) {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(BUILD, 'smriti-full'),
      ['serve', '--listen', '127.0.0.1:0', '--quiet', '--workers', SERVE_WORKERS], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME || '/tmp', SMRITI_DB: db },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/listening on http:\/\/([^:]+):(\d+)/);
      if (m) resolve({ child, host: m[1], port: Number(m[2]) });
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
}

function request(srv, method, p, body) {
  return new Promise((resolve, reject) => {
    const data = body ? JSON.stringify(body) : '';
    const req = http.request({ host: srv.host, port: srv.port, method, path: p, agent,
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } },
    (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode, json: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

// One writer: checkpoints on its own Space until the deadline; returns how many were acknowledged.
async function writer(srv, space, deadline) {
  let parent = null;
  let acked = 0;
  for (let i = 0; Date.now() < deadline; i++) {
    const body = { ...DOC, title: `${space} step ${i}`, repo_id: space };
    if (parent) body.parent_commit_id = parent;
    const r = await request(srv, 'POST', '/chat/commit', body);
    if (r.status !== 201) throw new Error(`${space}: ${r.status} ${JSON.stringify(r.json)}`);
    parent = r.json.commit_hash;
    acked++;
  }
  return acked;
}

async function phase(srv, n, tag) {
  const deadline = Date.now() + SECS * 1000;
  const t0 = process.hrtime.bigint();
  const counts = await Promise.all(Array.from({ length: n }, (_, i) => writer(srv, `${tag}-${i}`, deadline)));
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  return counts.reduce((a, b) => a + b, 0) / secs;
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'smriti-group-bench-'));
let srv;
try {
  const db = process.env.DB || path.join(dir, 'bench.db');
  const run = `${process.pid}-${Date.now()}`;
  srv = await startServer(db);
  for (const tag of ['warm', 'one', 'many'])
    for (let i = 0; i < (tag === 'one' ? 1 : WRITERS); i++) {
      const r = await request(srv, 'POST', '/v4/repos', { name: `${run}-${tag}-${i}` });
      if (r.status !== 201) throw new Error(`space: ${r.status} ${JSON.stringify(r.json)}`);
    }
  await phase(srv, WRITERS, `${run}-warm`);
  const one = await phase(srv, 1, `${run}-one`);
  const many = await phase(srv, WRITERS, `${run}-many`);
  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
  const store = db.startsWith('postgres') ? 'PostgreSQL' : 'SQLite';
  console.log(`durable checkpoint writes through smriti serve (${store}, --workers ${SERVE_WORKERS}), ${SECS} s per phase, ${os.cpus().length} cores, load ${load}`);
  console.log(`   1 writer                  ${one.toFixed(0).padStart(8)} acknowledged writes/s`);
  console.log(`   ${String(WRITERS).padEnd(2)} writers at once        ${many.toFixed(0).padStart(8)} acknowledged writes/s`);
  console.log(`   ratio (${WRITERS} writers / 1 writer): ${(many / one).toFixed(2)}x`);
} finally {
  agent.destroy();
  if (srv) srv.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
