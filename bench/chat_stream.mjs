// chat_stream.mjs -- the streaming chat server under load (issue 10): STREAMS
// streaming sends at once (default 500), each in its own session, against a
// fake provider that trickles every reply over TRICKLE_MS (default 5000) in
// DELTAS deltas; while they run, an agent's writes (POST /chat/commit) and
// reads (GET /repos/{id}/head) one after another.  Prints:
//   - how many streams completed with the whole reply (and its status),
//   - the server's peak resident set (VmHWM) after each round: the first is
//     STREAMS sends at once; later rounds add the ended generations of the
//     earlier ones, which the server keeps readable for five minutes,
//   - p50/p99 of /chat/commit and /repos/{id}/head while the sends are
//     admitted and while they all stream, against the same requests with no
//     chat load measured just before each round (ratio of the p99s),
//   - the relay latency of deltas: from the fake provider writing a delta
//     (its `stamp`, on the machine's monotonic clock) to this client reading it
//     from the server's event stream, for one stream alone and under load,
//   - the server's side of the agent's requests in each window, from its
//     GET /metrics histograms: whole request, waiting for a worker, waiting
//     behind other transactions, the transaction with its fsync (and the chat
//     sends' own), so that a tail can be placed,
//   - the CPU time of each process during the load (on a shared 2-core
//     machine it says more than wall time).
//
// ROUNDS (default 3) rounds of [no load, load] run on one server and their
// samples are pooled: one round gives the agent about a hundred requests of
// each kind while the sends are admitted, whose p99 is then nearly their
// maximum -- one scheduler hiccup of another process on the machine.  Each
// round's ratios are printed too.
//
// The fake provider and the stream clients stand in for other machines (the
// provider's servers, people's browsers), yet here they share the server's
// two cores and, with 500 streams, take more CPU than the server.  With
// LOAD_NICE=N (0..19, default 0) they run at nice N -- the fake, and this
// process, which holds the streams -- while the server and the agent (a
// child started before the renice) keep the priority they started with:
// what a remote load would leave of the machine.  Report figures both ways.
// The streams come from CLIENT_ADDRESSES loopback addresses (127.0.0.2 and
// up), since the server admits at most 256 connections from one address.
// The relay latency is read in this process, whose event loop is part of it
// (an upper bound on the server's share; with LOAD_NICE, a looser one).
//
// SMRITI_BACKGROUND_NICE and MALLOC_ARENA_MAX are passed to the server;
// BENCH_WINDOWS=1 prints each round's admission window on the monotonic clock
// (perf record -k CLOCK_MONOTONIC, then perf report --time START,END).
//
// usage: [ROUNDS=3] [LOAD_NICE=0] node bench/chat_stream.mjs [BUILD_DIR [STREAMS [TRICKLE_MS [DELTAS]]]]
//        node bench/chat_stream.mjs --agent PORT   (the agent's side: reads "MS" lines, writes JSON lines)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUILD = path.resolve(ROOT, process.argv[2] || 'build');
const STREAMS = Number(process.argv[3] || 500);
const TRICKLE_MS = Number(process.argv[4] || 5000);
const DELTAS = Number(process.argv[5] || 50);
const SAMPLES = 300;
const ROUNDS = Math.max(1, Number(process.env.ROUNDS || 3));
const LOAD_NICE = Math.min(19, Math.max(0, Number(process.env.LOAD_NICE || 0)));

// the fake's `stamp` clock: CLOCK_MONOTONIC, the same in every process of the machine
const nowMicros = () => Number(process.hrtime.bigint() / 1000n);

