// mcp-stdio.test.mjs -- `smriti mcp` spoken to byte by byte, without the
// SDK: JSON-RPC framing and envelope rules, version negotiation, and
// malformed input (not JSON, no method, unknown method, wrong argument
// types, a 10 MB line, a line over the 10 MiB cap), each answered with the
// right error while the server keeps serving the next request.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { tempDb, childEnv, ok, SMRITI_FULL, SMRITI } from './helpers.mjs';

const HANG_GUARD_MS = 60000;   // a missing answer fails the test instead of hanging it

// A server process and a line-oriented view of its stdout.
function startServer(db, bin = SMRITI_FULL) {
  const child = spawn(bin, ['mcp'], { env: childEnv({ SMRITI_DB: db }), stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = [];
  const waiters = [];
  let partial = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    partial += d;
    let i;
    while ((i = partial.indexOf('\n')) >= 0) {
      const line = partial.slice(0, i);
      partial = partial.slice(i + 1);
      if (waiters.length) waiters.shift()(line);
      else lines.push(line);
    }
  });
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const next = () => {
    if (lines.length) return Promise.resolve(lines.shift());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer; stderr: ${stderr}`)), HANG_GUARD_MS);
      waiters.push((line) => { clearTimeout(timer); resolve(line); });
    });
  };
  const send = (text) => child.stdin.write(text + '\n');
  const ask = async (msg) => {
    send(typeof msg === 'string' ? msg : JSON.stringify(msg));
    const line = await next();
    return JSON.parse(line);   // stdout carries JSON-RPC messages only
  };
  const close = async () => {
    child.stdin.end();
    return exited;
  };
  return { child, send, next, ask, close, pending: () => lines.length, stderr: () => stderr };
}

const init = (id, version = '2025-11-25') => ({
  jsonrpc: '2.0', id, method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});
const ping = (id) => ({ jsonrpc: '2.0', id, method: 'ping' });

// The server must still answer normally after a bad line.
async function stillServing(s, id = 'after') {
  assert.deepEqual(await s.ask(ping(id)), { jsonrpc: '2.0', id, result: {} });
}

describe('mcp stdio framing and envelope', () => {
  let t, s;
  before(() => {
    t = tempDb();
    ok(t.db, ['space', 'create', 'demo']);
    ok(t.db, ['checkpoint', 'create', 'demo', '--title', 'first', '--decision', 'd1']);
    s = startServer(t.db);
  });
  after(async () => {
    assert.equal((await s.close()).code, 0);
    assert.doesNotMatch(s.stderr(), /Sanitizer|runtime error/);
    t.cleanup();
  });

  test('id 0 is a valid id and is echoed as a number', async () => {
    const r = await s.ask(init(0));
    assert.equal(r.id, 0);
    assert.equal(r.result.protocolVersion, '2025-11-25');
    assert.equal(r.result.serverInfo.name, 'smriti');
  });

  test('string ids are echoed exactly', async () => {
    const r = await s.ask(ping('req-7/é'));
    assert.deepEqual(r, { jsonrpc: '2.0', id: 'req-7/é', result: {} });
  });

  test('notifications never get a reply', async () => {
    s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } }));
    s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/whatever' }));
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 99, result: {} }));  // a client response: dropped
    const r = await s.ask(ping(1));
    assert.deepEqual(r, { jsonrpc: '2.0', id: 1, result: {} }, 'the next line is the ping answer');
  });

  test('a line that is not JSON: -32700 with id null', async () => {
    const r = await s.ask('this is not json');
    assert.equal(r.id, null);
    assert.equal(r.error.code, -32700);
    await stillServing(s);
  });

  test('invalid UTF-8 is a parse error', async () => {
    s.child.stdin.write(Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d, 0x0a]));
    const r = JSON.parse(await s.next());
    assert.equal(r.error.code, -32700);
    assert.equal(r.id, null);
    await stillServing(s);
  });

  test('a request without method: -32600 with its id', async () => {
    const r = await s.ask({ jsonrpc: '2.0', id: 5 });
    assert.equal(r.id, 5);
    assert.equal(r.error.code, -32600);
    await stillServing(s);
  });

  test('envelope errors: wrong jsonrpc, non-string method, bad id, batch, scalar', async () => {
    let r = await s.ask({ jsonrpc: '1.0', id: 6, method: 'ping' });
    assert.deepEqual([r.id, r.error.code], [6, -32600]);
    r = await s.ask({ jsonrpc: '2.0', id: 7, method: 12 });
    assert.deepEqual([r.id, r.error.code], [7, -32600]);
    r = await s.ask({ jsonrpc: '2.0', id: null, method: 'ping' });
    assert.deepEqual([r.id, r.error.code], [null, -32600]);
    r = await s.ask({ jsonrpc: '2.0', id: { a: 1 }, method: 'ping' });
    assert.deepEqual([r.id, r.error.code], [null, -32600]);
    r = await s.ask([ping(8), ping(9)]);
    assert.deepEqual([r.id, r.error.code], [null, -32600]);
    r = await s.ask('42');
    assert.deepEqual([r.id, r.error.code], [null, -32600]);
    await stillServing(s);
  });

  test('unknown methods get -32601 at once', async () => {
    for (const method of ['logging/setLevel', 'tools/frobnicate', 'subscriptions/frobnicate', 'resources/frobnicate']) {
      const r = await s.ask({ jsonrpc: '2.0', id: method, method, params: {} });
      assert.equal(r.id, method);
      assert.equal(r.error.code, -32601);
    }
    await stillServing(s);
  });

  test('wrong param types: -32602', async () => {
    let r = await s.ask({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: [1, 2] });
    assert.deepEqual([r.id, r.error.code], [10, -32602]);
    r = await s.ask({ jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 7 } });
    assert.equal(r.error.code, -32602);
    r = await s.ask({ jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'read_head', arguments: 'demo' } });
    assert.equal(r.error.code, -32602);
    r = await s.ask({ jsonrpc: '2.0', id: 13, method: 'tools/call', params: { name: 'nope', arguments: {} } });
    assert.equal(r.error.code, -32602);
    assert.match(r.error.message, /Unknown tool/);
    r = await s.ask({ jsonrpc: '2.0', id: 14, method: 'resources/read', params: { uri: 5 } });
    assert.equal(r.error.code, -32602);
    r = await s.ask({ jsonrpc: '2.0', id: 15, method: 'initialize', params: {} });
    assert.equal(r.error.code, -32602);
    await stillServing(s);
  });

  test('tool arguments of the wrong type: a tool error the agent can read', async () => {
    const before = ok(t.db, ['log', 'demo', '--json']);
    const cases = [
      [{ space: 5 }, /'space' must be a string/],
      [{ space: 'demo', title: ['x'] }, /'title' must be a string/],
      [{ space: 'demo', decisions: 'one' }, /'decisions' must be an array/],
      [{ space: 'demo', decisions: [{ txt: 'x' }] }, /decisions\[0\]\.text/],
      [{ space: 'demo', metadata: [] }, /'metadata' must be an object/],
    ];
    for (const [args, pattern] of cases) {
      const r = await s.ask({ jsonrpc: '2.0', id: 'w', method: 'tools/call',
        params: { name: 'write_checkpoint', arguments: args } });
      assert.equal(r.result.isError, true, JSON.stringify(r));
      assert.equal(r.result.structuredContent, undefined);
      assert.match(r.result.content[0].text, pattern);
    }
    assert.deepEqual(ok(t.db, ['log', 'demo', '--json']), before, 'nothing written');
    await stillServing(s);
  });

  test('a 10 MB line that is not JSON: -32700, then the next request is served', async () => {
    s.send('x'.repeat(10_000_000));
    const r = JSON.parse(await s.next());
    assert.deepEqual([r.id, r.error.code], [null, -32700]);
    await stillServing(s, 'after-10mb');
  });

  test('a 10 MB request under the cap is handled as a request', async () => {
    const big = { jsonrpc: '2.0', id: 'big', method: 'tools/call',
      params: { name: 'read_head', arguments: { space: 'demo', pad: 'p'.repeat(10_000_000) } } };
    const r = await s.ask(big);
    assert.equal(r.id, 'big');
    assert.equal(r.result.isError, true);
    assert.match(r.result.content[0].text, /unknown argument 'pad'/);
    await stillServing(s);
  });

  test('a line over the 10 MiB cap: -32600 with id null, the rest of the line skipped', async () => {
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 'huge', method: 'ping', params: { pad: 'q'.repeat(11 * 1024 * 1024) } });
    s.send(huge);
    const r = JSON.parse(await s.next());
    assert.deepEqual([r.id, r.error.code], [null, -32600]);
    assert.match(r.error.message, /longer than 10485760 bytes/);
    await stillServing(s, 'after-huge');
    assert.equal(s.pending(), 0, 'exactly one answer for the long line');
  });

  test('a result too big for one message: the text copy goes first, then a -32603', async () => {
    // A checkpoint is at most 4 MiB as JSON (docs/http.md), but quotes grow when the text
    // copy escapes them again: two artifacts of a million '"' each are ~4 MB in
    // structuredContent and ~8 MB more as text, so only the text copy is left out.
    ok(t.db, ['space', 'create', 'six']);
    const quotes = '"'.repeat(1_000_000);
    const six = { jsonrpc: '2.0', id: 'six', method: 'tools/call', params: { name: 'write_checkpoint',
      arguments: { space: 'six', title: 'big', artifacts: [{ name: 'a', content: quotes }, { name: 'b', content: quotes }] } } };
    const line = await s.ask(six);
    assert.equal(line.result.isError, false);
    assert.equal(line.result.structuredContent.artifacts[0].content.length, 1_000_000);
    assert.match(line.result.content[0].text, /left out/);
    // three checkpoints of ~4 MB each: their log cannot fit a line at all
    ok(t.db, ['space', 'create', 'huge']);
    const blob = 'h'.repeat(1_000_000);
    for (let i = 0; i < 3; i++) {
      ok(t.db, ['checkpoint', 'create', 'huge', '--from-json', '-'],
        { input: JSON.stringify({ title: `huge ${i}`, artifacts: ['w', 'x', 'y', 'z'].map((name) => ({ name, content: blob })) }) });
    }
    const r = await s.ask({ jsonrpc: '2.0', id: 'huge', method: 'tools/call',
      params: { name: 'log', arguments: { ref: 'huge' } } });
    assert.deepEqual([r.id, r.error.code], ['huge', -32603]);
    assert.match(r.error.message, /message limit/);
    await stillServing(s);
  });

  test('pipelined requests are answered in order', async () => {
    const ids = Array.from({ length: 50 }, (_, i) => i + 100);
    s.send(ids.map((id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call',
      params: { name: 'read_head', arguments: { space: 'demo' } } })).join('\n'));
    for (const id of ids) {
      const r = JSON.parse(await s.next());
      assert.equal(r.id, id);
      assert.equal(r.result.structuredContent.title, 'first');
    }
  });

  test('CRLF line endings and blank lines are tolerated', async () => {
    s.child.stdin.write('\n   \n' + JSON.stringify(ping('crlf')) + '\r\n');
    assert.deepEqual(JSON.parse(await s.next()), { jsonrpc: '2.0', id: 'crlf', result: {} });
  });
});

describe('mcp version negotiation', () => {
  for (const [asked, answered] of [['2025-11-25', '2025-11-25'], ['2025-06-18', '2025-06-18'],
    ['2025-03-26', '2025-03-26'], ['2024-11-05', '2024-11-05'], ['2099-01-01', '2025-11-25'],
    ['2026-07-28', '2025-11-25']]) {
    test(`client asks ${asked}, server answers ${answered}`, async () => {
      const t = tempDb();
      const s = startServer(t.db);
      try {
        const r = await s.ask(init(1, asked));
        assert.equal(r.result.protocolVersion, answered);
      } finally {
        assert.equal((await s.close()).code, 0);
        t.cleanup();
      }
    });
  }
});

describe('mcp process behaviour', () => {
  test('exits 0 at end of input, stdout holds only protocol messages, logs go to stderr', async () => {
    const t = tempDb();
    const s = startServer(t.db);
    await s.ask(init(1));
    await s.ask('not json');
    const { code } = await s.close();
    assert.equal(code, 0);
    assert.match(s.stderr(), /smriti mcp: serving MCP/);
    t.cleanup();
  });

  test('the lean smriti binary hands mcp to smriti-full', async () => {
    const t = tempDb();
    const s = startServer(t.db, SMRITI);
    const r = await s.ask(init(0));
    assert.equal(r.result.serverInfo.name, 'smriti');
    assert.equal((await s.close()).code, 0);
    t.cleanup();
  });

  test('a last message without a newline is still answered before exit', async () => {
    const t = tempDb();
    const s = startServer(t.db);
    s.child.stdin.end(JSON.stringify(ping('last')));
    assert.deepEqual(JSON.parse(await s.next()), { jsonrpc: '2.0', id: 'last', result: {} });
    assert.equal((await s.close()).code, 0);
    t.cleanup();
  });
});
