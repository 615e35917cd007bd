// draft_jobs.mjs -- Draft with AI figures against the fake provider on
// loopback and the real `smriti-full serve`:
//
//  1. time from job creation to done with a provider that answers at once:
//     the server's own timestamps (finished_at - created_at) and what a
//     client polling GET /v5/checkpoints/draft/{id} every millisecond sees
//     (POST to the first "done"), median and p90 of RUNS jobs;
//  2. chat send latency (POST /v4/chat/send round trip, instant provider)
//     with no draft running, then while 1 and while 4 drafts (every draft
//     worker busy) wait on a provider that takes 60 s: median and p90 of
//     SENDS sends each, and the ratio to the baseline measured in the same
//     run.
//
// usage: node bench/draft_jobs.mjs [BUILD_DIR]   (build first: make)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeProvider } from '../tests/fake-provider/server.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUILD = path.resolve(ROOT, process.argv[2] || 'build');
const RUNS = 20;
const SENDS = 40;
const EXTRACTED = {
  title: 'Lisbon offsite', summary: 'Planned.',
  decisions: [{ text: 'Lisbon in May' }, { text: 'Alfama venue' }],
  assumptions: [{ text: 'No visas needed' }], tasks: [{ text: 'Book flights', status: 'open' }],
  open_questions: [{ text: 'Translator?' }], entities: [], artifacts: [],
};
const TRANSCRIPT = 'User: Decision: Lisbon in May, at the Alfama venue.\n\n'
  + 'Assistant: Agreed. I assume nobody needs a visa. Who books flights? Do we need a translator?\n\n'
  + 'User: Priya books the flights.\n\nAssistant: Noted.';

function startServer(db, fake) {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(BUILD, 'smriti-full'), ['serve', '--listen', '127.0.0.1:0'], {
      env: {
        PATH: process.env.PATH, HOME: process.env.HOME || '/tmp', SMRITI_DB: db,
        OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: `${fake.url}/v1`,
        SMRITI_DRAFT_TIMEOUT_MS: '120000',
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

async function call(url, method, p, body) {
  const res = await fetch(`${url}${p}`, {
    method, headers: body ? { 'Content-Type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

const iso = (s) => Date.parse(s.slice(0, 23) + 'Z') * 1000 + Number(s.slice(23, 26));
const us = () => Number(process.hrtime.bigint() / 1000n);

function stats(v) {
  const s = [...v].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], p90: s[Math.floor(s.length * 0.9)], n: s.length };
}

const ms = (x) => (x / 1000).toFixed(2);

async function draftOnce(url, sessionId) {
  const t0 = us();
  const job = await call(url, 'POST', '/v5/checkpoints/draft', { session_id: sessionId });
  for (;;) {
    const j = await call(url, 'GET', `/v5/checkpoints/draft/${job.job_id}`);
    if (j.status === 'done') return { server: iso(j.finished_at) - iso(j.created_at), client: us() - t0 };
    if (j.status === 'failed') throw new Error(j.error);
    await new Promise((r) => setTimeout(r, 1));
  }
}

// SENDS sends on a new session (a longer history would make later stages slower).
async function sends(url) {
  const sessionId = (await call(url, 'POST', '/v4/repos/bench/sessions', {})).id;
  const v = [];
  for (let i = 0; i < SENDS; i++) {
    const t0 = us();
    await call(url, 'POST', '/v4/chat/send', { session_id: sessionId, message: `question ${i}` });
    v.push(us() - t0);
  }
  return stats(v);
}

async function main() {
  const dir = mkdtempSync(path.join(tmpdir(), 'smriti-bench-draft-'));
  const fake = await startFakeProvider({ port: 0 });
  const srv = await startServer(path.join(dir, 'db.sqlite'), fake);
  try {
    await call(srv.url, 'POST', '/v4/repos', { name: 'bench' });
    const ing = await call(srv.url, 'POST', '/api/ops/ingest', { space: 'bench', transcript: TRANSCRIPT });
    const sid = ing.result.session.id;
    const server = [];
    const client = [];
    fake.script(Array.from({ length: RUNS + 2 }, () => ({ json: EXTRACTED })));
    await draftOnce(srv.url, sid);          // warm-up
    await draftOnce(srv.url, sid);
    for (let i = 0; i < RUNS; i++) {
      const r = await draftOnce(srv.url, sid);
      server.push(r.server);
      client.push(r.client);
    }
    const sv = stats(server);
    const cl = stats(client);
    console.log(`draft job, creation to done, instant provider, ${RUNS} jobs:`);
    console.log(`  server timestamps: median ${ms(sv.median)} ms, p90 ${ms(sv.p90)} ms`);
    console.log(`  client (POST to first done seen, 1 ms polling): median ${ms(cl.median)} ms, p90 ${ms(cl.p90)} ms`);

    fake.reset();
    await sends(srv.url);                   // warm-up
    const base = await sends(srv.url);
    const rows = [['no draft running', base]];
    // the first stage's draft keeps running through the second: 1, then 4 at once
    const jobs = [];
    fake.reset();
    for (const n of [1, 4]) {
      fake.script(Array.from({ length: n - jobs.length }, () => ({ json: EXTRACTED, delay_ms: 60000 })));
      while (jobs.length < n) jobs.push(await call(srv.url, 'POST', '/v5/checkpoints/draft', { session_id: sid }));
      while (fake.requests().length < n) await new Promise((r) => setTimeout(r, 5));
      const during = await sends(srv.url);
      for (const j of jobs) {
        const s = (await call(srv.url, 'GET', `/v5/checkpoints/draft/${j.job_id}`)).status;
        if (s !== 'running') throw new Error(`draft ${j.job_id} is ${s}, expected running`);
      }
      rows.push([`${n} draft${n > 1 ? 's' : ''} waiting on a 60 s provider`, during]);
    }
    console.log(`chat send round trip, instant provider, ${SENDS} sends each:`);
    for (const [name, st] of rows) {
      console.log(`  ${name.padEnd(40)} median ${ms(st.median)} ms, p90 ${ms(st.p90)} ms,`
        + ` ratio ${(st.median / base.median).toFixed(2)}`);
    }
  } finally {
    srv.child.kill('SIGKILL');          // the slow drafts would hold a clean stop for 60 s
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
