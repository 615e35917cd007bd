// run.mjs -- Smriti beside its peers on the same machine in the same run
// (bench/peers.sh installs the peers, builds Smriti and starts PostgreSQL,
// then runs this).  Each row runs both sides back to back on the same
// checkpoint document and prints both figures and the ratio:
//   - cold CLI read: `smriti head demo --json` vs a Node process that opens
//     LangGraph.js's SqliteSaver and calls getTuple (cold_read.mjs), both
//     whole processes timed by hyperfine, each on a store the in-process
//     SQLite row below filled with the same number of checkpoints;
//   - MCP start to first tool result: official SDK client connect() +
//     callTool(), `smriti mcp` read_head vs the reference memory server's
//     read_graph on a graph holding the same document (started with node
//     directly, not through npx, which would add its own start-up);
//   - MCP steady calls: the same tools called in sequence over one session;
//   - durable write and HEAD read, SQLite and PostgreSQL, one worker in
//     process: bench-peers (bench/peers_bench.c) vs savers.mjs;
//   - durable writes on PostgreSQL, MANY_WRITERS (32) at once for MANY_SECS
//     (5) seconds: `smriti-full serve --workers 32` with 32 writers, each
//     on a Space of its own writing on the HEAD it wrote before (the C
//     writers of bench/group_commit.sh), vs PostgresSaver with 32 `put`
//     loops at once, each on a thread of its own, through a pool of 32
//     connections (savers.mjs postgres-many); beside the rates, the CPU time
//     per write of the smriti serve process (/proc/PID/stat) and of the
//     saver's node process, and the PostgreSQL cluster's (its postmaster's
//     children) during each side's writes;
//   - peak RSS of the processes above.
//
// usage: node run.mjs BUILD_DIR WORK_DIR [POSTGRES_URL]
// Environment: RUNS (cold starts per side, default 30), CALLS (steady MCP
// calls, 2000), WRITES (300), READS (3000), ROUNDS (in-process rounds, 3),
// MANY_WRITERS (32), MANY_SECS (5); ONLY=pg-writers runs the rows of many
// writers on PostgreSQL alone.
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CHECKPOINT_DOC as DOC } from '../checkpoint_doc.mjs';
import { clusterCpuUs, cpuUs, must, postmasterOf, startServer, stopServer } from '../serve.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const [BUILD, WORK, PG_URL] = [path.resolve(process.argv[2]), process.argv[3], process.argv[4] || ''];
const SMRITI = path.join(BUILD, 'smriti');
const BENCH = path.join(BUILD, 'bench-peers');
const MEMORY_SERVER = path.join(HERE, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
const RUNS = Number(process.env.RUNS || 30);
const CALLS = Number(process.env.CALLS || 2000);
const WRITES = Number(process.env.WRITES || 300);
const READS = Number(process.env.READS || 3000);
const ROUNDS = Number(process.env.ROUNDS || 3);
const MANY = Number(process.env.MANY_WRITERS || 32);
const MANY_SECS = Number(process.env.MANY_SECS || 5);
const ONLY_MANY = process.env.ONLY === 'pg-writers';
const file = (name) => path.join(WORK, name);

// The same state as the memory server's knowledge graph (JSON lines).
function memoryGraph() {
  const observations = [DOC.title, DOC.summary, ...DOC.decisions, ...DOC.assumptions,
    ...DOC.tasks.map((t) => `${t.status}: ${t.text}`), ...DOC.open_questions,
    ...DOC.artifacts.map((a) => `${a.name}: ${a.content}`)];
  const lines = [{ type: 'entity', name: 'demo', entityType: 'space', observations },
    ...DOC.entities.map((e) => ({ type: 'entity', name: e.name, entityType: e.kind, observations: [] })),
    ...DOC.entities.map((e) => ({ type: 'relation', from: 'demo', to: e.name, relationType: 'uses' }))];
  return lines.map((l) => JSON.stringify(l)).join('\n');
}

function run(cmd, args, env = process.env) {
  const r = spawnSync(cmd, args, { env, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.error || r.stderr}`);
  return r.stdout;
}
const runJson = (cmd, args) => JSON.parse(run(cmd, args));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

// Whole processes by hyperfine, without a shell: per command the median
// wall time and the mean CPU time (user + system), in ms.
function hyperfine(runs, commands, env) {
  const out = file('hyperfine.json');
  run('hyperfine', ['-N', '--warmup', '5', '--runs', String(runs), '--export-json', out, ...commands], env);
  return JSON.parse(readFileSync(out, 'utf8')).results.map((r) => ({ wall: r.median * 1000,
    cpu: (r.user + r.system) * 1000 }));
}

// Peak RSS (KiB) of a whole process, the largest of three runs.
function peakRss(cmd, args, env) {
  let kib = 0;
  for (let i = 0; i < 3; i++) {
    const r = spawnSync('/usr/bin/time', ['-f', '%M', cmd, ...args], { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd}: ${r.stderr}`);
    kib = Math.max(kib, Number(r.stderr.trim().split('\n').pop()));
  }
  return kib;
}

