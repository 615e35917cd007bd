// mcp-docs.test.mjs -- the documents name the MCP tools the server offers,
// no more and no fewer: the README's list and docs/mcp.md's table are held
// to `tools/list` of `smriti mcp`, asked with the official SDK client, so a
// new tool cannot ship undocumented and a removed one cannot linger.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ROOT, tempDb, SMRITI_FULL, childEnv } from './helpers.mjs';

async function serverTools() {
  const t = tempDb();
  const client = new Client({ name: 'mcp-docs-test', version: '1.0.0' });
  try {
    await client.connect(new StdioClientTransport({ command: SMRITI_FULL, args: ['mcp'], env: childEnv({ SMRITI_DB: t.db }) }));
    return (await client.listTools()).tools.map((x) => x.name).sort();
  } finally {
    await client.close();
    t.cleanup();
  }
}

// The backticked names of the README's sentence "Its tools are ...".
function readmeTools() {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Agents over MCP'));
  const sentence = /Its\s+tools\s+are[^:]*:([^.]*)\./s.exec(section);
  assert.ok(sentence, 'the README names the tools in "Its tools are ...: a, b."');
  return [...sentence[1].matchAll(/`([a-z_]+)`/g)].map((m) => m[1]).sort();
}

// The first column of docs/mcp.md's tool table (rows "| `tool` | `op` | ...").
function mcpDocTools() {
  const doc = readFileSync(path.join(ROOT, 'docs/mcp.md'), 'utf8');
  return [...doc.matchAll(/^\| `([a-z_]+)` \| `[a-z._]+` \|/gm)].map((m) => m[1]).sort();
}

test('README and docs/mcp.md name exactly the tools the server lists', async () => {
  const tools = await serverTools();
  assert.ok(tools.length >= 10, tools.join(' '));
  assert.deepEqual(readmeTools(), tools, 'README.md, "Agents over MCP"');
  assert.deepEqual(mcpDocTools(), tools, 'docs/mcp.md, the tool table');
});
