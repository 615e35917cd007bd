// http-resources.test.mjs -- the resource-shaped routes declared with their
// operations (src/ops/decl/core.json "http"): a workflow through them, every
// response checked against /openapi.json by request() (openapi-check.mjs),
// and bad parameters refused by the operations' one check, with the path
// and the allowed values named.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb } from './helpers.mjs';
import { startServer, expectStatus, request, assertError } from './http-helpers.mjs';

let t;
let srv;
before(async () => {
  t = tempDb();
  srv = await startServer(t.db, { args: ['--quiet'] });
  await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'res' } });
});
after(async () => {
  await srv?.stop();
  t?.cleanup();
});

test('commit, diff, fork, restore, merge-base, export, import, fsck and gc by their own routes', async () => {
  const first = await expectStatus(srv, 'POST', '/v4/repos/res/commits', 201, {
    body: { checkpoint: { title: 'One', decisions: ['Use SQLite'], tasks: [{ text: 'Ship', status: 'open' }], metadata: { tool: 'test' } } },
  });
  const second = await expectStatus(srv, 'POST', '/v4/repos/res/commits', 201, {
    body: { parent: first.commit_hash, checkpoint: { title: 'Two', decisions: ['Use SQLite', 'Add FTS'] } },
  });
  assert.equal(second.parent_hash, first.commit_hash);
  const diff = await expectStatus(srv, 'GET', `/v4/diff?from=${first.commit_hash}&to=res`, 200);
  assert.equal(diff.identical, false);
  const fork = await expectStatus(srv, 'POST', '/v4/repos/res/fork', 201, { body: { into: 'res-alt' } });
  assert.equal(fork.head, second.commit_hash);
  const base = await expectStatus(srv, 'GET', '/v4/merge-base?a=res&b=res-alt', 200);
  assert.equal(base.base, second.commit_hash);
  const back = await expectStatus(srv, 'POST', '/v4/repos/res/restore', 201, { body: { ref: first.commit_hash } });
  assert.equal(back.title, 'One');
  assert.equal(back.parent_hash, second.commit_hash);
  const bundle = await expectStatus(srv, 'GET', '/v4/export?spaces=res,res-alt', 200);
  assert.deepEqual(bundle.spaces.map((s) => s.name).sort(), ['res', 'res-alt']);
  const u = tempDb();
  const other = await startServer(u.db, { args: ['--quiet'] });
  try {
    const imported = await expectStatus(other, 'POST', '/v4/import', 200, { body: { bundle } });
    assert.deepEqual(imported.spaces.map((s) => s.name ?? s).length, 2);
  } finally {
    await other.stop();
    u.cleanup();
  }
  assert.equal((await expectStatus(srv, 'GET', '/v4/fsck?space=res', 200)).ok, true);
  await expectStatus(srv, 'POST', '/v4/gc', 200, { body: {} });
  await expectStatus(srv, 'GET', '/v4/deleted', 200);
});

test('parameters are checked as declared: the path named, the values allowed listed, nothing written', async () => {
  const before = await expectStatus(srv, 'GET', '/v4/repos/res/commits', 200);
  assertError(await request(srv, 'POST', '/v4/repos/res/commits', { body: { checkpoint: { tasks: [{ text: 'x', status: 'gone' }] } } }),
    400, 'invalid_input');
  const r = await request(srv, 'POST', '/v4/repos/res/commits', { body: { checkpoint: { tasks: [{ text: 'x', status: 'gone' }] } } });
  assert.equal(r.json.error.message, "parameter 'checkpoint.tasks[0].status' must be one of: open, done (not 'gone')");
  const missing = await request(srv, 'GET', '/v4/diff?from=res');
  assert.equal(missing.status, 400);
  assert.equal(missing.json.error.message, "missing required parameter 'to'");
  const typed = await request(srv, 'POST', '/v4/repos/res/fork', { body: { into: 7 } });
  assert.equal(typed.json.error.message, "parameter 'into' must be a string, not an integer");
  assert.deepEqual(await expectStatus(srv, 'GET', '/v4/repos/res/commits', 200), before);
});
