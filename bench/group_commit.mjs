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
// The writers are this process's by default.  On a machine of two cores
// they took a fifth of the CPU of the 32 writers' phase (about 150 us a
// write, beside the server's 500): with CLIENT=c the same writers run in
// bench/group_commit_bench.c (libcurl, one thread), the same requests,
// bodies and checks, for a fraction of that.  Each phase also prints what
// the writers' process spent a write.
//
// usage: node bench/group_commit.mjs [BUILD_DIR]
// Environment: SECS (per phase, default 5), WRITERS (32), SERVE_WORKERS
// (--workers of the server, default 32; the server's own default is 8), DB,
// CLIENT (node or c).
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
const CLIENT = process.env.CLIENT === 'c' ? 'c' : 'node';
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

// The same writers in C (bench-group_commit): [acknowledged, seconds, its CPU seconds].
function cPhase(srv, n, tag, docFile) {
  const spaces = Array.from({ length: n }, (_, i) => `${tag}-${i}`);
  return new Promise((resolve, reject) => {
    execFile(path.join(BUILD, 'bench-group_commit'),
      [`http://${srv.host}:${srv.port}`, docFile, String(SECS), ...spaces],
      (err, out, errText) => {
        if (err) reject(new Error(`bench-group_commit: ${errText || err.message}`));
        else resolve(out.trim().split(' ').map(Number));
      });
  });
}

// Writes per second of n writers at once, and the writers' CPU microseconds a write.
async function phase(srv, n, tag, docFile) {
  if (CLIENT === 'c') {
    const [acked, secs, cpu] = await cPhase(srv, n, tag, docFile);
    return { rate: acked / secs, clientUs: (cpu * 1e6) / acked };
  }
  const deadline = Date.now() + SECS * 1000;
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const counts = await Promise.all(Array.from({ length: n }, (_, i) => writer(srv, `${tag}-${i}`, deadline)));
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(c0);
  const acked = counts.reduce((a, b) => a + b, 0);
  return { rate: acked / secs, clientUs: (cpu.user + cpu.system) / acked };
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'smriti-group-bench-'));
let srv;
try {
  const db = process.env.DB || path.join(dir, 'bench.db');
  const run = `${process.pid}-${Date.now()}`;
  const docFile = path.join(dir, 'doc.json');
  writeFileSync(docFile, JSON.stringify(DOC));
  srv = await startServer(db);
  for (const tag of ['warm', 'one', 'many'])
    for (let i = 0; i < (tag === 'one' ? 1 : WRITERS); i++) {
      const r = await request(srv, 'POST', '/v4/repos', { name: `${run}-${tag}-${i}` });
      if (r.status !== 201) throw new Error(`space: ${r.status} ${JSON.stringify(r.json)}`);
    }
  await phase(srv, WRITERS, `${run}-warm`, docFile);
  const one = await phase(srv, 1, `${run}-one`, docFile);
  const many = await phase(srv, WRITERS, `${run}-many`, docFile);
  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
  const store = db.startsWith('postgres') ? 'PostgreSQL' : 'SQLite';
  const us = (p) => `(writers' CPU ${p.clientUs.toFixed(0)} us a write)`;
  console.log(`durable checkpoint writes through smriti serve (${store}, --workers ${SERVE_WORKERS}), ${SECS} s per phase, ${os.cpus().length} cores, load ${load}, writers in ${CLIENT === 'c' ? 'C' : 'node'}`);
  console.log(`   1 writer                  ${one.rate.toFixed(0).padStart(8)} acknowledged writes/s ${us(one)}`);
  console.log(`   ${String(WRITERS).padEnd(2)} writers at once        ${many.rate.toFixed(0).padStart(8)} acknowledged writes/s ${us(many)}`);
  console.log(`   ratio (${WRITERS} writers / 1 writer): ${(many.rate / one.rate).toFixed(2)}x`);
} finally {
  agent.destroy();
  if (srv) srv.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