function start(bin, args, env, ready) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env: { PATH: process.env.PATH, HOME: process.env.HOME || '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const look = (d) => {
      out += d;
      const m = ready(out);
      if (m) resolve({ child, match: m });
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.on('exit', (code) => reject(new Error(`${bin} exited (${code}): ${out}`)));
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

function call(port, method, p, body) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: p, agent,
      headers: payload ? { 'Content-Type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode, json: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

// all of 127/8 is loopback on Linux; 125 streams from each of 4 addresses
const CLIENT_ADDRESSES = 4;

// One streaming send; resolves to {done, status, content, lags: [µs per delta]}.
function stream(port, sessionId, onStart = () => {}, n = 0) {
  const body = JSON.stringify({ session_id: sessionId, message: 'stream to me', provider: 'openai', model: 'm' });
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/v4/chat/send', agent: false,
      localAddress: `127.0.0.${2 + (n % CLIENT_ADDRESSES)}`,
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' } }, (res) => {
      const out = { done: false, status: null, content: '', lags: [], lastDelta: 0, endLag: NaN };
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        const at = nowMicros();
        buf += c;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const line = /^data: (.*)$/m.exec(block);
          if (!line) continue;           // a keep-alive comment
          const ev = /^event: (.*)$/m.exec(block)?.[1];
          const data = JSON.parse(line[1]);
          if (ev === 'generation') onStart();
          if (ev === 'delta') {
            out.lags.push(at - Number(data.text));
            out.lastDelta = at;
          }
          if (ev === 'done') {
            out.endLag = at - out.lastDelta;
            out.done = true;
            out.status = data.assistant_turn.status;
            out.content = data.assistant_turn.content;
          }
        }
      });
      res.on('end', () => resolve(out));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.write(body);
    req.end();
  });
}

const pct = (v, p) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN;
};

// The request's time in µs; at[] gets when it started (nowMicros: comparable across processes).
async function timed(fn, at) {
  const t = performance.now();
  at.push(nowMicros());
  const r = await fn();
  if (r.status >= 300) throw new Error(`status ${r.status}: ${JSON.stringify(r.json)}`);
  return (performance.now() - t) * 1000;
}

// SAMPLES of each agent request, alternating, one at a time; or as many as fit before deadline (ms).
async function agentLatencyHere(port, deadline = Infinity) {
  const commit = [];
  const head = [];
  const commitAt = [];
  const headAt = [];
  const u0 = process.cpuUsage();
  const more = (i) => (deadline === Infinity ? i < SAMPLES : performance.now() < deadline);
  for (let i = 0; more(i); i++) {
    commit.push(await timed(() => call(port, 'POST', '/chat/commit', { repo_id: 'bench', title: `agent write ${i}` }), commitAt));
    head.push(await timed(() => call(port, 'GET', '/repos/bench/head'), headAt));
  }
  const u = process.cpuUsage(u0);
  return { commit, head, commitAt, headAt, cpu: (u.user + u.system) / 1e6 };
}

// The agent: a child process of its own, so that parsing 500 streams here does
// not delay it and so that it keeps its priority when this process is reniced.
// measure(ms) runs SAMPLES of each request, or until ms passed (0: no limit).
function startAgent(port) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--agent', String(port)],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  let waiting = null;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    out += d;
    const i = out.indexOf('\n');
    if (i >= 0 && waiting) {
      const line = out.slice(0, i);
      out = out.slice(i + 1);
      const w = waiting;
      waiting = null;
      w.resolve(JSON.parse(line));
    }
  });
  child.on('exit', (code) => { if (waiting) waiting.reject(new Error(`agent exited ${code}`)); });
  return {
    pid: child.pid,
    measure(ms = 0) {
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        child.stdin.write(`${ms}\n`);
      });
    },
    stop() { child.stdin.end(); },
  };
}

function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;     // utime + stime, in clock ticks of 1/100 s
}

function rssPeakKiB(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

// The server's latency histograms (GET /metrics), cumulative: {series: {les: [[le, n]], sum, count}}.
async function scrape(port) {
  const text = await new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/metrics', agent }, (res) => {
      let t = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { t += c; });
      res.on('end', () => resolve(t));
    }).on('error', reject);
  });
  const out = {};
  const get = (k) => (out[k] ??= { les: [], sum: 0, count: 0 });
  for (const line of text.split('\n')) {
    let m = /^(\w+)_bucket\{(.*?),?le="([^"]+)"\} (\d+)$/.exec(line);
    if (m) { get(`${m[1]}{${m[2]}}`).les.push([m[3] === '+Inf' ? Infinity : Number(m[3]), Number(m[4])]); continue; }
    m = /^(\w+)_(sum|count)\{(.*)\} ([\d.]+)$/.exec(line);
    if (m) { get(`${m[1]}{${m[3]}}`)[m[2]] = Number(m[4]); continue; }
    m = /^(\w+) ([\d.]+)$/.exec(line);
    if (m) get(`${m[1]}{}`).value = Number(m[2]);
  }
  return out;
}

