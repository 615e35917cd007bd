// mcp_calls.mjs -- tool calls per second over one MCP session.
//
// One `smriti-full mcp` process on a seeded SQLite database (the same
// checkpoint as mcp_startup.mjs: 8 decisions, 6 tasks, a 1 KiB artifact),
// after initialize:
//   - sequential: N read_head calls, each sent after the previous answer
//     (what one agent's tool loop does);
//   - pipelined: N read_head calls written at once, answers read as they
//     come (the server batches its writes when input is queued);
//   - writes: M write_checkpoint calls in sequence, each with the parent
//     the previous one returned (every one is a durable SQLite commit);
//   - HTTP peer: N/10 sequential read_head calls through POST /mcp on
//     `smriti serve` (keep-alive), the same tool over the other transport.
//
// usage: node bench/mcp_calls.mjs [BUILD_DIR] [N] [M]   (bench/mcp_bench.sh builds first)
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { seed } from './mcp_startup.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUILD = path.resolve(ROOT, process.argv[2] || 'build');
const N = Number(process.argv[3] || 5000);
const M = Number(process.argv[4] || 500);
const FULL = path.join(BUILD, 'smriti-full');

// A line-oriented MCP session over pipes.
function session(env) {
  const child = spawn(FULL, ['mcp'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  const waiters = [];
  const lines = [];
  let buf = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (waiters.length) waiters.shift()(line);
      else lines.push(line);
    }
  });
  const next = () => (lines.length ? Promise.resolve(lines.shift()) : new Promise((r) => waiters.push(r)));
  return {
    send: (msgs) => child.stdin.write(msgs.map((m) => JSON.stringify(m)).join('\n') + '\n'),
    next,
    close: () => new Promise((r) => { child.on('exit', r); child.stdin.end(); }),
  };
}

const readHead = (id) => ({ jsonrpc: '2.0', id, method: 'tools/call',
  params: { name: 'read_head', arguments: { space: 'demo' } } });

function check(line, id) {
  const msg = JSON.parse(line);
  if (msg.id !== id || msg.result?.isError !== false) throw new Error(`bad answer for ${id}: ${line.slice(0, 200)}`);
  return msg.result.structuredContent;
}

async function sequential(s, n, first) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    s.send([readHead(first + i)]);
    check(await s.next(), first + i);
  }
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

async function pipelined(s, n, first) {
  const t0 = process.hrtime.bigint();
  const batch = [];
  for (let i = 0; i < n; i++) batch.push(readHead(first + i));
  s.send(batch);
  for (let i = 0; i < n; i++) check(await s.next(), first + i);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

async function writes(s, m, first) {
  s.send([readHead(first)]);
  let parent = check(await s.next(), first).commit_hash;
  const t0 = process.hrtime.bigint();
  for (let i = 1; i <= m; i++) {
    s.send([{ jsonrpc: '2.0', id: first + i, method: 'tools/call', params: { name: 'write_checkpoint',
      arguments: { space: 'demo', parent, title: `step ${i}`, decisions: ['keep going'], tasks: [`task ${i}`] } } }]);
    parent = check(await s.next(), first + i).commit_hash;
  }
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

function startServe(env) {
  return new Promise((resolve, reject) => {
    const child = spawn(FULL, ['serve', '--listen', '127.0.0.1:0', '--quiet'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

function post(agent, port, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/mcp', agent, headers: {
      'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function httpPeer(env, n) {
  const { child, port } = await startServe(env);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < 20; i++) check(await post(agent, port, JSON.stringify(readHead(i))), i);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) check(await post(agent, port, JSON.stringify(readHead(i))), i);
    return Number(process.hrtime.bigint() - t0) / 1e9;
  } finally {
    agent.destroy();
    child.kill('SIGTERM');
  }
}

async function main() {
  const dir = mkdtempSync(path.join(tmpdir(), 'smriti-bench-mcp-'));
  try {
    const env = seed(path.join(dir, 'bench.db'));
    const s = session(env);
    s.send([{ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25',
      capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }]);
    await s.next();
    s.send([{ jsonrpc: '2.0', method: 'notifications/initialized' }]);
    await sequential(s, 200, 1000000);          // warm-up
    const seq = await sequential(s, N, 1);
    const pipe = await pipelined(s, N, N + 1);
    const wr = await writes(s, M, 2 * N + 1);
    await s.close();
    const peer = await httpPeer(env, Math.max(1, Math.floor(N / 10)));
    const rate = (n, secs) => `${Math.round(n / secs).toString().padStart(7)} calls/s  (${(secs * 1e6 / n).toFixed(1)} us/call)`;
    console.log(`mcp tool calls over one stdio session (${N} read_head, ${M} write_checkpoint)`);
    console.log(`  read_head, sequential        ${rate(N, seq)}`);
    console.log(`  read_head, pipelined         ${rate(N, pipe)}  ratio ${(seq / pipe).toFixed(2)}x sequential`);
    console.log(`  write_checkpoint, sequential ${rate(M, wr)}`);
    console.log(`  read_head over HTTP /mcp     ${rate(Math.floor(N / 10), peer)}  (keep-alive, sequential)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
