// http-declared.test.mjs -- the chat, draft, view and ingest routes as their
// operations' declarations describe them (src/ops/decl/runtime.json,
// view.json, review.json): each answers what /openapi.json says (request()
// checks every response against the document), the document's request
// bodies are the declared parameters, and each class of bad parameter is
// refused by the one check of the declaration, naming the parameter, with
// nothing written.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb } from './helpers.mjs';
import { startServer, expectStatus, request, assertError } from './http-helpers.mjs';

let t;
let srv;
let session;
before(async () => {
  t = tempDb();
  srv = await startServer(t.db, { args: ['--quiet'] });
  await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'decl' } });
  await expectStatus(srv, 'POST', '/v4/repos/decl/commits', 201, { body: { checkpoint: { title: 'One' } } });
  session = await expectStatus(srv, 'POST', '/v4/repos/decl/sessions', 201, { body: { title: 'First' } });
});
after(async () => {
  await srv?.stop();
  t?.cleanup();
});

test('the routes answer as declared', async () => {
  const list = await expectStatus(srv, 'GET', '/v4/repos/decl/sessions', 200);
  assert.deepEqual(list.map((s) => s.id), [session.id]);
  const got = await expectStatus(srv, 'GET', `/v4/sessions/${session.id}`, 200);
  assert.deepEqual(got.turns, []);
  const head = await expectStatus(srv, 'GET', '/repos/decl/head', 200);
  const mounted = await expectStatus(srv, 'POST', `/v5/sessions/${session.id}/mount`, 201, { body: { commit_hash: head.commit_hash } });
  assert.equal(mounted.mounted_commit_hash, head.commit_hash);
  const ingested = await expectStatus(srv, 'POST', '/v1/ingest', 201, { body: { space: 'decl', transcript: 'User: hi\nAssistant: hello\n' } });
  assert.equal(ingested.turns, 2);
  const pack = await expectStatus(srv, 'POST', '/v1/context-pack', 200, { body: { session_id: ingested.session.id } });
  assert.equal(pack.turns, 2);
  const graph = await expectStatus(srv, 'GET', '/v4/repos/decl/graph?limit=1&changes=1', 200);
  assert.equal(graph.nodes.length, 1);
  assert.equal((await expectStatus(srv, 'GET', '/v4/overview', 200))[0].name, 'decl');
  assert.ok(Array.isArray((await expectStatus(srv, 'GET', '/v4/providers', 200)).providers));
  assertError(await request(srv, 'GET', '/v5/checkpoints/draft/no-such-job'), 404, 'not_found');
});

test("the document's request bodies are the declared parameters but the path's", async () => {
  const doc = await expectStatus(srv, 'GET', '/openapi.json', 200);
  const body = (p) => doc.paths[p].post.requestBody.content['application/json'].schema;
  assert.deepEqual(body('/v4/sessions/{id}/fork').required, ['seq']);
  assert.ok(!('session_id' in body('/v4/sessions/{id}/fork').properties));
  assert.deepEqual(body('/v1/ingest').properties.format.enum, ['auto', 'text', 'markdown', 'chatgpt', 'claude']);
  assert.deepEqual(doc.paths['/v4/generations/{id}'].get.responses['200'].content['application/json'].schema,
    { $ref: '#/components/schemas/Generation' });
  // the role each operation needs is its declaration's
  assert.deepEqual(doc['x-smriti-operations']['session.fork'], { need: 'session', role: 'writer', param: 'session_id' });
  assert.deepEqual(doc['x-smriti-operations']['user.list'], { need: 'admin' });
});

test('each class of bad parameter is refused as declared, and nothing is written', async () => {
  const before = await expectStatus(srv, 'GET', '/v4/repos/decl/sessions', 200);
  const cases = [
    // type
    ['POST', `/v4/sessions/${session.id}/switch`, { seq: '1' }, 400, "parameter 'seq' must be an integer, not a string"],
    ['POST', '/v4/repos/decl/sessions', { title: 5 }, 400, "parameter 'title' must be a string, not an integer"],
    // required (a message action starts a generation without api_call: the same check)
    ['POST', `/v4/sessions/${session.id}/edit`, { seq: 1 }, 400, "missing required parameter 'message'"],
    ['POST', '/v1/ingest', { space: 'decl' }, 400, "missing required parameter 'transcript'"],
    // enum
    ['POST', '/v1/ingest', { space: 'decl', transcript: 'User: hi', format: 'pdf' }, 400,
      "parameter 'format' must be one of: auto, text, markdown, chatgpt, claude (not 'pdf')"],
    // minLength
    ['POST', '/v4/chat/send', { session_id: session.id, message: '' }, 400, "parameter 'message' must not be empty"],
    // range
    ['POST', `/v4/sessions/${session.id}/fork`, { seq: 0 }, 400, "parameter 'seq' must be at least 1"],
    ['GET', '/v4/repos/decl/graph?limit=100001', undefined, 400, "parameter 'limit' must be at most 100000"],
    // unknown, where the operation is closed
    ['POST', '/v5/checkpoints/draft', { session_id: session.id, colour: 'red' }, 400, "unknown parameter 'colour'"],
  ];
  for (const [method, path, body, status, message] of cases) {
    const r = await request(srv, method, path, { body });
    assertError(r, status);
    assert.equal(r.json.error.message, message, `${method} ${path}`);
  }
  assert.deepEqual(await expectStatus(srv, 'GET', '/v4/repos/decl/sessions', 200), before);
  assert.deepEqual((await expectStatus(srv, 'GET', `/v4/sessions/${session.id}`, 200)).turns, []);
});
