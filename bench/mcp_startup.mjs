// mcp_startup.mjs -- time from process start to a completed MCP initialize
// plus one tools/call (read_head), the cost an agent host pays when it
// starts `smriti mcp` for a task.
//
// Each run spawns `smriti mcp` (the lean binary, which serves MCP on SQLite
// itself) or `smriti-full mcp` on a seeded SQLite database and plays a
// client over raw pipes the way the SDK does: initialize, wait for the
// answer, then notifications/initialized and tools/call read_head, wait for
// that answer.  The clock runs from just before spawn() to the tools/call
// answer.  Baselines measured in the same invocation, same way:
//   - spawn floor: `smriti-full --help` to exit (process start, nothing else);
//   - CLI: `smriti head demo --json` (lean binary) to exit, the same read
//     through the first agent transport;
//   - SDK: Client + StdioClientTransport connect() + callTool(), what a
//     Node host sees (adds the SDK's own work).
//
// usage: node bench/mcp_startup.mjs [BUILD_DIR] [RUNS]   (bench/mcp_bench.sh builds first)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CHECKPOINT_DOC } from './checkpoint_doc.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUILD = path.resolve(ROOT, process.argv[2] || 'build');
const RUNS = Number(process.argv[3] || 50);
const FULL = path.join(BUILD, 'smriti-full');
const LEAN = path.join(BUILD, 'smriti');

export function seed(db) {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME || '/tmp', SMRITI_DB: db };
  const runOk = (args, input) => {
    const r = spawnSync(LEAN, args, { env, input, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`smriti ${args.join(' ')}: ${r.stderr}`);
  };
  runOk(['space', 'create', 'demo']);
  runOk(['checkpoint', 'create', 'demo', '--from-json', '-'], JSON.stringify(CHECKPOINT_DOC));
  return env;
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(s.length * p))]; };
const ms = (ns) => Number(ns) / 1e6;

// One raw session: spawn -> initialize -> initialized + tools/call -> answer.
function rawRun(env, bin = LEAN) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(bin, ['mcp'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    let buf = '';
    let step = 0;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      buf += d;
      while (buf.includes('\n')) {
        const line = buf.slice(0, buf.indexOf('\n'));
        buf = buf.slice(buf.indexOf('\n') + 1);
        const msg = JSON.parse(line);
        if (step === 0 && msg.id === 0) {
          step = 1;
          child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n' +
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_head","arguments":{"space":"demo"}}}\n');
        } else if (step === 1 && msg.id === 1) {
          if (msg.result?.isError !== false) reject(new Error(line));
          const t1 = process.hrtime.bigint();
          child.stdin.end();
          child.on('exit', () => resolve(ms(t1 - t0)));
        }
      }
    });
    child.stdin.write('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",' +
      '"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}\n');
  });
}

// A whole process run to exit.
function procRun(bin, args, env) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(bin, args, { env, stdio: ['ignore', 'ignore', 'ignore'] });
    child.on('exit', (code) => (code === 0 ? resolve(ms(process.hrtime.bigint() - t0)) : reject(new Error(`${bin} ${code}`))));
  });
}

async function sdkRun(env) {
  const t0 = process.hrtime.bigint();
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport({ command: LEAN, args: ['mcp'], env: { SMRITI_DB: env.SMRITI_DB }, stderr: 'ignore' }));
  const r = await client.callTool({ name: 'read_head', arguments: { space: 'demo' } });
  const t1 = process.hrtime.bigint();
  if (r.isError) throw new Error('read_head failed');
  await client.close();
  return ms(t1 - t0);
}

async function measure(name, fn) {
  const xs = [];
  for (let i = 0; i < 3; i++) await fn();          // warm the page cache
  for (let i = 0; i < RUNS; i++) xs.push(await fn());
  return { name, median: median(xs), p90: pct(xs, 0.9), min: Math.min(...xs) };
}

async function main() {
  const dir = mkdtempSync(path.join(tmpdir(), 'smriti-bench-mcp-'));
  try {
    const env = seed(path.join(dir, 'bench.db'));
    const rows = [];
    rows.push(await measure('spawn floor: smriti-full --help', () => procRun(FULL, ['--help'], env)));
    rows.push(await measure('CLI: smriti head demo --json', () => procRun(LEAN, ['head', 'demo', '--json'], env)));
    rows.push(await measure('MCP raw: start + initialize + tools/call', () => rawRun(env)));
    rows.push(await measure('  the same with smriti-full mcp', () => rawRun(env, FULL)));
    rows.push(await measure('MCP SDK client: connect + callTool', () => sdkRun(env)));
    const base = rows[2].median;
    console.log(`mcp startup, ${RUNS} runs each (ms; ratio = median / MCP raw median)`);
    for (const r of rows) {
      console.log(`  ${r.name.padEnd(44)} median ${r.median.toFixed(2).padStart(7)}  p90 ${r.p90.toFixed(2).padStart(7)}` +
        `  min ${r.min.toFixed(2).padStart(7)}  ratio ${(r.median / base).toFixed(2)}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
