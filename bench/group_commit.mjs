// group_commit.mjs -- acknowledged durable checkpoint writes per second
// through `smriti-full serve` on one SQLite file (or DB=postgres://...),
// with 1 writer and with WRITERS (32) writers at once, in three kinds of
// write, each kind against its own single writer (same server, same run,
// same checkpoint document):
//   - spread: each writer in a Space of its own, POST /chat/commit with
//     parent_commit_id the HEAD it wrote before (a compare-and-swap that
//     never conflicts, since no one else writes there): what group commit
//     gives, many writes sharing one transaction and one fsync
//     (src/store/group.c);
//   - one Space, /chat/commit without a parent: every writer on the same
//     Space, each checkpoint going on whatever HEAD is (the original
//     product's agent route);
//   - one Space, PATCH /v4/repos/{id}/head without a parent: each write a
//     new summary (PATCH=task: one task added) on top of whatever HEAD is,
//     the Space seeded with the checkpoint document first.
// A write counts once the server acknowledged it (201), which it does after
// the fsync.  A 409 is counted and shown, never hidden: a write without a
// parent must never get one.  After each one-Space phase every acknowledged
// write must be on HEAD's first-parent chain (the Space's log, walked from
// HEAD by parent_hash), and the chain must hold nothing else; the bench
// says so, and exits 1 after its table when a write without a parent got a
// 409 or a write is missing.
//
// Each phase prints writes/s, the ratio to one writer of the same kind,
// the 409s, an acknowledged write's latency (median, 99th percentile), the
// server's CPU time per acknowledged write (user + system of the `smriti
// serve` process from /proc/PID/stat, before and after the phase) and the
// writers' own.  On PostgreSQL the server's figure is the smriti process's
// alone: the database's backends work for it besides.
//
// The writers are in C by default (bench/group_commit_bench.c, libcurl,
// one thread): on two cores node's writers took a fifth of the CPU of the
// 32 writers' phase (about 150 us a write, beside the server's 500) and made
// the single writer slow, which flattered the ratio.  CLIENT=node runs the
// same requests from this process.
//
// usage: node bench/group_commit.mjs [BUILD_DIR]
// Environment: SECS (per phase, default 5), WRITERS (32), SERVE_WORKERS
// (--workers of the server, default 32; the server's own default is 8), DB,
// CLIENT (c or node), PATCH (summary or task).
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHECKPOINT_DOC as DOC } from './checkpoint_doc.mjs';
import { cpuUs, must, request, startServer, stopServer } from './serve.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUILD = path.resolve(ROOT, process.argv[2] || 'build');
const SECS = Number(process.env.SECS || 5);
const WRITERS = Number(process.env.WRITERS || 32);
const SERVE_WORKERS = String(process.env.SERVE_WORKERS || 32);
const CLIENT = process.env.CLIENT === 'node' ? 'node' : 'c';
const PATCH = process.env.PATCH === 'task' ? 'task' : 'summary';

// The kinds of write: the C client's -k, whether the writers share one Space.
const KINDS = [
  { name: 'spread', c: 'parent', oneSpace: false, label: 'own Space each: /chat/commit, parent' },
  { name: 'noparent', c: 'noparent', oneSpace: true, label: 'one Space: /chat/commit, no parent' },
  { name: 'patch', c: PATCH, oneSpace: true,
    label: `one Space: PATCH head, ${PATCH === 'task' ? '+1 task' : 'new summary'}` },
];

