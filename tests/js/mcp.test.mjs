// mcp.test.mjs -- `smriti mcp` driven by the official TypeScript SDK client
// over stdio: every tool called and its structuredContent checked against
// the declared outputSchema, the agent handoff loop (read HEAD, write with
// that parent, a stale parent refused with nothing written), resources as
// Markdown and JSON, and agreement with the CLI on the same database.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { tempDb, ok, SMRITI_FULL } from './helpers.mjs';

const BASE_TOOLS = ['list_spaces', 'create_space', 'read_head', 'show_checkpoint', 'log', 'diff',
  'update_checkpoint', 'merge', 'write_checkpoint', 'restore', 'hand_off', 'fork'];
const OPTIONAL_TOOLS = ['review', 'search', 'blame'];

// The SDK passes the child only HOME, LOGNAME, PATH, SHELL, TERM and USER:
// everything else (the database, sanitizer options) must be explicit.
function serverEnv(extra) {
  const env = { ...extra };
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) {
    if (process.env[k]) env[k] = process.env[k];
  }
  return env;
}

async function connect(db, extra = {}, name = 'mcp-test') {
  const transport = new StdioClientTransport({
    command: SMRITI_FULL, args: ['mcp'], env: serverEnv({ SMRITI_DB: db, ...extra }), stderr: 'pipe',
  });
  const client = new Client({ name, version: '1.0.0' });
  let stderr = '';
  transport.stderr.on('data', (d) => { stderr += d; });
  await client.connect(transport);
  // closes the session and checks that the server had nothing to complain about
  // (under SANITIZE=1 a leak or UB report lands on stderr)
  client.closeChecked = async () => {
    const exited = new Promise((resolve) => transport.stderr.once('end', resolve));
    await client.close();
    await exited;
    assert.doesNotMatch(stderr, /Sanitizer|runtime error/);
  };
  return client;
}

function dump(db) {
  return execFileSync('sqlite3', [db, '.dump'], { encoding: 'utf8' })
    .split('\n').filter((l) => !l.startsWith('INSERT INTO servers ')).join('\n')  // a server's heartbeat moves;
}

const validator = new AjvJsonSchemaValidator();

// Calls a tool that must succeed; checks structuredContent against the
// tool's outputSchema and that the text block is the same JSON.
async function call(client, tools, name, args) {
  const tool = tools.find((t) => t.name === name);
  assert.ok(tool, `tool ${name} is listed`);
  const res = await client.callTool({ name, arguments: args });
  assert.notEqual(res.isError, true, `${name} failed: ${JSON.stringify(res.content)}`);
  assert.equal(typeof res.structuredContent, 'object');
  const check = validator.getValidator(tool.outputSchema)(res.structuredContent);
  assert.ok(check.valid, `${name} output matches its outputSchema: ${check.errorMessage}`);
  assert.equal(res.content[0].type, 'text');
  assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent);
  return res.structuredContent;
}

// Calls a tool that must fail as a tool error (isError, a message, no structuredContent).
async function callFails(client, name, args, pattern) {
  const res = await client.callTool({ name, arguments: args });
  assert.equal(res.isError, true, `${name} should fail: ${JSON.stringify(res)}`);
  assert.equal(res.structuredContent, undefined);
  assert.equal(res.content[0].type, 'text');
  if (pattern) assert.match(res.content[0].text, pattern);
  return res.content[0].text;
}

