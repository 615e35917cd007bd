// draft-lifecycle.test.mjs -- the life of draft jobs across time and
// processes: a job past SMRITI_DRAFT_TIMEOUT_MS fails while its provider
// is still silent; a server killed with a job running (and one queued)
// marks both failed when it starts again; a server stopped cleanly lets
// the running job finish and fails the queued one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb } from './helpers.mjs';
import { startServer, request, expectStatus } from './http-helpers.mjs';
import { startFakeProvider } from '../fake-provider/server.mjs';
import {
  providerEnv, EXTRACTED, ingestSession, waitJob, waitRequests, draftRequests,
} from './draft-helpers.mjs';

let fake;

before(async () => {
  fake = await startFakeProvider({ port: 0 });
});

after(async () => {
  await fake?.close();
});

async function create(srv, sessionId) {
  return expectStatus(srv, 'POST', '/v5/checkpoints/draft', 202, { body: { session_id: sessionId } });
}

async function waitStatus(srv, jobId, status) {
  for (;;) {
    const job = await expectStatus(srv, 'GET', `/v5/checkpoints/draft/${jobId}`, 200);
    if (job.status === status) return job;
    assert.ok(job.status === 'queued' || job.status === 'running', JSON.stringify(job));
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('a job past its timeout fails while the provider is still silent', async () => {
  const t = tempDb();
  fake.reset();
  const srv = await startServer(t.db, { env: providerEnv(fake, { SMRITI_DRAFT_TIMEOUT_MS: '800' }) });
  try {
    await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'slow' } });
    const s = await ingestSession(srv, 'slow');
    fake.script([{ json: EXTRACTED, delay_ms: 20000 }]);
    const job = await waitJob(srv, (await create(srv, s.id)).job_id);
    assert.equal(job.status, 'failed');
    assert.equal(job.error, 'the draft timed out after 800 ms (SMRITI_DRAFT_TIMEOUT_MS)');
    assert.ok(!('draft' in job));
    assert.equal(draftRequests(fake).length, 1, 'a timeout is not repaired');
  } finally {
    await srv.stop();
    t.cleanup();
  }
});

test('a timeout shorter than the provider retries still fails the job on time', async () => {
  const t = tempDb();
  fake.reset();
  // the provider would retry after a 3 s retry-after; the job cannot wait that long
  const srv = await startServer(t.db, { env: providerEnv(fake, { SMRITI_DRAFT_TIMEOUT_MS: '800' }) });
  try {
    await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'retry' } });
    const s = await ingestSession(srv, 'retry');
    fake.script([{ status: 429, retry_after: 3 }]);
    const created = await create(srv, s.id);
    const job = await waitJob(srv, created.job_id, { timeoutMs: 20000 });
    assert.equal(job.status, 'failed');
    assert.equal(job.error, 'the draft timed out after 800 ms (SMRITI_DRAFT_TIMEOUT_MS)');
    assert.equal(draftRequests(fake).length, 1, 'still waiting to retry when the job failed');
  } finally {
    // the worker is still waiting out retry-after; a clean stop waits for it
    await srv.stop();
    t.cleanup();
  }
});

test('kill -9 with a job running and one queued: both failed by the next start once the lease lapsed', async () => {
  const t = tempDb();
  fake.reset();
  const env = providerEnv(fake, { SMRITI_DRAFT_WORKERS: '1', SMRITI_LEASE_S: '1' });
  const srv = await startServer(t.db, { env });
  await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'crash' } });
  const s = await ingestSession(srv, 'crash');
  fake.script([{ json: EXTRACTED, delay_ms: 60000 }]);
  const running = await create(srv, s.id);
  await waitRequests(fake, 1);
  await waitStatus(srv, running.job_id, 'running');
  const queued = await create(srv, s.id);
  assert.equal((await expectStatus(srv, 'GET', `/v5/checkpoints/draft/${queued.job_id}`, 200)).status, 'queued');
  // GET /metrics sees the one job waiting for the only worker
  assert.match((await request(srv, 'GET', '/metrics')).text, /^smriti_draft_queue_depth 1$/m);
  srv.child.kill('SIGKILL');
  await srv.exit;

  const again = await startServer(t.db, { env });
  try {
    for (const id of [running.job_id, queued.job_id]) {
      const job = await waitJob(again, id, { timeoutMs: 20000 });
      assert.equal(job.status, 'failed', JSON.stringify(job));
      assert.equal(job.error, 'the server running this job stopped before it finished; start a new draft');
      assert.ok(job.finished_at);
    }
    // the restarted server drafts again
    fake.reset();
    fake.script([{ json: EXTRACTED }]);
    const job = await waitJob(again, (await create(again, s.id)).job_id);
    assert.equal(job.status, 'done', JSON.stringify(job));
  } finally {
    await again.stop();
    t.cleanup();
  }
});

test('a clean stop lets the running job finish and fails the queued one', async () => {
  const t = tempDb();
  fake.reset();
  const env = providerEnv(fake, { SMRITI_DRAFT_WORKERS: '1' });
  const srv = await startServer(t.db, { env });
  await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'stop' } });
  const s = await ingestSession(srv, 'stop');
  fake.script([{ json: EXTRACTED, delay_ms: 1000 }]);
  const running = await create(srv, s.id);
  await waitStatus(srv, running.job_id, 'running');
  const queued = await create(srv, s.id);
  await srv.stop();

  const again = await startServer(t.db, { env });
  try {
    assert.doesNotMatch(again.log(), /took over/);
    const done = await expectStatus(again, 'GET', `/v5/checkpoints/draft/${running.job_id}`, 200);
    assert.equal(done.status, 'done', JSON.stringify(done));
    assert.deepEqual(done.draft.decisions, EXTRACTED.decisions);
    const failed = await expectStatus(again, 'GET', `/v5/checkpoints/draft/${queued.job_id}`, 200);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error, 'the server stopped before this job ran; start a new draft');
    const r = await request(again, 'GET', '/v5/checkpoints/draft/nope');
    assert.equal(r.status, 404);
  } finally {
    await again.stop();
    t.cleanup();
  }
});