const SIDES = {
  smriti: { server: { command: SMRITI, args: ['mcp'], env: { SMRITI_DB: file('smriti-0.db') } },
    tool: { name: 'read_head', arguments: { space: 'demo' } } },
  memory: { server: { command: process.execPath, args: [MEMORY_SERVER],
    env: { MEMORY_FILE_PATH: file('memory.jsonl') } }, tool: { name: 'read_graph', arguments: {} } },
};

async function connect(side) {
  const transport = new StdioClientTransport({ ...side.server, stderr: 'ignore' });
  const client = new Client({ name: 'bench-peers', version: '1' });
  await client.connect(transport);
  return { client, transport };
}

async function call(client, side) {
  const r = await client.callTool(side.tool);
  if (r.isError || !r.content?.[0]?.text) throw new Error(`${side.tool.name}: ${JSON.stringify(r).slice(0, 300)}`);
  return r.content[0].text.length;
}

// Start to first tool result (ms), the two sides interleaved run by run.
async function mcpStart() {
  const times = { smriti: [], memory: [] };
  for (let i = 0; i < RUNS + 3; i++) {
    for (const name of Object.keys(SIDES)) {
      const t0 = nowMs();
      const { client } = await connect(SIDES[name]);
      await call(client, SIDES[name]);
      if (i >= 3) times[name].push(nowMs() - t0);
      await client.close();
    }
  }
  return { smriti: median(times.smriti), memory: median(times.memory) };
}

// Sequential calls per second over one session, the server's CPU time per
// call (us; what a loaded machine changes least) and its peak RSS (KiB).
async function mcpSteady(side) {
  const { client, transport } = await connect(side);
  let bytes = 0;
  for (let i = 0; i < 200; i++) bytes = await call(client, side);
  const [t0, cpu0] = [nowMs(), cpuUs(transport.pid)];
  for (let i = 0; i < CALLS; i++) await call(client, side);
  const rate = CALLS * 1000 / (nowMs() - t0);
  const cpu = (cpuUs(transport.pid) - cpu0) / CALLS;
  const status = readFileSync(`/proc/${transport.pid}/status`, 'utf8');
  await client.close();
  return { rate, cpu, rss: Number(status.match(/VmHWM:\s+(\d+)/)[1]), bytes };
}

const SAVERS = path.join(HERE, 'savers.mjs');

// One figure per side over the rounds: the median of each rate, the largest peak RSS.
function combine(rounds) {
  const sides = Object.keys(rounds[0]);
  const one = (results) => ({ ...results[0], max_rss_kb: Math.max(...results.map((r) => r.max_rss_kb)),
    ...Object.fromEntries(['write_per_s', 'read_per_s', 'read_cpu_us']
      .map((key) => [key, median(results.map((r) => r[key]))])) });
  return Object.fromEntries(sides.map((side) => [side, one(rounds.map((r) => r[side]))]));
}

