// chat_send.mjs -- the server's own overhead per chat.send against a fake
// provider that answers at once, at 10, 1,000 and 10,000 prior turns.
//
// For each size, bench-chat_send seeds SESSIONS sessions (each in its own
// Space, mounted on a Checkpoint) holding N turns of 200 characters; the real
// `smriti-full serve` then gets one POST /v4/chat/send per session, one at a
// time.  Each send reports context.timing {total_us, provider_us}, where
// provider_us is the time spent in the HTTP exchange with the provider; the
// server's overhead is total_us - provider_us (store reads and writes with
// their fsyncs, context assembly, request/reply JSON).  cpu_us is the CPU
// time of the thread running the operation (the client side of the provider
// exchange included), which a busy machine inflates far less than wall
// time.  The client's round trip minus provider_us adds the HTTP server and
// loopback on top.
//
// usage: node bench/chat_send.mjs [BUILD_DIR]   (bench/chat_send.sh builds first)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeProvider } from '../tests/fake-provider/server.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUILD = path.resolve(ROOT, process.argv[2] || 'build');
const SIZES = [[10, 100], [1000, 100], [10000, 30]];   // [turns, sessions]
const CHARS = 200;
const MODEL = 'gpt-4o-mini';                         // budget 350,000 characters

function startServer(db, fake) {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(BUILD, 'smriti-full'), ['serve', '--listen', '127.0.0.1:0', '--quiet'], {
      env: {
        PATH: process.env.PATH, HOME: process.env.HOME || '/tmp', SMRITI_DB: db,
        OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: `${fake.url}/v1`,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/listening on (http:\/\/\S+:\d+)/);
      if (m) resolve({ child, url: m[1] });
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
}

async function send(url, sessionId, message) {
  const t0 = process.hrtime.bigint();
  const res = await fetch(`${url}/v4/chat/send`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ session_id: sessionId, message, provider: 'openai', model: MODEL }),
  });
  const body = await res.json();
  const rttUs = Number(process.hrtime.bigint() - t0) / 1000;
  if (res.status !== 200) throw new Error(`send: ${res.status} ${JSON.stringify(body)}`);
  return { rttUs, ...body.context.timing, included: body.context.turns_included.length };
}

const pct = (v, p) => {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (us) => (us / 1000).toFixed(2).padStart(7);

async function runSize(fake, n, sessions) {
  const dir = mkdtempSync(path.join(tmpdir(), 'smriti-chat-bench-'));
  const db = path.join(dir, 'bench.db');
  try {
    const seed = spawnSync(path.join(BUILD, 'bench-chat_send'),
      ['seed', db, String(sessions + 1), String(n), String(CHARS)], { encoding: 'utf8' });
    if (seed.status !== 0) throw new Error(`seed failed: ${seed.stderr}`);
    const ids = seed.stdout.trim().split('\n');
    const server = await startServer(db, fake);
    try {
      for (let i = 0; i < 3; i++) await send(server.url, ids[0], `warm-up ${i}`);   // connections, caches
      const runs = [];
      for (const id of ids.slice(1)) runs.push(await send(server.url, id, 'What should we do next?'));
      const over = runs.map((r) => r.total_us - r.provider_us);
      const overRtt = runs.map((r) => r.rttUs - r.provider_us);
      console.log(`${String(n).padStart(6)} turns  sent ${String(runs[0].included).padStart(5)}` +
        `  overhead p50 ${ms(pct(over, 50))} p90 ${ms(pct(over, 90))} min ${ms(Math.min(...over))}` +
        `  cpu p50 ${ms(pct(runs.map((r) => r.cpu_us), 50))}` +
        `  | +HTTP p50 ${ms(pct(overRtt, 50))}` +
        `  | provider p50 ${ms(pct(runs.map((r) => r.provider_us), 50))}  (ms, ${runs.length} sends)`);
    } finally {
      server.child.removeAllListeners('exit');
      server.child.kill('SIGTERM');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const fake = await startFakeProvider({ port: 0 });
console.log(`chat.send overhead against a fake provider answering at once (${CHARS}-character turns, model ${MODEL})`);
try {
  for (const [n, sessions] of SIZES) await runSize(fake, n, sessions);
} finally {
  await fake.close();
}