describe('mcp over stdio with the SDK client', () => {
  let t, client, tools;
  before(async () => {
    t = tempDb();
    client = await connect(t.db);
    tools = (await client.listTools()).tools;
  });
  after(async () => {
    await client.closeChecked();
    t.cleanup();
  });

  test('initialize reports Smriti, its capabilities and instructions', () => {
    assert.equal(client.getServerVersion().name, 'smriti');
    const caps = client.getServerCapabilities();
    assert.ok(caps.tools);
    assert.ok(caps.resources);
    assert.match(client.getInstructions(), /read_head/);
    assert.match(client.getInstructions(), /parent/);
  });

  test('tools/list: every tool has a title, a description and object schemas', async () => {
    const names = tools.map((x) => x.name);
    for (const n of BASE_TOOLS) assert.ok(names.includes(n), `${n} listed`);
    for (const n of names) assert.ok(BASE_TOOLS.includes(n) || OPTIONAL_TOOLS.includes(n), `${n} expected`);
    for (const tool of tools) {
      assert.match(tool.name, /^[A-Za-z0-9_.-]{1,128}$/);
      assert.ok(tool.title, `${tool.name} has a title`);
      assert.ok(tool.description.length > 60, `${tool.name} has a description an agent can act on`);
      assert.equal(tool.inputSchema.type, 'object');
      assert.equal(tool.inputSchema.additionalProperties, false);
      assert.equal(tool.outputSchema.type, 'object');
      validator.getValidator(tool.outputSchema);   // compiles
      validator.getValidator(tool.inputSchema);
    }
    const write = tools.find((x) => x.name === 'write_checkpoint');
    assert.deepEqual(write.inputSchema.required, ['space']);
    assert.ok(write.inputSchema.properties.parent);
    assert.match(tools.find((x) => x.name === 'read_head').description, /parent/);
    assert.equal(tools.find((x) => x.name === 'read_head').annotations.readOnlyHint, true);
    assert.equal(write.annotations.readOnlyHint, false);
  });

  test('the declared outputSchema has teeth: a damaged document fails it', () => {
    const schema = tools.find((x) => x.name === 'read_head').outputSchema;
    const v = validator.getValidator(schema);
    assert.equal(v({ title: 'x' }).valid, false);
    assert.equal(v({ commit_hash: 1 }).valid, false);
  });

  test('handoff: create, read HEAD, write with parent; a stale parent writes nothing', async () => {
    const sp = await call(client, tools, 'create_space', { name: 'handoff', description: 'agents pass work' });
    assert.equal(sp.name, 'handoff');
    assert.equal(sp.head, null);
    await callFails(client, 'read_head', { space: 'handoff' }, /not_found: .*no checkpoints/);

    const first = await call(client, tools, 'write_checkpoint', {
      space: 'handoff', title: 'plan', summary: 'agent A starts',
      decisions: ['use SQLite', { text: 'ship a CLI first' }],
      assumptions: ['one machine is enough'],
      tasks: [{ text: 'write the store', status: 'done' }, 'write the MCP server'],
      open_questions: ['PostgreSQL later?'],
      entities: [{ name: 'store', kind: 'module', description: 'persistence' }],
      artifacts: [{ name: 'plan.md', kind: 'plan', content: '# Plan\n1. store\n' }],
      metadata: { source: 'agent-a' },
    });
    assert.match(first.commit_hash, /^[0-9a-f]{64}$/);
    assert.equal(first.parent_hash, null);
    assert.equal(first.author, 'mcp-test', 'author defaults to the client name');
    assert.deepEqual(first.tasks.map((x) => x.status), ['done', 'open']);

    const head = await call(client, tools, 'read_head', { space: 'handoff' });
    assert.deepEqual(head, first);

    const second = await call(client, tools, 'write_checkpoint', {
      space: 'handoff', parent: head.commit_hash, title: 'store done', author: 'agent-b',
      decisions: ['use SQLite', 'ship a CLI first'], tasks: [{ text: 'write the MCP server', status: 'done' }],
    });
    assert.equal(second.parent_hash, first.commit_hash);
    assert.equal(second.author, 'agent-b');

    // agent C read HEAD before agent B wrote: its write must be refused
    const before = dump(t.db);
    const logBefore = await call(client, tools, 'log', { ref: 'handoff' });
    const msg = await callFails(client, 'write_checkpoint', {
      space: 'handoff', parent: first.commit_hash, title: 'stale write',
    }, /conflict/);
    assert.ok(msg.includes(second.commit_hash), `the error names the current HEAD: ${msg}`);
    assert.deepEqual(await call(client, tools, 'read_head', { space: 'handoff' }), second);
    const logAfter = await call(client, tools, 'log', { ref: 'handoff' });
    assert.equal(logAfter.checkpoints.length, logBefore.checkpoints.length);
    assert.equal(dump(t.db), before, 'database unchanged');

    // an unknown parent is refused the same way
    await callFails(client, 'write_checkpoint', { space: 'handoff', parent: 'abcd', title: 'x' },
      new RegExp(`conflict: .*${second.commit_hash}`));
    assert.equal(dump(t.db), before, 'database unchanged');

    // the checkpoint limits hold here as on every transport (issue 16)
    await callFails(client, 'write_checkpoint', {
      space: 'handoff', title: 'too many', decisions: Array.from({ length: 1001 }, (_, i) => `d${i}`),
    }, /'decisions' has 1001 items; a list may have at most 1000/);
    await callFails(client, 'write_checkpoint', {
      space: 'handoff', title: 'too long', open_questions: ['q'.repeat(10001)],
    }, /open_questions\[0\] has 10001 characters; an item may have at most 10000/);
    assert.equal(dump(t.db), before, 'database unchanged');
  });

  test('show_checkpoint, log, diff, restore, fork and list_spaces', async () => {
    const log = await call(client, tools, 'log', { ref: 'handoff' });
    assert.equal(log.checkpoints.length, 2);
    const [second, first] = log.checkpoints;
    assert.equal(second.parent_hash, first.commit_hash);
    assert.equal((await call(client, tools, 'log', { ref: 'handoff', limit: 1 })).checkpoints.length, 1);

    assert.deepEqual(await call(client, tools, 'show_checkpoint', { ref: first.commit_hash.slice(0, 10) }), first);
    assert.deepEqual(await call(client, tools, 'show_checkpoint', { ref: 'handoff~1' }), first);

    const d = await call(client, tools, 'diff', { from: first.commit_hash, to: 'handoff' });
    assert.equal(d.from, first.commit_hash);
    assert.equal(d.to, second.commit_hash);
    assert.equal(d.identical, false);
    assert.deepEqual(d.title, { from: 'plan', to: 'store done' });
    assert.equal((await call(client, tools, 'diff', { from: 'handoff', to: 'handoff' })).identical, true);

    const restored = await call(client, tools, 'restore', { space: 'handoff', ref: first.commit_hash });
    assert.equal(restored.parent_hash, second.commit_hash);
    assert.equal(restored.title, first.title);
    assert.deepEqual(restored.decisions, first.decisions);
    assert.equal((await call(client, tools, 'read_head', { space: 'handoff' })).commit_hash, restored.commit_hash);

    const forked = await call(client, tools, 'fork', { ref: second.commit_hash, into: 'handoff-alt' });
    assert.equal(forked.name, 'handoff-alt');
    assert.equal(forked.head, second.commit_hash);
    const spaces = (await call(client, tools, 'list_spaces', {})).spaces;
    assert.deepEqual(spaces.map((s) => [s.name, s.head]).sort(),
      [['handoff', restored.commit_hash], ['handoff-alt', second.commit_hash]]);
  });

  test('the CLI reads exactly what MCP wrote (one code path)', async () => {
    const viaMcp = await call(client, tools, 'read_head', { space: 'handoff' });
    assert.deepEqual(ok(t.db, ['head', 'handoff', '--json']), viaMcp);
    const viaCli = ok(t.db, ['log', 'handoff', '--json']);
    assert.deepEqual((await call(client, tools, 'log', { ref: 'handoff' })).checkpoints, viaCli);
  });

  test('tool errors: not found, conflict, invalid input, bad arguments', async () => {
    const before = dump(t.db);
    await callFails(client, 'read_head', { space: 'nope' }, /not_found: .*'nope'/);
    await callFails(client, 'show_checkpoint', { ref: 'ffffffff' }, /not_found/);
    await callFails(client, 'create_space', { name: 'handoff' }, /conflict: .*already exists/);
    await callFails(client, 'create_space', { name: 'a/b' }, /invalid_input/);
    await callFails(client, 'write_checkpoint', { space: 'handoff' }, /empty checkpoint/);
    await callFails(client, 'write_checkpoint', { space: 'handoff', tasks: [{ text: 't', status: 'maybe' }] },
      /tasks\[0\]\.status/);
    await callFails(client, 'read_head', { space: 42 }, /argument 'space' must be a string/);
    await callFails(client, 'read_head', {}, /missing required argument 'space'/);
    await callFails(client, 'read_head', { space: 'handoff', extra: 1 }, /unknown argument 'extra'/);
    await callFails(client, 'log', { ref: 'handoff', limit: 0 }, /at least 1/);
    await callFails(client, 'write_checkpoint', { space: 'handoff', decisions: [7] },
      /decisions\[0\]' must be a string or an object/);
    assert.equal(dump(t.db), before, 'no failed call wrote anything');
  });

  test('unknown tool is a JSON-RPC -32602 error', async () => {
    await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }),
      (e) => e instanceof McpError && e.code === ErrorCode.InvalidParams && /no_such_tool/.test(e.message));
  });

  test('review: typed findings, nothing written', async () => {
    // the review operation exists in this tree, so the tool must be listed
    assert.ok(tools.find((x) => x.name === 'review'), 'review is listed');
    await call(client, tools, 'create_space', { name: 'reviewed' });
    const c = await call(client, tools, 'write_checkpoint', {
      space: 'reviewed', title: 'db choice', decisions: ['Use Postgres', 'Use SQLite instead of Postgres'],
    });
    const before = dump(t.db);
    const out = await call(client, tools, 'review', { ref: 'reviewed', llm: false });
    assert.equal(out.commit_hash, c.commit_hash);
    const f = out.findings.find((x) => x.type === 'contradiction');
    assert.ok(f, JSON.stringify(out.findings));
    assert.deepEqual(f.items.map((i) => [i.field, i.index]), [['decisions', 0], ['decisions', 1]]);
    assert.equal(f.source, 'deterministic');
    assert.equal(dump(t.db), before, 'review only reads');
    await callFails(client, 'review', { ref: 'reviewed', llm: 'no' }, /'llm' must be a boolean/);
    await callFails(client, 'review', { ref: 'nope' }, /not_found/);
  });

  test('resources: HEADs listed, read as Markdown and JSON, templates, unknown URIs', async () => {
    const { resources } = await client.listResources();
    assert.deepEqual(resources.map((r) => r.uri),
      ['smriti://spaces/handoff/head', 'smriti://spaces/handoff-alt/head', 'smriti://spaces/reviewed/head']);
    assert.equal(resources[0].mimeType, 'text/markdown');
    const head = await call(client, tools, 'read_head', { space: 'handoff' });

    const md = (await client.readResource({ uri: 'smriti://spaces/handoff/head' })).contents[0];
    assert.equal(md.mimeType, 'text/markdown');
    assert.equal(md.uri, 'smriti://spaces/handoff/head');
    assert.match(md.text, /^# plan\n/);
    assert.ok(md.text.includes(`\`${head.commit_hash}\``));
    assert.match(md.text, /## Decisions\n\n- use SQLite\n- ship a CLI first\n/);
    assert.match(md.text, /## Tasks\n\n- \[x\] write the store\n- \[ \] write the MCP server\n/);
    assert.match(md.text, /### plan\.md \(plan\)\n\n```\n# Plan\n1\. store\n```\n/);

    for (const uri of ['smriti://spaces/handoff/head.json', 'smriti://spaces/handoff/head?format=json']) {
      const js = (await client.readResource({ uri })).contents[0];
      assert.equal(js.mimeType, 'application/json');
      assert.deepEqual(JSON.parse(js.text), head);
    }
    const byHash = (await client.readResource({ uri: `smriti://checkpoints/${head.commit_hash}.json` })).contents[0];
    assert.deepEqual(JSON.parse(byHash.text), head);
    const byHashMd = (await client.readResource({ uri: `smriti://checkpoints/${head.commit_hash}` })).contents[0];
    assert.equal(byHashMd.text, md.text);

    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((x) => x.uriTemplate), [
      'smriti://spaces/{name}/head', 'smriti://spaces/{name}/head.json',
      'smriti://checkpoints/{hash}', 'smriti://checkpoints/{hash}.json']);

    for (const uri of ['smriti://spaces/nope/head', 'smriti://checkpoints/ffffffffff', 'smriti://other',
      'http://example.com/', 'smriti://checkpoints/not-a-hash', 'smriti://spaces/handoff/head?format=xml']) {
      await assert.rejects(client.readResource({ uri }),
        (e) => e instanceof McpError && e.code === -32002, `${uri} is not found`);
    }
  });

  test('resource URIs percent-encode Space names', async () => {
    const name = 'café plans? #1';
    await call(client, tools, 'create_space', { name });
    await call(client, tools, 'write_checkpoint', { space: name, title: 'unicode' });
    const { resources } = await client.listResources();
    const entry = resources.find((r) => r.name === name);
    assert.equal(entry.uri, 'smriti://spaces/caf%C3%A9%20plans%3F%20%231/head');
    const md = (await client.readResource({ uri: entry.uri })).contents[0];
    assert.match(md.text, /^# unicode\n/);
    assert.match(md.text, /- Space: café plans\? #1\n/);
  });

  test('ping', async () => {
    assert.deepEqual(await client.ping(), {});
  });
});

describe('mcp resources/list paginates', () => {
  test('more Spaces than a page come back over several pages, each once', async () => {
    const t = tempDb();
    const client = await connect(t.db);
    try {
      const tools = (await client.listTools()).tools;
      const names = [];
      for (let i = 0; i < 130; i++) {
        const name = `s${String(i).padStart(3, '0')}`;
        names.push(name);
        await call(client, tools, 'create_space', { name });
        if (i !== 7) await call(client, tools, 'write_checkpoint', { space: name, title: `t${i}` });
      }
      const seen = [];
      let cursor;
      let pages = 0;
      do {
        const page = await client.listResources(cursor ? { cursor } : {});
        seen.push(...page.resources.map((r) => r.name));
        cursor = page.nextCursor;
        pages++;
      } while (cursor);
      assert.equal(pages, 2);
      assert.deepEqual(seen, names.filter((n) => n !== 's007'), 'every non-empty Space once, in order');
    } finally {
      await client.closeChecked();
      t.cleanup();
    }
  });
});

describe('mcp author defaults', () => {
  test('SMRITI_AUTHOR signs checkpoints written without an author', async () => {
    const t = tempDb();
    const client = await connect(t.db, { SMRITI_AUTHOR: 'night-shift' }, 'host-x');
    try {
      const tools = (await client.listTools()).tools;
      await call(client, tools, 'create_space', { name: 'a' });
      const c = await call(client, tools, 'write_checkpoint', { space: 'a', title: 'x' });
      assert.equal(c.author, 'night-shift');
      const r = await call(client, tools, 'restore', { space: 'a', ref: c.commit_hash });
      assert.equal(r.author, 'night-shift');
    } finally {
      await client.closeChecked();
      t.cleanup();
    }
  });
});
