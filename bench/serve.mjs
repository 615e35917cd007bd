// serve.mjs -- what the benchmarks that drive `smriti-full serve` over HTTP
// share (bench/group_commit.mjs, bench/peers/run.mjs and savers.mjs): start
// a server on a free loopback port, send it JSON, read the CPU time a
// process, or a PostgreSQL cluster on this machine, has used.
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';

// `smriti-full serve` of BUILD on database db with `workers` workers;
// resolves to { child, host, port, url, agent } once it listens, the agent
// keeping up to `sockets` connections alive.  stopServer() ends it.
export function startServer(build, db, workers, sockets) {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(build, 'smriti-full'),
      ['serve', '--listen', '127.0.0.1:0', '--quiet', '--workers', String(workers)], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME || '/tmp', SMRITI_DB: db },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/listening on http:\/\/([^:]+):(\d+)/);
      if (m) resolve({ child, host: m[1], port: Number(m[2]), url: `http://${m[1]}:${m[2]}`,
        agent: new http.Agent({ keepAlive: true, maxSockets: sockets }) });
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
}

// Resolves once the server has exited.
export function stopServer(srv) {
  srv.agent.destroy();
  if (srv.child.exitCode !== null || srv.child.signalCode !== null) return Promise.resolve();
  const exited = new Promise((resolve) => srv.child.once('exit', resolve));
  srv.child.kill('SIGTERM');
  return exited;
}

// One request with a JSON body; resolves to { status, json }.
export function request(srv, method, p, body) {
  return new Promise((resolve, reject) => {
    const data = body ? JSON.stringify(body) : '';
    const req = http.request({ host: srv.host, port: srv.port, method, path: p, agent: srv.agent,
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

// The same, throwing unless the answer has that status; resolves to its JSON.
export async function must(srv, method, p, body, status) {
  const r = await request(srv, method, p, body);
  if (r.status !== status) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
}

const CLOCK_TICK_US = 1e6 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

// CPU time (us) process pid has used: utime + stime of /proc/PID/stat.
export function cpuUs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_US;
}

// CPU time (us) of a local PostgreSQL cluster: its postmaster's children
// (the backends, the WAL writer, ...) now alive; the postmaster is the parent
// of the backend of any connection (SELECT pg_backend_pid()).  A backend
// that exits between two readings takes its time with it: read both while
// the connections being measured are open.
export function clusterCpuUs(postmaster) {
  let us = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const fields = readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1].split(' ');
      if (Number(fields[1]) === postmaster) us += (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_US;
    } catch {
      // the process ended while the list was read
    }
  }
  return us;
}

// The postmaster of the cluster a pg client or pool q is connected to.
export async function postmasterOf(q) {
  const pid = (await q.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
}
