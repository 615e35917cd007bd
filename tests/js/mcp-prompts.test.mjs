// mcp-prompts.test.mjs -- MCP prompts and completion, driven by the official
// TypeScript SDK client: the "handoff" prompt (HEAD and the newest hand-off
// note, the same Markdown as the HEAD resource, from the handoff.text
// operation) over stdio and Streamable HTTP, its errors, and completion of
// Space names for the prompt and the HEAD resource templates.  Which Spaces
// a signed-in caller is offered is checked in teams.test.mjs.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CompleteResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { tempDb, ok, SMRITI_FULL } from './helpers.mjs';
import { startServer } from './http-helpers.mjs';

function serverEnv(extra) {
  const env = { ...extra };
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) {
    if (process.env[k]) env[k] = process.env[k];
  }
  return env;
}

async function connectStdio(db) {
  const transport = new StdioClientTransport({
    command: SMRITI_FULL, args: ['mcp'], env: serverEnv({ SMRITI_DB: db }), stderr: 'pipe',
  });
  const client = new Client({ name: 'prompts-test', version: '1.0.0' });
  let stderr = '';
  transport.stderr.on('data', (d) => { stderr += d; });
  await client.connect(transport);
  client.closeChecked = async () => {
    const exited = new Promise((resolve) => transport.stderr.once('end', resolve));
    await client.close();
    await exited;
    assert.doesNotMatch(stderr, /Sanitizer|runtime error/);
  };
  return client;
}

const invalidParams = (pattern) => (e) => e instanceof McpError && e.code === -32602 &&
  pattern.test(e.message);

const complete = (client, ref, name, value) =>
  client.complete({ ref, argument: { name, value } }).then((r) => r.completion);
const promptRef = { type: 'ref/prompt', name: 'handoff' };

describe('mcp prompts and completion over stdio', () => {
  let t, client;
  before(async () => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'Plans']);
    ok(t.db, ['checkpoint', 'create', 'Plans', '--title', 'plan', '--decision', 'use SQLite',
      '--task', 'write the store', '--json']);
    ok(t.db, ['space', 'create', 'planning-empty']);       // no checkpoint: nothing to pick up
    ok(t.db, ['space', 'create', 'other']);
    ok(t.db, ['checkpoint', 'create', 'other', '--title', 'elsewhere', '--json']);
    client = await connectStdio(t.db);
  });
  after(async () => {
    await client?.closeChecked();
    t?.cleanup();
  });

  test('initialize declares prompts and completions', () => {
    const caps = client.getServerCapabilities();
    assert.deepEqual(caps.prompts, { listChanged: false });
    assert.deepEqual(caps.completions, {});
  });

  test('prompts/list: the handoff and prime prompts, each with its one argument', async () => {
    const { prompts } = await client.listPrompts();
    assert.deepEqual(prompts.map((p) => p.name), ['handoff', 'prime']);
    for (const p of prompts) {
      assert.ok(p.description.length > 20, p.name);
      assert.deepEqual(p.arguments.map((a) => [a.name, a.required]), [['space', true]], p.name);
    }
  });

  test("prompts/get prime: smriti prime's text, with this server's tool names", async () => {
    const res = await client.getPrompt({ name: 'prime', arguments: { space: 'Plans' } });
    assert.equal(res.messages.length, 1);
    assert.equal(res.description, "Primer of the Space 'Plans'");
    const text = res.messages[0].content.text;
    const cli = ok(t.db, ['prime', 'Plans', '--mcp', '--json']);
    assert.equal(text, cli.text, 'the same text as smriti prime --mcp');
    assert.match(text, /read_head/);
    assert.match(text, /use SQLite/);
    assert.deepEqual(await complete(client, { type: 'ref/prompt', name: 'prime' }, 'space', 'pl'),
      await complete(client, promptRef, 'space', 'pl'));
  });

  test('prompts/get: HEAD as the HEAD resource renders it, then the newest note, first', async () => {
    const res = await client.getPrompt({ name: 'handoff', arguments: { space: 'Plans' } });
    assert.equal(res.messages.length, 1);
    assert.equal(res.messages[0].role, 'user');
    const text = res.messages[0].content.text;
    const md = (await client.readResource({ uri: 'smriti://spaces/Plans/head' })).contents[0].text;
    assert.ok(text.endsWith(md), 'the prompt carries the one checkpoint Markdown of HEAD');
    assert.match(text, /^You are picking up work kept in Smriti, in the Space 'Plans'\./);
    assert.doesNotMatch(text, /hand-off note/i, 'no note yet');
    assert.match(text, /## Decisions\n\n- use SQLite\n/);

    ok(t.db, ['handoff', 'Plans', '-m', 'do not drop the foreign keys']);
    const after1 = (await client.getPrompt({ name: 'handoff', arguments: { space: 'Plans' } }))
      .messages[0].content.text;
    assert.match(after1, /Read the hand-off note first/);
    const note = after1.indexOf('## Hand-off note\n\ndo not drop the foreign keys\n');
    assert.ok(note > 0 && note < after1.indexOf('## Decisions'), 'the note comes before the state');
    assert.doesNotMatch(after1, /HEAD has moved/);

    ok(t.db, ['checkpoint', 'create', 'Plans', '--title', 'plan v2', '--decision', 'ship a CLI first', '--json']);
    const moved = (await client.getPrompt({ name: 'handoff', arguments: { space: 'Plans' } }))
      .messages[0].content.text;
    assert.match(moved, /^# plan v2\n/m);
    assert.match(moved, /do not drop the foreign keys/);
    assert.match(moved, /HEAD has moved since: check it still applies/);
  });

  test('prompts/get refuses what it cannot answer with -32602, naming why', async () => {
    await assert.rejects(client.getPrompt({ name: 'nope', arguments: { space: 'Plans' } }),
      invalidParams(/unknown prompt 'nope'/));
    await assert.rejects(client.getPrompt({ name: 'handoff' }),
      invalidParams(/needs the argument 'space'/));
    await assert.rejects(client.getPrompt({ name: 'handoff', arguments: { space: 'Plans', x: 'y' } }),
      invalidParams(/takes no argument 'x'/));
    await assert.rejects(client.getPrompt({ name: 'handoff', arguments: { space: 'missing' } }),
      invalidParams(/no space 'missing'/));
    await assert.rejects(client.getPrompt({ name: 'handoff', arguments: { space: 'planning-empty' } }),
      invalidParams(/has no checkpoints yet/));
  });

  test('completion: Space names with a HEAD, by prefix, for the prompt and the HEAD templates', async () => {
    assert.deepEqual(await complete(client, promptRef, 'space', 'pl'),
      { values: ['Plans'], total: 1, hasMore: false });
    assert.deepEqual((await complete(client, promptRef, 'space', '')).values, ['Plans', 'other']);
    for (const uri of ['smriti://spaces/{name}/head', 'smriti://spaces/{name}/head.json']) {
      assert.deepEqual((await complete(client, { type: 'ref/resource', uri }, 'name', 'o')).values,
        ['other']);
    }
    assert.deepEqual((await complete(client, promptRef, 'space', 'zz')).values, []);
  });

  test('completion: nothing to offer is an empty answer; a malformed request is -32602', async () => {
    const none = { values: [], total: 0, hasMore: false };
    assert.deepEqual(await complete(client, { type: 'ref/prompt', name: 'other' }, 'space', 'p'), none);
    assert.deepEqual(await complete(client, promptRef, 'topic', 'p'), none);
    assert.deepEqual(await complete(client,
      { type: 'ref/resource', uri: 'smriti://checkpoints/{hash}' }, 'hash', 'ab'), none);
    const raw = (params) => client.request({ method: 'completion/complete', params }, CompleteResultSchema);
    await assert.rejects(raw({ ref: { type: 'ref/other', name: 'x' }, argument: { name: 'space', value: '' } }),
      invalidParams(/needs 'ref' with type "ref\/prompt"/));
    await assert.rejects(raw({ ref: promptRef, argument: { name: 'space' } }),
      invalidParams(/needs 'argument' with a string 'name' and a string 'value'/));
  });

  test('completion: at most 100 values, with the total and hasMore', async () => {
    const tools = (await client.listTools()).tools.map((x) => x.name);
    assert.ok(tools.includes('create_space'));
    for (let i = 0; i < 105; i++) {
      const name = `bulk-${String(i).padStart(3, '0')}`;
      await client.callTool({ name: 'create_space', arguments: { name } });
      await client.callTool({ name: 'write_checkpoint', arguments: { space: name, title: 't' } });
    }
    const c = await complete(client, promptRef, 'space', 'BULK');
    assert.equal(c.values.length, 100);
    assert.equal(c.total, 105);
    assert.equal(c.hasMore, true);
    assert.equal(c.values[0], 'bulk-000');
    assert.equal(c.values[99], 'bulk-099');
  });
});

