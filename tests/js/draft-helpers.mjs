// draft-helpers.mjs -- shared parts of the Draft with AI and LLM review
// tests: provider environment pointing at the fake provider, a conversation
// that states two decisions, an assumption, a task and a question, and
// waiting for a draft job to finish; a rich HEAD and a draft of the latest
// turns to save on it (issue 24).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { SMRITI, childEnv } from './helpers.mjs';
import { request, expectStatus } from './http-helpers.mjs';

export const OPENAI_KEY = 'sk-test-openai-draft-0123456789';
export const ANTHROPIC_KEY = 'sk-ant-test-draft-9876543210';

// Environment for smriti-full talking to the fake provider.
export function providerEnv(fake, extra = {}) {
  return {
    OPENAI_API_KEY: OPENAI_KEY,
    OPENAI_BASE_URL: `${fake.url}/v1`,
    ANTHROPIC_API_KEY: ANTHROPIC_KEY,
    ANTHROPIC_BASE_URL: fake.url,
    SMRITI_OPENAI_MODEL: 'gpt-fake-draft',
    SMRITI_PROVIDER_RETRIES: '1',
    SMRITI_PROVIDER_BACKOFF_MS: '5',
    ...extra,
  };
}

// The conversation: two decisions, an assumption, a task and an open question.
export const TURNS = [
  ['User', 'We are planning the team offsite. Decision: we hold it in Lisbon in May.'],
  ['Assistant', 'Agreed, Lisbon in May. I will assume that everyone can travel without a visa.'],
  ['User', 'We also decided to book the Alfama venue. Priya books the flights by Friday. '
    + 'Open question: do we need a translator?'],
  ['Assistant', 'Noted: the Alfama venue is decided, Priya books flights by Friday, and the '
    + 'translator question is open.'],
];

export const TRANSCRIPT = TURNS.map(([who, text]) => `${who}: ${text}`).join('\n\n');

// What the scripted model extracts from TURNS.
export const EXTRACTED = {
  title: 'Lisbon offsite',
  summary: 'The offsite is planned for Lisbon in May at the Alfama venue.',
  decisions: [{ text: 'Hold the offsite in Lisbon in May' }, { text: 'Book the Alfama venue' }],
  assumptions: [{ text: 'Everyone can travel without a visa' }],
  tasks: [{ text: 'Priya books the flights by Friday', status: 'open' }],
  open_questions: [{ text: 'Do we need a translator?' }],
  entities: [],
  artifacts: [],
};

// HEAD of the Space: 35 decisions, 32 tasks (task 3 open, task 4 done), 3 entities, an artifact.
export const RICH = {
  title: 'Months of planning',
  summary: 'Everything decided so far.',
  decisions: Array.from({ length: 35 }, (_, i) => ({ text: `Decision ${i + 1}` })),
  assumptions: [{ text: 'The budget holds' }],
  tasks: Array.from({ length: 32 }, (_, i) => ({ text: `Task ${i + 1}`, status: i === 3 ? 'done' : 'open' })),
  open_questions: [{ text: 'Which hotel?' }],
  entities: [{ name: 'Lisbon', kind: 'place' }, { name: 'Priya', kind: 'person' }, { name: 'Alfama' }],
  artifacts: [{ name: 'budget.md', kind: 'markdown', content: '# Budget\n\n1000 EUR' }],
};

// What the model drafts from the latest turns: some new, some HEAD has, a task done, a repeat.
export const LATEST = {
  title: 'Venue booked',
  summary: 'The Alfama venue is booked; flights next.',
  decisions: [{ text: 'Book the Alfama venue' }, { text: 'Decision 7' }, { text: 'Fly on Monday' },
    { text: 'Book the Alfama venue' }],
  assumptions: [{ text: 'The budget holds' }],
  tasks: [{ text: 'Task 3', status: 'done' }, { text: 'Task 4', status: 'open' },
    { text: 'Priya books the flights', status: 'open' }],
  open_questions: [],
  entities: [{ name: 'Priya', kind: 'person' }, { name: 'Alfama venue', kind: 'place' }],
  artifacts: [],
};

// A session of space holding TRANSCRIPT (through the V1 ingest operation).
export async function ingestSession(srv, space, transcript = TRANSCRIPT) {
  const r = await expectStatus(srv, 'POST', '/api/ops/ingest', 200,
    { body: { space, transcript, format: 'text' } });
  return r.result.session;
}

// Polls a draft job until it is done or failed; returns the job document.
export async function waitJob(srv, jobId, { timeoutMs = 60000 } = {}) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const job = await expectStatus(srv, 'GET', `/v5/checkpoints/draft/${jobId}`, 200);
    if (job.status === 'done' || job.status === 'failed') return job;
    if (Date.now() > until) throw new Error(`draft job ${jobId} still ${job.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// Starts a draft and waits for it; returns the finished job document.
export async function draft(srv, body) {
  const r = await request(srv, 'POST', '/v5/checkpoints/draft', { body });
  assert.equal(r.status, 202, r.text);
  assert.equal(r.json.status, 'queued');
  return waitJob(srv, r.json.job_id);
}

// Waits until the fake provider has recorded n requests (or more).
export async function waitRequests(fake, n, { timeoutMs = 30000 } = {}) {
  const until = Date.now() + timeoutMs;
  while (fake.requests().length < n) {
    if (Date.now() > until) throw new Error(`fake provider saw ${fake.requests().length} of ${n} requests`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return fake.requests();
}

// The provider requests that asked for a draft (they carry the draft schema).
export function draftRequests(fake) {
  return fake.requests().filter((r) => JSON.stringify(r.body).includes('checkpoint_draft'));
}

// System text and message texts of an OpenAI or Anthropic request body.
export function promptTexts(body) {
  const texts = [];
  if (typeof body.system === 'string') texts.push(body.system);
  for (const m of body.messages || []) {
    if (typeof m.content === 'string') texts.push(m.content);
    else for (const b of m.content || []) if (b.text) texts.push(b.text);
  }
  return texts;
}

// Runs the CLI without blocking this process (the fake provider lives in
// it): resolves to { code, stdout, stderr, json() }.
export function runAsync(db, args, { input, env = {}, bin = SMRITI } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env: childEnv({ SMRITI_DB: db, ...env }) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d) => { stderr += d; });
    child.on('error', reject);
    // a child that exits before reading its input (a usage error) closes the pipe first
    child.stdin.on('error', (e) => { if (e.code !== 'EPIPE') reject(e); });
    child.on('close', (code, signal) => resolve({
      code, signal, stdout, stderr, json() { return JSON.parse(stdout); },
    }));
    child.stdin.end(input ?? '');
  });
}

// runAsync that insists on exit 0; parsed JSON when --json was given.
export async function okAsync(db, args, opts) {
  const r = await runAsync(db, args, opts);
  if (r.code !== 0) throw new Error(`smriti ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return args.includes('--json') ? r.json() : r.stdout;
}
