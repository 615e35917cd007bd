// version.test.mjs -- `smriti --version`, `-V` and `smriti version` print the
// version written in src/version.h, the one MCP reports as serverInfo.version,
// without opening (or creating) a database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ROOT, SMRITI, SMRITI_FULL, tempDb, childEnv } from './helpers.mjs';

const VERSION = readFileSync(path.join(ROOT, 'src/version.h'), 'utf8')
  .match(/#define SMRITI_VERSION "([^"]+)"/)[1];

function smriti(bin, args, env = {}, input) {
  return spawnSync(bin, args, { encoding: 'utf8', input, env: childEnv(env) });
}

test('--version, -V and version print "smriti VERSION" from both binaries', () => {
  assert.match(VERSION, /^\d+\.\d+\.\d+/);
  for (const bin of [SMRITI, SMRITI_FULL]) {
    for (const args of [['--version'], ['-V'], ['version']]) {
      const r = smriti(bin, args);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, `smriti ${VERSION}\n`, `${path.basename(bin)} ${args}`);
    }
  }
  const r = smriti(SMRITI, ['version', '--json']);
  assert.deepEqual(JSON.parse(r.stdout), { name: 'smriti', version: VERSION });
});

test('--version works after the global options and creates no database', () => {
  const t = tempDb();
  const r = smriti(SMRITI, ['--db', t.db, '--version'], { HOME: t.dir, XDG_DATA_HOME: path.join(t.dir, 'xdg') });
  assert.equal(r.stdout, `smriti ${VERSION}\n`);
  assert.deepEqual(readdirSync(t.dir), []);
  t.cleanup();
});

test('version with an unknown argument is a usage error', () => {
  const r = smriti(SMRITI, ['version', '--short']);
  assert.equal(r.status, 2);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^smriti: unknown argument '--short' \(usage: smriti version \[--json\]\)\n$/);
  assert.equal(smriti(SMRITI, ['version', '--help']).stdout, 'usage: smriti version [--json]\n');
});

test('MCP reports the same version as serverInfo.version', () => {
  const t = tempDb();
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
  const r = smriti(SMRITI, ['mcp'], { SMRITI_DB: t.db }, JSON.stringify(init) + '\n');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout.split('\n')[0]).result.serverInfo.version, VERSION);
  t.cleanup();
});