// One node writer of a kind until the deadline (what bench-group_commit's writers do).
async function writer(srv, kind, space, index, deadline, out) {
  let parent = null;
  for (let i = 0; Date.now() < deadline; i++) {
    const title = `${space} w${index} step ${i}`;
    const t0 = process.hrtime.bigint();
    let r;
    if (kind.c === 'summary' || kind.c === 'task') {
      const body = kind.c === 'summary' ? { summary: title } : { add: { tasks: [title] } };
      r = await request(srv, 'PATCH', `/v4/repos/${space}/head`, body);
    } else {
      const body = { ...DOC, title, repo_id: space };
      if (kind.c === 'parent' && parent) body.parent_commit_id = parent;
      r = await request(srv, 'POST', '/chat/commit', body);
    }
    if (r.status === 409) {
      out.conflicts++;
      if (kind.c === 'parent') parent = (await must(srv, 'GET', `/v4/repos/${space}`, null, 200)).head;
      continue;
    }
    if (r.status !== 201) throw new Error(`${space}: ${r.status} ${JSON.stringify(r.json)}`);
    out.latencies.push(Number(process.hrtime.bigint() - t0) / 1e3);
    parent = (r.json.checkpoint || r.json).commit_hash;
    out.hashes.push(parent);
  }
}

async function nodePhase(srv, kind, spaces, secs) {
  const out = { conflicts: 0, latencies: [], hashes: [] };
  const deadline = Date.now() + secs * 1000;
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await Promise.all(spaces.map((s, i) => writer(srv, kind, s, i, deadline, out)));
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(c0);
  const lat = out.latencies.sort((a, b) => a - b);
  const at = (q) => (lat.length ? lat[Math.max(0, Math.ceil(q * lat.length) - 1)] : 0);
  return { acked: lat.length, secs: wall, clientUs: cpu.user + cpu.system, conflicts: out.conflicts,
    p50: at(0.5), p99: at(0.99), hashes: out.hashes };
}

// The same writers in C (bench-group_commit).
function cPhase(srv, kind, spaces, dir, secs) {
  const hashFile = path.join(dir, 'hashes.txt');
  return new Promise((resolve, reject) => {
    execFile(path.join(BUILD, 'bench-group_commit'),
      ['-k', kind.c, '-o', hashFile, srv.url, path.join(dir, 'doc.json'),
        String(secs), ...spaces],
      (err, out, errText) => {
        if (err) return reject(new Error(`bench-group_commit: ${errText || err.message}`));
        const [acked, secs, cpu, conflicts, p50, p99] = out.trim().split(' ').map(Number);
        const hashes = readFileSync(hashFile, 'utf8').split('\n').filter(Boolean);
        resolve({ acked, secs, clientUs: cpu * 1e6, conflicts, p50, p99, hashes });
      });
  });
}

// Every acknowledged write of a one-Space phase on HEAD's first-parent
// chain, and nothing else on it but the seed: { ok, text }.
async function chainCheck(srv, space, hashes, seeded) {
  const log = await must(srv, 'GET', `/v4/repos/${space}/commits`, null, 200);
  const { head } = await must(srv, 'GET', `/v4/repos/${space}`, null, 200);
  const parentOf = new Map(log.map((c) => [c.commit_hash, c.parent_hash]));
  const chain = new Set();
  for (let h = head; h && !chain.has(h); h = parentOf.get(h)) chain.add(h);
  const missing = hashes.filter((h) => !chain.has(h)).length;
  const extra = chain.size - seeded - (hashes.length - missing);
  const n = hashes.length.toLocaleString('en-US');
  if (!missing && !extra) return { ok: true, text: `all ${n}` };
  return { ok: false, text: `MISSING ${missing} of ${n}${extra ? `, ${extra} unacknowledged` : ''}` };
}

// One phase: n writers of a kind on fresh Spaces.
async function phase(srv, kind, n, tag, dir, secs = SECS) {
  const names = kind.oneSpace ? [tag] : Array.from({ length: n }, (_, i) => `${tag}-${i}`);
  for (const name of names) await must(srv, 'POST', '/v4/repos', { name }, 201);
  const seeded = kind.name === 'patch' ? 1 : 0;
  if (seeded) await must(srv, 'POST', '/chat/commit', { ...DOC, repo_id: tag }, 201);
  const spaces = kind.oneSpace ? Array(n).fill(tag) : names;
  const cpu0 = cpuUs(srv.child.pid);
  const p = CLIENT === 'c' ? await cPhase(srv, kind, spaces, dir, secs) : await nodePhase(srv, kind, spaces, secs);
  p.serverUs = cpuUs(srv.child.pid) - cpu0;
  p.rate = p.acked / p.secs;
  p.chain = kind.oneSpace ? await chainCheck(srv, tag, p.hashes, seeded) : null;
  return p;
}