// What the server saw between two scrapes, summed over windows: [[before, after], ...].
const SERIES = [
  ['commit, whole request', 'smriti_http_request_seconds{method="POST",route="/chat/commit"}'],
  ['head, whole request', 'smriti_http_request_seconds{method="GET",route="/repos/{id}/head"}'],
  ['waiting for a worker', 'smriti_http_worker_queue_seconds{pool="worker"}'],
  ['write waiting behind others', 'smriti_store_write_wait_seconds{writer="foreground"}'],
  ['write transaction + fsync', 'smriti_store_write_seconds{writer="foreground"}'],
  ['chat sends: waiting for a chat worker', 'smriti_http_worker_queue_seconds{pool="chat"}'],
  ['chat sends: write waiting', 'smriti_store_write_wait_seconds{writer="background"}'],
  ['chat sends: write transaction + fsync', 'smriti_store_write_seconds{writer="background"}'],
  ['transactions (commit group)', 'smriti_store_write_batches_total{}'],
];

function serverSide(windows) {
  return SERIES.map(([label, key]) => {
    let count = 0;
    let sum = 0;
    const les = new Map();
    for (const [a, b] of windows) {
      const x = a[key];
      const y = b[key];
      if (!y) continue;
      count += y.count - (x?.count ?? 0);
      sum += y.sum - (x?.sum ?? 0);
      y.les.forEach(([le, n], i) => les.set(le, (les.get(le) ?? 0) + n - (x?.les[i]?.[1] ?? 0)));
    }
    if (!les.size) {          // a counter
      for (const [a, b] of windows) count += (b[key]?.value ?? 0) - (a[key]?.value ?? 0);
      return { label, count, mean: NaN, p99: NaN };
    }
    const p99 = [...les].find(([, n]) => n >= 0.99 * count)?.[0];
    return { label, count, mean: count ? (sum / count) * 1e6 : NaN, p99: p99 === undefined ? NaN : p99 * 1e6 };
  });
}