// SQLite in process, ROUNDS rounds of the sides in turn, each on fresh files
// (round 0's are the cold reads' and the MCP server's data).
function inProcessSqlite(fields) {
  const args = ['demo', fields, String(WRITES), String(READS)];
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) {
    const savers = (db, mode) => runJson(process.execPath, [SAVERS, 'sqlite', file(`${db}-${i}.db`), ...args, mode]);
    rounds.push({ smriti: runJson(BENCH, [file(`smriti-${i}.db`), ...args]), durable: savers('langgraph', 'full'),
      loose: savers('langgraph-default', 'default') });
  }
  return combine(rounds);
}

// PostgreSQL in process, the same way, each round in fresh schemas.
async function inProcessPostgres(fields) {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const rounds = [];
  try {
    for (let i = 0; i < ROUNDS; i++) rounds.push(await postgresRound(admin, fields, `${process.pid}_${i}`));
    return { version: (await admin.query('SHOW server_version')).rows[0].server_version, ...combine(rounds),
      many: await manyRounds(admin, fields) };
  } finally {
    await admin.end();
  }
}

async function postgresRound(admin, fields, tag) {
  await admin.query(`CREATE SCHEMA smriti_${tag}`);
  try {
    const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=-csearch_path%3Dsmriti_${tag}`;
    const args = ['demo', fields, String(WRITES), String(READS)];
    return { smriti: runJson(BENCH, [url, ...args]),
      saver: runJson(process.execPath, [SAVERS, 'postgres', PG_URL, ...args, `langgraph_${tag}`]) };
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS smriti_${tag} CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS langgraph_${tag} CASCADE`);
  }
}

// The C writers of bench/group_commit.sh, on `spaces` of srv for secs
// seconds: { acked, secs, conflicts }.
function groupWriters(srv, fields, secs, spaces) {
  return new Promise((resolve, reject) => {
    execFile(path.join(BUILD, 'bench-group_commit'), [srv.url, fields, String(secs), ...spaces],
      (err, out, errText) => {
        if (err) return reject(new Error(`bench-group_commit: ${errText || err.message}`));
        const [acked, wall, , conflicts] = out.trim().split(' ').map(Number);
        resolve({ acked, secs: wall, conflicts });
      });
  });
}

// ROUNDS of manyRound: the median of each figure, per side.
async function manyRounds(admin, fields) {
  const many = [];
  for (let i = 0; i < ROUNDS; i++) many.push(await manyRound(admin, fields, `${process.pid}_many_${i}`));
  const mid = (side, key) => median(many.map((r) => r[side][key]));
  return Object.fromEntries(['smriti', 'saver'].map((side) => [side,
    Object.fromEntries(['write_per_s', 'cpu_us', 'pg_cpu_us'].map((key) => [key, mid(side, key)]))]));
}

// MANY writers at once on PostgreSQL, Smriti's server and then the saver,
// each in fresh schemas.
async function manyRound(admin, fields, tag) {
  await admin.query(`CREATE SCHEMA smriti_${tag}`);
  try {
    const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=-csearch_path%3Dsmriti_${tag}`;
    const postmaster = await postmasterOf(admin);
    const srv = await startServer(BUILD, url, MANY, 8);
    let smriti;
    try {
      const spaces = async (kind) => {
        const names = Array.from({ length: MANY }, (_, i) => `${kind}-${i}`);
        for (const name of names) await must(srv, 'POST', '/v4/repos', { name }, 201);
        return names;
      };
      const [warm, measured] = [await spaces('warm'), await spaces('many')];
      await groupWriters(srv, fields, 1, warm);
      const [cpu0, pg0] = [cpuUs(srv.child.pid), clusterCpuUs(postmaster)];
      const r = await groupWriters(srv, fields, MANY_SECS, measured);
      smriti = { write_per_s: r.acked / r.secs, cpu_us: (cpuUs(srv.child.pid) - cpu0) / r.acked,
        pg_cpu_us: (clusterCpuUs(postmaster) - pg0) / r.acked };
    } finally {
      await stopServer(srv);
    }
    const saver = runJson(process.execPath, [SAVERS, 'postgres-many', PG_URL, 'many', fields, String(MANY),
      String(MANY_SECS), `langgraph_${tag}`]);
    return { smriti, saver };
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS smriti_${tag} CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS langgraph_${tag} CASCADE`);
  }
}

