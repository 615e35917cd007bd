// serve.mjs -- what the benchmarks that drive `smriti-full serve` over HTTP
// share (bench/group_commit.mjs, bench/peers/run.mjs): start a server on a
// free loopback port, send it JSON, read the CPU time a process has used.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

export function stopServer(srv) {
  srv.agent.destroy();
  srv.child.kill('SIGTERM');
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