const fmt = (us) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(0)} µs`);

async function main() {
  const dir = mkdtempSync(path.join(process.env.TMPDIR || tmpdir(), 'smriti-stream-'));
  const fake = await start(process.execPath, [path.join(ROOT, 'tests/fake-provider/server.mjs'), '--port', '0'], {},
    (out) => /LISTENING (\d+)/.exec(out));
  const fport = Number(fake.match[1]);
  const srv = await start(path.join(BUILD, 'smriti-full'), ['serve', '--listen', '127.0.0.1:0', '--quiet'], {
    SMRITI_DB: path.join(dir, 'bench.db'), OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: `http://127.0.0.1:${fport}/v1`,
    SMRITI_PROVIDER_RETRIES: '0',
    ...(process.env.SMRITI_BACKGROUND_NICE ? { SMRITI_BACKGROUND_NICE: process.env.SMRITI_BACKGROUND_NICE } : {}),
    ...(process.env.MALLOC_ARENA_MAX ? { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX } : {}),
  }, (out) => /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out));
  const port = Number(srv.match[1]);
  const script = (steps) => new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: fport, method: 'POST', path: '/_control/script' }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ steps }));
  });
  let agentProc = null;
  try {
    await call(port, 'POST', '/v4/repos', { name: 'bench' });
    const sessions = [];
    for (let i = 0; i < STREAMS; i++) {
      sessions.push((await call(port, 'POST', '/v4/repos/bench/sessions', {})).json.id);
    }
    agentProc = startAgent(port);
    if (LOAD_NICE) {
      os.setPriority(fake.child.pid, LOAD_NICE);
      os.setPriority(LOAD_NICE);
    }
    await agentProc.measure();                      // warm-up
    // one stream alone: the relay latency with nothing else running
    const alone = [];
    const aloneFirst = [];
    for (let i = 0; i < 20; i++) {
      await script([{ reply: 'a b c d e f g h i j', deltas: 10, trickle_ms: 200, stamp: true }]);
      const r = await stream(port, sessions[i % sessions.length], () => {}, i);
      alone.push(...r.lags);
      aloneFirst.push(r.lags[0]);
    }
    const reply = Array.from({ length: DELTAS }, (_, i) => `w${i}`).join(' ');
    const base = { commit: [], head: [] };
    const admit = { commit: [], head: [] };
    const load = { commit: [], head: [] };
    const rounds = [];
    const windows = { base: [], admit: [], load: [] };
    const cpu = { srv: 0, fake: 0, me: 0, agent: 0 };
    let complete = 0;
    let results = [];
    for (let round = 0; round < ROUNDS; round++) {
      const m0 = await scrape(port);
      const b = await agentProc.measure();
      const m1 = await scrape(port);
      await script(sessions.map(() => ({ reply, deltas: DELTAS, trickle_ms: TRICKLE_MS, stamp: true })));
      const t0 = performance.now();
      const c0 = { srv: cpuSeconds(srv.child.pid), fake: cpuSeconds(fake.child.pid), me: process.cpuUsage(),
        mono: nowMicros() };
      let started = 0;
      let admitted;
      const allStarted = new Promise((resolve) => { admitted = resolve; });
      const runs = sessions.map((s, i) => stream(port, s, () => { if (++started === STREAMS) admitted(); }, i));
      // admission: every send stores its user turn (SQLite has one writer); then all stream at once
      const during = agentProc.measure(TRICKLE_MS * 0.9);
      await allStarted;
      const admitMs = performance.now() - t0;
      const admitEnd = nowMicros();
      if (process.env.BENCH_WINDOWS) {
        // for perf record -k CLOCK_MONOTONIC, then perf report --time A,B
        console.error(`round ${round + 1}: admitting ${(Number(c0.mono) / 1e6).toFixed(6)},${(admitEnd / 1e6).toFixed(6)}`);
      }
      const m2 = await scrape(port);
      const all = await during;
      const m3 = await scrape(port);
      windows.base.push([m0, m1]);
      windows.admit.push([m1, m2]);
      windows.load.push([m2, m3]);
      const split = (k, streaming) => all[k].filter((_, i) => (all[`${k}At`][i] >= admitEnd) === streaming);
      const r = { base: b, admit: { commit: split('commit', false), head: split('head', false) },
        load: { commit: split('commit', true), head: split('head', true) }, admitMs };
      const res = await Promise.all(runs);
      r.wall = performance.now() - t0;
      const me = process.cpuUsage(c0.me);
      cpu.srv += cpuSeconds(srv.child.pid) - c0.srv;
      cpu.fake += cpuSeconds(fake.child.pid) - c0.fake;
      cpu.me += (me.user + me.system) / 1e6;
      cpu.agent += all.cpu;
      r.complete = res.filter((x) => x.done && x.status === 'complete'
        && x.content.trim().split(' ').length === DELTAS).length;
      complete += r.complete;
      results = results.concat(res);
      for (const k of ['commit', 'head']) {
        base[k].push(...b[k]);
        admit[k].push(...r.admit[k]);
        load[k].push(...r.load[k]);
      }
      r.rss = rssPeakKiB(srv.child.pid);
      rounds.push(r);
    }
    const rss = rssPeakKiB(srv.child.pid);
    const lags = results.flatMap((r) => r.lags);
    const firsts = results.map((r) => r.lags[0]).filter((x) => x !== undefined);
    const ends = results.map((r) => r.endLag).filter((x) => !Number.isNaN(x));
    const ratio = (x, y) => (pct(x, 0.99) / pct(y, 0.99)).toFixed(2);
    console.log(`chat_stream: ${STREAMS} streaming sends at once, each trickled over ${TRICKLE_MS} ms in ${DELTAS} deltas,`
      + ` ${ROUNDS} round(s); fake provider and stream clients at nice ${LOAD_NICE}; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    rounds.forEach((r, i) => {
      console.log(`  round ${i + 1}: completed whole ${r.complete}/${STREAMS} in ${(r.wall / 1000).toFixed(2)} s`
        + ` (all admitted after ${(r.admitMs / 1000).toFixed(2)} s); p99 ratios: commit admitting ${ratio(r.admit.commit, r.base.commit)}x`
        + ` streaming ${ratio(r.load.commit, r.base.commit)}x, head admitting ${ratio(r.admit.head, r.base.head)}x`
        + ` streaming ${ratio(r.load.head, r.base.head)}x; peak RSS so far ${(r.rss / 1024).toFixed(1)} MiB`);
    });
    console.log(`  completed whole: ${complete}/${STREAMS * ROUNDS}`);
    console.log(`  server peak RSS: ${(rss / 1024).toFixed(1)} MiB`);
    console.log(`  CPU during the rounds (s): server ${cpu.srv.toFixed(2)}, fake ${cpu.fake.toFixed(2)},`
      + ` stream clients ${cpu.me.toFixed(2)}, agent ${cpu.agent.toFixed(2)}`);
    for (const k of ['commit', 'head']) {
      const name = k === 'commit' ? 'POST /chat/commit' : 'GET /repos/{id}/head';
      console.log(`  ${name}: no load (${base[k].length}) p50 ${fmt(pct(base[k], 0.5))} p99 ${fmt(pct(base[k], 0.99))}`);
      console.log(`    while the sends are admitted (${admit[k].length}) p50 ${fmt(pct(admit[k], 0.5))}`
        + ` p99 ${fmt(pct(admit[k], 0.99))} (p99 ratio ${ratio(admit[k], base[k])}x);`
        + ` while all ${STREAMS} stream (${load[k].length}) p50 ${fmt(pct(load[k], 0.5))}`
        + ` p99 ${fmt(pct(load[k], 0.99))} (p99 ratio ${ratio(load[k], base[k])}x)`);
    }
    // the server's side of the agent's requests (bucket bounds: p99 is "at most")
    const side = { base: serverSide(windows.base), admit: serverSide(windows.admit), load: serverSide(windows.load) };
    console.log('  server side (GET /metrics histograms; count, mean, p99 as its bucket bound): no load | admitting | streaming');
    side.base.forEach((x, i) => {
      const cell = (y) => `${y.count} ${fmt(y.mean)} ≤${fmt(y.p99)}`;
      console.log(`    ${x.label}: ${cell(x)} | ${cell(side.admit[i])} | ${cell(side.load[i])}`);
    });
    console.log(`  first delta relayed (provider write -> client read): alone median ${fmt(pct(aloneFirst, 0.5))}`
      + ` p99 ${fmt(pct(aloneFirst, 0.99))}; under load median ${fmt(pct(firsts, 0.5))} p99 ${fmt(pct(firsts, 0.99))}`);
    console.log(`  every delta relayed: alone median ${fmt(pct(alone, 0.5))}`
      + ` p99 ${fmt(pct(alone, 0.99))}; under load median ${fmt(pct(lags, 0.5))} p99 ${fmt(pct(lags, 0.99))}`);
    // the fake spaces its closing chunks (finish reason, usage, [DONE]) at the trickle's pace too
    const pacing = (TRICKLE_MS * 1000 / (DELTAS + 4)) * 3;
    console.log(`  last delta -> done (the reply stored, the nudge computed): median ${fmt(pct(ends, 0.5))}`
      + ` p99 ${fmt(pct(ends, 0.99))}, of which the fake's pacing of its 3 closing chunks ~${fmt(pacing)}`);
    if (complete !== STREAMS * ROUNDS) process.exitCode = 1;
  } finally {
    agentProc?.stop();
    srv.child.kill('SIGTERM');
    fake.child.kill('SIGTERM');
    agent.destroy();
    await new Promise((r) => setTimeout(r, 300));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--agent') {
  // one measurement per line read ("MS"), one JSON line written for each
  const port = Number(process.argv[3]);
  let pending = '';
  let chain = Promise.resolve();
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (d) => {
    pending += d;
    let i;
    while ((i = pending.indexOf('\n')) >= 0) {
      const ms = Number(pending.slice(0, i));
      pending = pending.slice(i + 1);
      chain = chain.then(() => agentLatencyHere(port, ms ? performance.now() + ms : Infinity))
        .then((r) => { process.stdout.write(`${JSON.stringify(r)}\n`); })
        .catch((e) => { console.error(e); process.exit(1); });
    }
  });
  process.stdin.on('end', () => { chain.then(() => agent.destroy()); });
} else {
  main().catch((e) => { console.error(e); process.exit(1); });
}