describe('mcp prompts and completion over Streamable HTTP', () => {
  let t, server, client;
  before(async () => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'shared']);
    ok(t.db, ['checkpoint', 'create', 'shared', '--title', 'shared plan', '--json']);
    ok(t.db, ['handoff', 'shared', '-m', 'the tests are flaky on Fridays']);
    server = await startServer(t.db, { args: ['--quiet'] });
    client = new Client({ name: 'http-prompts', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  });
  after(async () => {
    await client?.close();
    await server?.stop();
    t?.cleanup();
  });

  test('the same prompt and completion as over stdio', async () => {
    assert.deepEqual(client.getServerCapabilities().completions, {});
    const text = (await client.getPrompt({ name: 'handoff', arguments: { space: 'shared' } }))
      .messages[0].content.text;
    assert.match(text, /^# shared plan\n/m);
    assert.match(text, /## Hand-off note\n\nthe tests are flaky on Fridays\n/);
    assert.deepEqual((await complete(client, promptRef, 'space', 'sh')).values, ['shared']);
  });

  test('smriti mcp with SMRITI_URL gets the server\'s text and names', async () => {
    const remote = new Client({ name: 'remote-prompts', version: '1.0.0' });
    await remote.connect(new StdioClientTransport({
      command: SMRITI_FULL, args: ['mcp'], env: serverEnv({ SMRITI_URL: server.url }), stderr: 'pipe',
    }));
    try {
      const args = { name: 'handoff', arguments: { space: 'shared' } };
      assert.deepEqual(await remote.getPrompt(args), await client.getPrompt(args));
      assert.deepEqual(await complete(remote, promptRef, 'space', ''), await complete(client, promptRef, 'space', ''));
      // resources/list, like completion, lists Spaces with no params: the remote call sends {}
      assert.deepEqual(await remote.listResources(), await client.listResources());
    } finally {
      await remote.close();
    }
  });
});
