// openapi.test.mjs -- the OpenAPI document is one a client can be generated
// from: it passes swagger-parser's validation and Redocly's recommended
// lint, documents every error status, servers and path examples, its
// schemas say what is required, and the response check every HTTP test
// runs (openapi-check.mjs) really fails on drift.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { lint, createConfig } from '@redocly/openapi-core';
import { tempDb, run, SMRITI_FULL } from './helpers.mjs';
import { startServer, expectStatus } from './http-helpers.mjs';
import { checkResponse, openapi } from './openapi-check.mjs';

let t;
let srv;
let doc;
let file;

before(async () => {
  t = tempDb();
  srv = await startServer(t.db, { args: ['--quiet'] });
  doc = await expectStatus(srv, 'GET', '/openapi.json', 200);
  file = path.join(t.dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(doc));
});

after(async () => {
  await srv?.stop();
  t?.cleanup();
});

const operations = () => Object.entries(doc.paths).flatMap(([p, item]) =>
  Object.entries(item).map(([method, op]) => ({ path: p, method, op })));
const schema = (name) => doc.components.schemas[name];

describe('the document', () => {
  test('is what `smriti openapi` prints', () => {
    const r = run(t.db, ['openapi'], { bin: SMRITI_FULL });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), doc);
  });

  test('passes swagger-parser validation (OpenAPI 3.1 schema, $refs resolve)', async () => {
    await SwaggerParser.validate(structuredClone(doc));
  });

  test("passes Redocly's recommended lint with no error and no warning", async () => {
    const config = await createConfig({
      extends: ['recommended'],
      rules: {
        // /v5/checkpoints/draft/{job_id} and /v5/checkpoints/{hash}/review are the
        // original product's routes; the literal "draft" segment always wins
        'no-ambiguous-paths': 'off',
      },
    });
    const problems = await lint({ ref: file, config });
    assert.deepEqual(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message}`), []);
  });

  test('names a relative server, and every path parameter has an example', () => {
    // relative: a client generated from the document talks to whichever address served it
    assert.equal(doc.servers[0].url, '/');
    for (const { path: p, method, op } of operations()) {
      for (const param of op.parameters.filter((x) => x.in === 'path')) {
        assert.equal(typeof param.example, 'string', `${method} ${p}: {${param.name}} has no example`);
        assert.ok(param.description, `${method} ${p}: {${param.name}} has no description`);
      }
    }
  });

  test('operationIds are names a person would give, each tagged with its area', () => {
    const ids = operations().map(({ op }) => op.operationId);
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    for (const { path: p, method, op } of operations()) {
      assert.match(op.operationId, /^[a-z][A-Za-z]+$/, `${method} ${p}: ${op.operationId}`);
      assert.equal(op.tags?.length, 1, `${method} ${p}: no tag`);
      assert.ok(doc.tags.some((t) => t.name === op.tags[0]), `${method} ${p}: tag ${op.tags[0]} is not declared`);
    }
    assert.equal(doc.paths['/repos/{id}/head'].get.operationId, 'getHead');
    assert.equal(doc.paths['/chat/commit'].post.operationId, 'createCheckpoint');
    assert.deepEqual(doc.paths['/repos/{id}/head'].get.tags, ['Checkpoints']);
  });

  test('every operation documents its errors (a 4XX at least, and 421 and 500)', () => {
    for (const { path: p, method, op } of operations()) {
      const codes = Object.keys(op.responses);
      assert.ok(codes.some((c) => /^4\d\d$/.test(c)), `${method} ${p}: no 4XX`);
      assert.ok(codes.includes('421') && codes.includes('500'), `${method} ${p}: ${codes}`);
      assert.ok(!codes.includes('default'), `${method} ${p}: a default instead of its statuses`);
      if (method !== 'get') for (const c of ['400', '403', '413', '415']) assert.ok(codes.includes(c), `${method} ${p}: no ${c}`);
      if (!op.security) assert.ok(codes.includes('401'), `${method} ${p}: no 401`);
    }
    assert.ok(doc.paths['/v4/chat/send'].post.responses['502']);
    assert.ok(doc.paths['/chat/commit'].post.responses['409']);
  });

  test('the MCP notification answer (202) is documented', () => {
    const r = doc.paths['/mcp'].post.responses['202'];
    assert.ok(r, 'no 202 on POST /mcp');
    assert.deepEqual(r.content['application/json'].schema, { $ref: '#/components/schemas/Accepted' });
  });

  // A route's request body, as its operation's declaration gives it (src/ops/decl/*.json).
  const body = (p, m = 'post') => doc.paths[p][m].requestBody.content['application/json'].schema;

  test("chat.send's body requires session_id and message only; provider and model have defaults", () => {
    assert.deepEqual(body('/v4/chat/send').required, ['session_id', 'message']);
    // the path's session is not asked again in the body of a message action
    assert.deepEqual(body('/v4/sessions/{id}/edit').required, ['seq', 'message']);
    assert.deepEqual(body('/v4/sessions/{id}/regenerate').required, ['seq']);
  });

  test('bodies the server closes to unknown keys say so; results list what is required', () => {
    assert.equal(schema('ChatCommit').additionalProperties, false);
    assert.equal(body('/v5/checkpoints/draft').additionalProperties, false);
    assert.equal(body('/v5/checkpoints/draft/{job_id}/save').additionalProperties, false);
    for (const name of ['Space', 'Checkpoint', 'Session', 'Turn', 'DraftJob', 'Review', 'Graph', 'ChatSendResult']) {
      const s = schema(name);
      assert.ok(s.required?.length > 0, `${name} has no required list`);
      assert.equal(s.additionalProperties, false, `${name} is not closed`);
      for (const [k, v] of Object.entries(s.properties)) {
        if (v.type === 'array') assert.ok(v.items, `${name}.${k} has untyped items`);
      }
    }
  });
});

describe('precise enough for a generated client', () => {
  // {"type": "object"} with neither properties nor additionalProperties is what
  // openapi-typescript turns into Record<string, never>: nothing can be read or sent
  test('no object schema is bare: each lists its properties or says what its values are', () => {
    const bare = [];
    const walk = (v, at) => {
      if (Array.isArray(v)) { v.forEach((x, i) => walk(x, `${at}/${i}`)); return; }
      if (!v || typeof v !== 'object') return;
      const types = [].concat(v.type ?? []);
      if (types.includes('object') && !v.properties && v.additionalProperties === undefined) bare.push(at);
      for (const [k, x] of Object.entries(v)) walk(x, `${at}/${k}`);
    };
    walk(doc.components, '#/components');
    walk(doc.paths, '#/paths');
    assert.deepEqual(bare, []);
  });

  test("an error's code is one of the reason codes, the same on every route", () => {
    const code = schema('Error').properties.error.properties.code;
    for (const c of ['invalid_input', 'usage', 'unprocessable', 'not_found', 'conflict', 'too_large', 'provider_error',
      'provider_timeout', 'unavailable', 'unauthorized', 'forbidden', 'internal', 'misdirected', 'method_not_allowed']) {
      assert.ok(code.enum.includes(c), c);
    }
    for (const n of ['MergeConflict', 'ChatFailure', 'OpError']) {
      assert.deepEqual(schema(n).properties.error, { $ref: '#/components/schemas/Error/properties/error' }, n);
    }
  });

  test('the workflow routes are described by their operations: tasks, metadata, diff, merge, bundle', () => {
    assert.deepEqual(schema('Task').properties.status.enum, ['open', 'done']);
    assert.deepEqual(schema('Metadata').additionalProperties, { $ref: '#/components/schemas/MetadataValue' });
    assert.equal(schema('Diff').additionalProperties, false);
    assert.deepEqual(schema('Diff').properties.tasks, { $ref: '#/components/schemas/TaskChanges' });
    const merge = doc.paths['/v4/repos/{id}/merge'].post;
    assert.equal(merge.operationId, 'mergeCheckpoint');
    assert.deepEqual(merge.responses['409'].content['application/json'].schema, { $ref: '#/components/schemas/MergeConflict' });
    assert.deepEqual(schema('MergeConflict').properties.conflicts.items, { $ref: '#/components/schemas/MergeConflictItem' });
    assert.equal(doc.paths['/v4/repos/{id}/head'].patch.operationId, 'updateCheckpoint');
    assert.deepEqual(schema('Bundle').required, ['format', 'version', 'sha256', 'spaces']);
  });
});

describe('the response check of the HTTP tests', () => {
  const ok = (status, json, headers = { 'content-type': 'application/json' }) => ({ status, headers, json, text: JSON.stringify(json) });
  const space = { id: '0b9b6c3e-4d7e-4a53-9f1a-2f4f7a5c1d20', name: 'demo', description: '', created_at: '2026-12-02T11:40:00.123456Z', head: null };

  test('passes a response that matches its route', () => {
    openapi();
    checkResponse('GET', '/v4/repos/demo', ok(200, space));
    checkResponse('GET', '/v4/repos/demo', ok(404, { error: { code: 'not_found', message: "no space 'x'" } }));
  });

  test('fails on a missing field, an extra field, a wrong type and an undocumented status', () => {
    const { head, ...noHead } = space;
    assert.throws(() => checkResponse('GET', '/v4/repos/demo', ok(200, noHead)), /must have required property 'head'/);
    assert.throws(() => checkResponse('GET', '/v4/repos/demo', ok(200, { ...space, extra: 1 })), /must NOT have additional properties/);
    assert.throws(() => checkResponse('GET', '/v4/repos/demo', ok(200, { ...space, head: 7 })), /head must be string,null/);
    assert.throws(() => checkResponse('GET', '/v4/repos/demo', ok(409, { error: { code: 'conflict', message: 'x' } })), /status 409 is not documented/);
    assert.throws(() => checkResponse('GET', '/v4/repos/demo', ok(404, { error: 'not found' })), /does not match/);
  });
});
