// balancer.mjs -- what the load balancer of docs/scale-out.md adds to the
// agent's hottest read (issue 29): SERVERS `smriti serve` (default 3) on one
// PostgreSQL behind Debian's nginx, round robin, TLS, the documented
// configuration (tests/js/nginx-helpers.mjs starts it as the tests do).
// GET /repos/{id}/head is read READS times (default 500) over one kept-alive
// connection by curl (libcurl: a C client, not this process's event loop),
// straight to one server (HTTP) and through nginx (HTTPS, nginx keeping its
// own connections to the servers alive), in ROUNDS alternating rounds
// (default 3), so that a shared machine's load falls on both alike.  Prints
// per round and pooled: the median and p90 of curl's time_total of each
// path, and the difference of the medians (what nginx and TLS add), and the
// CPU time nginx spent per read (what a loaded machine moves less).
//
//   SMRITI_TEST_PG=postgres://... node bench/balancer.mjs BUILD
//   (bench/balancer.sh builds first)
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const build = process.argv[2] || 'build';
process.env.SMRITI_BUILD = path.resolve(build);
const PG = process.env.SMRITI_BENCH_PG || process.env.SMRITI_TEST_PG;
if (!PG) {
  console.error('balancer.mjs needs a PostgreSQL: SMRITI_BENCH_PG or SMRITI_TEST_PG (scripts/pg-cluster.sh start)');
  process.exit(2);
}
const SERVERS = Number(process.env.SERVERS || 3);
const READS = Number(process.env.READS || 500);
const ROUNDS = Number(process.env.ROUNDS || 3);

const { pgSchemaDb } = await import('../tests/js/helpers.mjs');
const { startServer, expectStatus } = await import('../tests/js/http-helpers.mjs');
const { NGINX, prepareBalancer } = await import('../tests/js/nginx-helpers.mjs');
if (!NGINX) {
  console.error("balancer.mjs needs nginx (scripts/deps.sh test installs Debian's nginx)");
  process.exit(2);
}

// READS reads of url by one curl over one connection: each one's seconds,
// the first (connection set-up) left out.
function reads(url, extra) {
  const args = ['-s', '-w', '%{http_code} %{time_total} %header{x-upstream}\\n', ...extra];
  for (let i = 0; i <= READS; i++) args.push('-o', '/dev/null', url);
  const r = spawnSync('curl', args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`curl: ${r.stderr}`);
  const lines = r.stdout.trim().split('\n').map((l) => l.split(' '));
  const bad = lines.find(([code]) => code !== '200');
  if (bad) throw new Error(`${url}: HTTP ${bad[0]}`);
  const ms = lines.slice(1).map(([, t]) => Number(t) * 1000);
  if (process.env.BY_UPSTREAM) {
    const by = {};
    for (const [, t, u] of lines.slice(1)) (by[u || 'direct'] ||= []).push(Number(t) * 1000);
    for (const [u, v] of Object.entries(by)) console.log(`  ${u}: ${v.length} reads, ${fmt(v)}`);
  }
  return ms;
}

// CPU time (ns, /proc/PID/schedstat) of the process pid and its children:
// nginx's master and worker.  Wall times on a shared machine move with its
// load; the CPU nginx spends per read moves much less.
function cpuNs(pid) {
  const own = (p) => Number(readFileSync(`/proc/${p}/schedstat`, 'utf8').split(' ')[0]);
  let ns = own(pid);
  for (const d of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) ns += own(d);
    } catch { /* gone */ }
  }
  return ns;
}

const q = (v, p) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(v.length * p))];
const fmt = (v) => `median ${q(v, 0.5).toFixed(3)} ms, p90 ${q(v, 0.9).toFixed(3)} ms`;

const lb = await prepareBalancer();
const db = pgSchemaDb(PG, 'smriti_bench_lb');
const servers = [];
try {
  const env = { SMRITI_ALLOWED_HOSTS: lb.host, SMRITI_TRUSTED_PROXIES: '127.0.0.1' };
  servers.push(...await Promise.all(Array.from({ length: SERVERS },
    () => startServer(db.db, { args: ['--quiet'], env }))));
  await lb.start(servers.map((s) => s.host));
  const space = await expectStatus(servers[0], 'POST', '/v4/repos', 201, { body: { name: 'bench' } });
  await expectStatus(servers[0], 'POST', '/v4/repos/bench/commits', 201,
    { body: { checkpoint: { title: 'one', decisions: ['measure the head read'] } } });
  const p = `/repos/${space.id}/head`;
  const direct = () => reads(`http://${servers[0].host}${p}`, []);
  const through = () => reads(`https://${lb.host}${p}`,
    ['--cacert', path.join(lb.dir, 'cert.pem'), '--resolve', `${lb.host}:127.0.0.1`]);
  through();       // warm: nginx's connections to every server
  const all = { direct: [], through: [] };
  let nginxNs = 0;
  console.log(`${SERVERS} servers behind nginx; GET ${p}, ${READS} reads per path and round`);
  for (let r = 1; r <= ROUNDS; r++) {
    const d = direct();
    const c0 = cpuNs(lb.child.pid);
    const t = through();
    nginxNs += cpuNs(lb.child.pid) - c0;
    all.direct.push(...d);
    all.through.push(...t);
    console.log(`round ${r}: straight to a server ${fmt(d)}; through nginx (TLS) ${fmt(t)};`
      + ` added ${(q(t, 0.5) - q(d, 0.5)).toFixed(3)} ms`);
  }
  console.log(`pooled: straight ${fmt(all.direct)}; through nginx ${fmt(all.through)};`
    + ` added ${(q(all.through, 0.5) - q(all.direct, 0.5)).toFixed(3)} ms at the median,`
    + ` ${(q(all.through, 0.9) - q(all.direct, 0.9)).toFixed(3)} ms at p90;`
    + ` nginx's CPU ${(nginxNs / 1000 / (ROUNDS * (READS + 1))).toFixed(1)} us per read`);
} finally {
  await lb.stop();
  for (const s of servers) await s.stop();
  db.cleanup();
}