const fmt = (x, digits = 0) => x.toLocaleString('en-US', { maximumFractionDigits: digits,
  minimumFractionDigits: digits });
const loadavg = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

function table(rows) {
  const head = ['writes', 'writers', 'writes/s', 'ratio', '409s', 'p50 ms', 'p99 ms', 'server CPU/write',
    "writers' CPU/write", "on HEAD's chain"];
  const cells = rows.map(({ kind, n, p, one }) => [kind.label, String(n), fmt(p.rate),
    `${fmt(p.rate / one.rate, 2)}x`, String(p.conflicts), fmt(p.p50 / 1e3, 1),
    fmt(p.p99 / 1e3, 1), `${fmt(p.serverUs / p.acked)} us`, `${fmt(p.clientUs / p.acked)} us`,
    p.chain ? p.chain.text : '-']);
  const width = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c) => `| ${c.map((x, i) => (i === 0 || i === 9 ? x.padEnd(width[i]) : x.padStart(width[i])))
    .join(' | ')} |`;
  console.log(line(head));
  console.log(`|${width.map((w, i) => (i === 0 || i === 9 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|')}|`);
  for (const c of cells) console.log(line(c));
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'smriti-group-bench-'));
let srv;
try {
  const db = process.env.DB || path.join(dir, 'bench.db');
  const run = `${process.pid}-${Date.now()}`;
  const start = { date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), load: loadavg() };
  writeFileSync(path.join(dir, 'doc.json'), JSON.stringify(DOC));
  srv = await startServer(BUILD, db, SERVE_WORKERS, WRITERS + 4);
  await phase(srv, KINDS[0], WRITERS, `${run}-warm`, dir, Math.min(SECS, 2));
  const rows = [];
  for (const kind of KINDS) {
    const one = await phase(srv, kind, 1, `${run}-${kind.name}-1`, dir);
    const many = await phase(srv, kind, WRITERS, `${run}-${kind.name}-${WRITERS}`, dir);
    rows.push({ kind, n: 1, p: one, one }, { kind, n: WRITERS, p: many, one });
  }
  const store = db.startsWith('postgres') ? 'PostgreSQL' : 'SQLite';
  console.log(`durable writes through smriti serve (${store}, --workers ${SERVE_WORKERS}), ${SECS} s a phase, ` +
    `writers in ${CLIENT === 'c' ? 'C' : 'node'}`);
  const rev = spawnSync('git', ['-C', ROOT, 'describe', '--always', '--dirty'], { encoding: 'utf8' }).stdout?.trim();
  console.log(`${start.date}, Smriti ${rev || '(not a git checkout)'}, ${os.cpus().length} cores, ` +
    `load average ${start.load} at the start, ${loadavg()} at the end`);
  console.log('ratio: writes/s over one writer of the same kind; server CPU: user + system of the smriti serve ' +
    'process (/proc/PID/stat) over the writes it acknowledged');
  console.log('');
  table(rows);
  const broken = rows.filter(({ kind, p }) => (kind.c !== 'parent' && p.conflicts) || (p.chain && !p.chain.ok));
  if (broken.length) {
    console.log('');
    for (const { kind, n, p } of broken)
      console.log(`BROKEN GUARANTEE: ${kind.label}, ${n} writer(s): ${p.conflicts} 409s, chain ${p.chain?.text}`);
    process.exitCode = 1;
  }
} finally {
  if (srv) await stopServer(srv);
  rmSync(dir, { recursive: true, force: true });
}
