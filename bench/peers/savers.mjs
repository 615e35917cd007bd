// savers.mjs -- the peers' side of the in-process comparison (bench/peers.sh;
// Smriti's side is bench/peers_bench.c): one worker, LangGraph.js's
// SqliteSaver or PostgresSaver `put` in a loop, each put on top of the
// config the previous one returned (as a graph run does), then `getTuple`
// of the thread's latest checkpoint in a loop.  Each checkpoint carries the
// document Smriti stores as one channel ("state"), titled "step I"; one
// channel is the savers' cheapest case (PostgresSaver writes a row per
// changed channel).
//
//   node savers.mjs sqlite FILE THREAD FIELDS.json WRITES READS [full|default]
//   node savers.mjs postgres URL THREAD FIELDS.json WRITES READS SCHEMA
//   node savers.mjs postgres-many URL THREAD FIELDS.json WRITERS SECS SCHEMA
//
// SQLite "full" sets synchronous=FULL on the saver's connection (durable
// commits, as Smriti's store); "default" keeps what better-sqlite3 builds
// in.  Prints one JSON line: write_per_s, read_per_s, read_cpu_us (CPU time
// per read), max_rss_kb and the durability settings read back from the
// database.
//
// postgres-many runs WRITERS put loops at once (threads THREAD-0, ...,
// each put on its own previous config) for SECS seconds, through one pool
// of WRITERS connections (PostgresSaver.fromConnString's pool holds 10),
// after two puts each to warm up; it prints write_per_s, writes, cpu_us
// (this process's CPU time per put), pg_cpu_us (the PostgreSQL cluster's,
// when it runs on this machine) and the settings.
import { readFileSync } from 'node:fs';
import { emptyCheckpoint } from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import Database from 'better-sqlite3';
import pg from 'pg';
import { clusterCpuUs, postmasterOf } from '../serve.mjs';

const WARM_WRITES = 20;
const WARM_READS = 200;

async function openSqlite(file, mode) {
  const db = new Database(file);
  const saver = new SqliteSaver(db);
  saver.setup();
  if (mode === 'full') db.pragma('synchronous = FULL');
  const settings = {
    journal_mode: db.pragma('journal_mode', { simple: true }),
    synchronous: ['OFF', 'NORMAL', 'FULL', 'EXTRA'][db.pragma('synchronous', { simple: true })],
    sqlite: db.prepare('SELECT sqlite_version()').pluck().get(),
  };
  return { saver, settings, close: async () => db.close() };
}

async function openPostgres(url, schema) {
  const saver = PostgresSaver.fromConnString(url, { schema });
  await saver.setup();
  const show = async (name) => (await saver.pool.query(`SHOW ${name}`)).rows[0][name];
  const settings = { synchronous_commit: await show('synchronous_commit'), fsync: await show('fsync') };
  return { saver, settings, close: () => saver.end() };
}

// Put number i on top of config; resolves to the config it returns.
function putOne(saver, config, fields, i) {
  const checkpoint = emptyCheckpoint();
  checkpoint.channel_values = { state: { ...fields, title: `step ${i}` } };
  checkpoint.channel_versions = { state: i + 1 };
  return saver.put(config, checkpoint, { source: 'loop', step: i, parents: {} }, { state: i + 1 });
}

async function writeLoop(saver, config, fields, n) {
  for (let i = 0; i < n; i++) config = await putOne(saver, config, fields, i);
  return config;
}

async function many(url, thread, fields, writers, secs, schema) {
  const saver = new PostgresSaver(new pg.Pool({ connectionString: url, max: writers }), undefined, { schema });
  await saver.setup();
  const settings = { synchronous_commit: (await saver.pool.query('SHOW synchronous_commit')).rows[0].synchronous_commit };
  const configs = await Promise.all(Array.from({ length: writers }, (_, w) =>
    writeLoop(saver, { configurable: { thread_id: `${thread}-${w}`, checkpoint_ns: '' } }, fields, 2)));
  const postmaster = await postmasterOf(saver.pool);
  const deadline = Date.now() + secs * 1000;
  const pg0 = clusterCpuUs(postmaster);
  const cpu = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const counts = await Promise.all(configs.map(async (config) => {
    let n = 0;
    for (; Date.now() < deadline; n++) config = await putOne(saver, config, fields, n + 2);
    return n;
  }));
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const { user, system } = process.cpuUsage(cpu);
  const pgUs = clusterCpuUs(postmaster) - pg0;
  await saver.end();
  const writes = counts.reduce((a, b) => a + b, 0);
  console.log(JSON.stringify({ write_per_s: writes / wall, writes, cpu_us: (user + system) / writes,
    pg_cpu_us: pgUs / writes, settings }));
}

async function readLoop(saver, thread, latest, n) {
  for (let i = 0; i < n; i++) {
    const tuple = await saver.getTuple({ configurable: { thread_id: thread } });
    if (tuple?.checkpoint.id !== latest) throw new Error(`getTuple did not return ${latest}`);
  }
}

async function main() {
  const [kind, dsn, thread, fieldsFile, writes, reads, option] = process.argv.slice(2);
  const fields = JSON.parse(readFileSync(fieldsFile, 'utf8'));
  if (kind === 'postgres-many') return many(dsn, thread, fields, Number(writes), Number(reads), option);
  const store = kind === 'sqlite' ? await openSqlite(dsn, option) : await openPostgres(dsn, option);
  const { saver } = store;
  let config = { configurable: { thread_id: thread, checkpoint_ns: '' } };
  config = await writeLoop(saver, config, fields, WARM_WRITES);
  await readLoop(saver, thread, config.configurable.checkpoint_id, WARM_READS);
  const t0 = process.hrtime.bigint();
  config = await writeLoop(saver, config, fields, Number(writes));
  const t1 = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  await readLoop(saver, thread, config.configurable.checkpoint_id, Number(reads));
  const t2 = process.hrtime.bigint();
  const { user, system } = process.cpuUsage(cpu);
  await store.close();
  const rate = (n, a, b) => Number(n) * 1e9 / Number(b - a);
  console.log(JSON.stringify({ write_per_s: rate(writes, t0, t1), read_per_s: rate(reads, t1, t2),
    read_cpu_us: (user + system) / Number(reads), max_rss_kb: process.resourceUsage().maxRSS,
    settings: store.settings }));
}

await main();