function versions() {
  const v = (pkg) => JSON.parse(readFileSync(path.join(HERE, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  const names = ['@langchain/langgraph-checkpoint-sqlite', '@langchain/langgraph-checkpoint-postgres',
    '@langchain/langgraph-checkpoint', '@langchain/core', 'better-sqlite3', 'pg',
    '@modelcontextprotocol/server-memory', '@modelcontextprotocol/sdk'];
  return names.map((n) => `${n} ${v(n)}`).join(', ');
}

// How idle CPUs sleep (Linux cpuidle), which sets what waking one for a
// round trip costs: e.g. "haltpoll/haltpoll, no guest polling" on a VM
// whose idle vCPUs halt at once.
function cpuidle() {
  const read = (f) => { try { return readFileSync(f, 'utf8').trim(); } catch { return null; } };
  const driver = read('/sys/devices/system/cpu/cpuidle/current_driver');
  if (!driver) return 'cpuidle unknown';
  const governor = read('/sys/devices/system/cpu/cpuidle/current_governor_ro') ||
    read('/sys/devices/system/cpu/cpuidle/current_governor');
  const poll = read('/sys/module/haltpoll/parameters/guest_halt_poll_ns');
  return `cpuidle ${driver}/${governor}${poll === '0' ? ', no guest polling' : poll ? `, guest polls ${poll} ns` : ''}`;
}

function machine() {
  const cpus = os.cpus();
  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
  return `${cpus[0].model}, ${cpus.length} cores, ${os.type()} ${os.release()}, ` +
    `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${cpuidle()}; load average ${load}`;
}

const fmt = (x, digits) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function table(rows) {
  const head = ['work', 'against', 'Smriti', 'peer', 'ratio'];
  const cells = rows.map(([work, peer, unit, s, p, lowerIsBetter]) => [work, peer,
    `${fmt(s, s < 100 ? 1 : 0)} ${unit}`, `${fmt(p, p < 100 ? 1 : 0)} ${unit}`,
    `${fmt(lowerIsBetter ? p / s : s / p, 2)}x`]);
  const width = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c) => `| ${c.map((x, i) => (i > 1 ? x.padStart(width[i]) : x.padEnd(width[i]))).join(' | ')} |`;
  console.log(line(head));
  console.log(`|${width.map((w, i) => (i > 1 ? '-'.repeat(w + 1) + ':' : '-'.repeat(w + 2))).join('|')}|`);
  for (const c of cells) console.log(line(c));
}

async function measure() {
  const fields = file('checkpoint.json');
  writeFileSync(fields, JSON.stringify(DOC));
  writeFileSync(file('memory.jsonl'), memoryGraph());
  const m = { date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), machine: machine() };
  m.lite = inProcessSqlite(fields);
  m.pg = PG_URL ? await inProcessPostgres(fields) : null;
  const env = { ...process.env, SMRITI_DB: file('smriti-0.db') };
  const peer = [process.execPath, path.join(HERE, 'cold_read.mjs'), file('langgraph-0.db'), 'demo'];
  [m.floor, m.smritiCold] = hyperfine(Math.max(RUNS, 200), ['/bin/true', `${SMRITI} head demo --json`], env);
  [m.peerCold] = hyperfine(RUNS, [peer.join(' ')], env);
  m.rssCold = { smriti: peakRss(SMRITI, ['head', 'demo', '--json'], env), peer: peakRss(peer[0], peer.slice(1), env) };
  m.start = await mcpStart();
  m.steady = { smriti: await mcpSteady(SIDES.smriti), memory: await mcpSteady(SIDES.memory) };
  return m;
}

function printHeader(m) {
  const gitRev = spawnSync('git', ['-C', ROOT, 'describe', '--always', '--dirty'], { encoding: 'utf8' })
    .stdout?.trim() || '(not a git checkout)';
  console.log(`Smriti beside its peers, ${m.date}`);
  console.log(`machine: ${m.machine} (at start)`);
  console.log(`Smriti ${gitRev}, SQLite ${run('pkg-config', ['--modversion', 'sqlite3']).trim()} (Debian)` +
    `; Node ${process.version}; PostgreSQL ${m.pg ? m.pg.version : 'not run'} on 127.0.0.1 (TCP)`);
  console.log(`peers: ${versions()}; better-sqlite3's SQLite ${m.lite.durable.settings.sqlite}`);
  console.log('ratio: how many times Smriti is ahead (>1: Smriti better; times and memory: peer/Smriti, ' +
    'rates: Smriti/peer)');
}

// [work, against, unit, Smriti, peer, lower is better]
function rows(m) {
  const mib = (kib) => kib / 1024;
  const { lite, pg: pgr, steady } = m;
  return [
    ['cold CLI read, whole process (median)', 'node: SqliteSaver getTuple', 'ms', m.smritiCold.wall, m.peerCold.wall,
      true],
    ['  its CPU time, user + system (mean)', 'node: SqliteSaver getTuple', 'ms', m.smritiCold.cpu, m.peerCold.cpu, true],
    ['MCP start to first tool result (median)', 'server-memory read_graph', 'ms', m.start.smriti, m.start.memory, true],
    ['MCP steady tool calls, one session', 'server-memory read_graph', '/s', steady.smriti.rate, steady.memory.rate],
    ['  server CPU time per call', 'server-memory read_graph', 'us', steady.smriti.cpu, steady.memory.cpu, true],
    ['durable write, SQLite, 1 worker', 'SqliteSaver put', '/s', lite.smriti.write_per_s, lite.durable.write_per_s],
    ['HEAD read, SQLite, 1 worker', 'SqliteSaver getTuple', '/s', lite.smriti.read_per_s, lite.durable.read_per_s],
    ['  its CPU time per read', 'SqliteSaver getTuple', 'us', lite.smriti.read_cpu_us, lite.durable.read_cpu_us, true],
    ...(pgr ? [
      ['durable write, PostgreSQL, 1 worker', 'PostgresSaver put', '/s', pgr.smriti.write_per_s, pgr.saver.write_per_s],
      ['HEAD read, PostgreSQL, 1 worker', 'PostgresSaver getTuple', '/s', pgr.smriti.read_per_s, pgr.saver.read_per_s],
      ...manyRows(pgr.many),
    ] : []),
    ['write, SQLite (peer not durable: its default)', 'SqliteSaver put', '/s', lite.smriti.write_per_s,
      lite.loose.write_per_s],
    ['peak RSS, cold CLI read', 'node: SqliteSaver getTuple', 'MiB', mib(m.rssCold.smriti), mib(m.rssCold.peer), true],
    ['peak RSS, MCP server after steady calls', 'server-memory', 'MiB', mib(steady.smriti.rss),
      mib(steady.memory.rss), true],
    ['peak RSS, in-process SQLite loop', 'node: SqliteSaver', 'MiB', mib(lite.smriti.max_rss_kb),
      mib(lite.durable.max_rss_kb), true],
  ];
}

function printNotes(m) {
  const { lite, pg: pgr } = m;
  console.log(`machine at end: load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`floor: /bin/true ${fmt(m.floor.wall, 2)} ms (hyperfine -N); cold reads: ${Math.max(RUNS, 200)} runs of ` +
    `smriti, ${RUNS} of the peer; MCP start: ${RUNS} runs per side, interleaved; steady: ${CALLS} sequential calls`);
  console.log(`MCP results: read_head ${m.steady.smriti.bytes} characters, read_graph ${m.steady.memory.bytes}`);
  console.log(`in process: ${WRITES} writes then ${READS} HEAD reads per side after 20 + 200 warm-up, ` +
    `${ROUNDS} rounds of the sides in turn, medians; one round's Space and thread are the cold reads' data`);
  console.log('SQLite: Smriti WAL + synchronous=FULL, one transaction per write (HEAD compared with the parent, ' +
    `checkpoint inserted, HEAD moved; one worker, so no group commit); SqliteSaver ${lite.durable.settings.journal_mode} + ` +
    `synchronous=${lite.durable.settings.synchronous} (set by the bench; better-sqlite3 builds in ` +
    `${lite.loose.settings.synchronous}), put = one INSERT OR REPLACE, no parent check`);
  if (pgr) {
    console.log(`PostgreSQL: one cluster, synchronous_commit=${pgr.saver.settings.synchronous_commit}, ` +
      `fsync=${pgr.saver.settings.fsync}; Smriti: one transaction in one round trip (libpq pipeline: ` +
      'BEGIN, Space name checked, HEAD locked and compared with the parent, insert, HEAD moved, COMMIT); ' +
      'PostgresSaver put: BEGIN, upsert of the one channel blob, upsert of the checkpoint, COMMIT, no parent check; ' +
      'Smriti waits for a reply by polling the socket before it blocks, up to 200 us while replies come that ' +
      'quickly and no more tasks run than there are CPUs (src/store/full/postgres.c, await_reply)');
    manyNote();
  }
  console.log('reads: Smriti ops_head (one query per read: HEAD ref -> checkpoint, a struct of every field; the ' +
    'handle keeps the checkpoint it read and hands it out, read-only, while the server says HEAD is still ' +
    'that checkpoint: on PostgreSQL a re-read asks only for the Space\'s name and its HEAD\'s commit id; ' +
    'not the cached document of the head operation); savers getTuple of the latest ' +
    'checkpoint (with its pending writes, deserialized)');
}

// [work, against, unit, Smriti, peer, lower is better]: the rows of MANY writers at once.
function manyRows(many) {
  return [
    [`durable write, PostgreSQL, ${MANY} writers at once`, `PostgresSaver, ${MANY} puts at once`, '/s',
      many.smriti.write_per_s, many.saver.write_per_s],
    ['  CPU time per write: smriti serve, the saver', 'its node process', 'us', many.smriti.cpu_us,
      many.saver.cpu_us, true],
    ['  PostgreSQL\'s CPU time per write', 'PostgresSaver, the same', 'us', many.smriti.pg_cpu_us,
      many.saver.pg_cpu_us, true],
  ];
}

function manyNote() {
  console.log(`PostgreSQL, ${MANY} writers at once: ${MANY_SECS} s per side after 1 s (Smriti) or 2 puts a writer ` +
    `(saver) of warm-up, ${ROUNDS} rounds, medians; Smriti: one smriti serve --workers ${MANY}, ${MANY} C writers ` +
    '(bench/group_commit_bench.c) each on its own Space with parent_commit_id its last write (POST /chat/commit, ' +
    `acknowledged after the commit); saver: one node process, ${MANY} put loops on threads of their own, a pool of ` +
    `${MANY} connections; CPU per write: smriti serve's (/proc/PID/stat) against the saver's process, and the ` +
    'PostgreSQL cluster\'s processes\' (children of its postmaster) during each side\'s writes');
}

// ONLY=pg-writers: the rows of MANY writers at once on PostgreSQL alone.
async function onlyMany() {
  if (!PG_URL) throw new Error('ONLY=pg-writers needs PostgreSQL');
  const fields = file('checkpoint.json');
  writeFileSync(fields, JSON.stringify(DOC));
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    const start = machine();
    const many = await manyRounds(admin, fields);
    console.log(`Smriti beside PostgresSaver, ${MANY} writers at once on PostgreSQL ` +
      `${(await admin.query('SHOW server_version')).rows[0].server_version}, ${date}`);
    console.log(`machine: ${start} (at start)`);
    console.log(`Smriti ${spawnSync('git', ['-C', ROOT, 'describe', '--always', '--dirty'], { encoding: 'utf8' })
      .stdout?.trim() || '(not a git checkout)'}; Node ${process.version}; peers: ${versions()}`);
    console.log('');
    table(manyRows(many));
    console.log('');
    console.log(`machine at end: load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    manyNote();
  } finally {
    await admin.end();
  }
}

if (ONLY_MANY) {
  await onlyMany();
} else {
  const m = await measure();
  printHeader(m);
  console.log('');
  table(rows(m));
  console.log('');
  printNotes(m);
}
