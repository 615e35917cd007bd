// mcp-lean.test.mjs -- `smriti mcp` from the lean binary: it serves MCP on a
// SQLite store itself (fast start for agent hosts), and hands itself to
// smriti-full when a provider is configured, so the review tool keeps its
// LLM pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import path from 'node:path';
import { tempDb, ok, childEnv, SMRITI } from './helpers.mjs';

// Starts `smriti mcp`, completes initialize + one tools/call, and reports
// which executable the process ended up running.
async function session(db, env) {
  const child = spawn(SMRITI, ['mcp'], { env: childEnv({ SMRITI_DB: db, ...env }), stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  const lines = [];
  let wake;
  child.stdout.on('data', (d) => {
    out += d;
    let i;
    while ((i = out.indexOf('\n')) >= 0) { lines.push(JSON.parse(out.slice(0, i))); out = out.slice(i + 1); wake?.(); }
  });
  const next = async () => { while (!lines.length) await new Promise((r) => { wake = r; }); return lines.shift(); };
  const send = (m) => child.stdin.write(JSON.stringify(m) + '\n');
  send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  const init = await next();
  const exe = path.basename(readlinkSync(`/proc/${child.pid}/exe`));
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_head', arguments: { space: 'demo' } } });
  const call = await next();
  child.stdin.end();
  const code = await new Promise((r) => child.on('close', r));
  return { init, call, exe, code };
}

test('the lean binary serves MCP itself on SQLite', async () => {
  const t = tempDb();
  ok(t.db, ['space', 'create', 'demo']);
  const head = ok(t.db, ['commit', 'demo', '-m', 'first', '--json']);
  const r = await session(t.db, {});
  assert.equal(r.exe, 'smriti');
  assert.equal(r.init.result.protocolVersion, '2025-11-25');
  assert.equal(r.call.result.structuredContent.commit_hash, head.commit_hash);
  assert.equal(r.code, 0);
  t.cleanup();
});

test('with a provider configured it runs in smriti-full', async () => {
  const t = tempDb();
  ok(t.db, ['space', 'create', 'demo']);
  ok(t.db, ['commit', 'demo', '-m', 'first']);
  const r = await session(t.db, { OPENAI_API_KEY: 'sk-test' });
  assert.equal(r.exe, 'smriti-full');
  assert.equal(r.call.result.structuredContent.title, 'first');
  t.cleanup();
});
