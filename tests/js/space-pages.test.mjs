// space-pages.test.mjs -- listing Spaces a page at a time (issue 32: a
// database of 10,000 Spaces), on SQLite and (with SMRITI_TEST_PG)
// PostgreSQL: `space list --limit N --after NAME`, GET /v4/repos?limit=&after=
// and MCP list_spaces {limit, after} give the same pages in name order,
// which put together are the whole list, with no gap and no duplicate; a
// deleted Space is in no page; a person with grants pages through the
// Spaces they may read only; bad values are refused and change nothing.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tempDb, ok, run, pgSchemaDb, SMRITI_FULL } from './helpers.mjs';
import { startServer, request, expectStatus, assertError } from './http-helpers.mjs';

const ADMIN = 'admin-secret-token-for-pages-0123';
// names whose order is not the order they are made in
const NAMES = ['delta', 'alpha', 'echo', 'charlie', 'bravo', 'golf', 'foxtrot', 'hotel', 'india'];
const SORTED = [...NAMES].sort();

// Every page of size limit from fetch(after), put together.
async function allPages(limit, fetch) {
  const out = [];
  let after;
  for (let guard = 0; guard < 50; guard++) {
    const page = await fetch(after);
    assert.ok(page.length <= limit, `a page holds at most ${limit}`);
    out.push(...page);
    if (page.length < limit) return out;
    after = page[page.length - 1];
  }
  throw new Error('no last page');
}

function pagesSuite(backend, skip) {
  describe(`Space pages (${backend})`, { skip }, () => {
    let t, pg, db, srv, mcp;
    const cli = (args) => ok(db, args, { bin: SMRITI_FULL });
    const auth = { Authorization: `Bearer ${ADMIN}` };

    before(async () => {
      t = tempDb();
      db = t.db;
      if (backend === 'postgres') ({ db, cleanup: pg } = pgSchemaDb(process.env.SMRITI_TEST_PG, 'smriti_pages'));
      for (const n of NAMES) cli(['space', 'create', n]);
      cli(['space', 'create', 'gone']);
      cli(['space', 'delete', 'gone', '--yes']);
      cli(['user', 'add', 'rea']);
      for (const n of ['bravo', 'echo', 'foxtrot', 'india']) cli(['grant', 'rea', n, 'reader']);
      srv = await startServer(db, { args: ['--quiet'], env: { SMRITI_TOKEN: ADMIN } });
      mcp = new Client({ name: 'pages-agent', version: '1.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`),
        { requestInit: { headers: auth } }));
    });
    after(async () => {
      await mcp?.close();
      await srv?.stop();
      pg?.();
      t.cleanup();
    });

    test('the CLI pages through every live Space in name order', async () => {
      assert.deepEqual(cli(['space', 'list', '--names']).trim().split('\n'), SORTED);
      for (const limit of [1, 2, 4, 9, 10]) {
        const names = await allPages(limit, async (after) => {
          const args = ['space', 'list', '--json', '--limit', String(limit)];
          if (after) args.push('--after', after);
          return cli(args).map((s) => s.name);   // ok() parses --json
        });
        assert.deepEqual(names, SORTED, `pages of ${limit}`);
      }
      // after a name that is no Space's: from the next one on
      assert.deepEqual(cli(['space', 'list', '--names', '--after', 'c', '--limit', '2']).trim().split('\n'),
        ['charlie', 'delta']);
      assert.equal(cli(['space', 'list', '--names', '--after', 'zulu']), '');
    });

    test('HTTP and MCP give the same pages', async () => {
      for (const limit of [2, 3]) {
        const byHttp = await allPages(limit, async (after) => {
          const q = after ? `&after=${encodeURIComponent(after)}` : '';
          return (await expectStatus(srv, 'GET', `/v4/repos?limit=${limit}${q}`, 200, { headers: auth }))
            .map((s) => s.name);
        });
        assert.deepEqual(byHttp, SORTED);
        const byMcp = await allPages(limit, async (after) => {
          const res = await mcp.callTool({ name: 'list_spaces', arguments: after ? { limit, after } : { limit } });
          assert.notEqual(res.isError, true, JSON.stringify(res.content));
          return res.structuredContent.spaces.map((s) => s.name);
        });
        assert.deepEqual(byMcp, SORTED);
      }
      const whole = await expectStatus(srv, 'GET', '/v4/repos', 200, { headers: auth });
      assert.deepEqual(whole.map((s) => s.name), SORTED, 'no limit: every Space');
    });

    test('a person with grants pages through the Spaces they may read', async () => {
      const token = cli(['token', 'create', 'rea']).trim();
      const names = await allPages(2, async (after) => {
        const q = after ? `&after=${encodeURIComponent(after)}` : '';
        return (await expectStatus(srv, 'GET', `/v4/repos?limit=2${q}`, 200,
          { headers: { Authorization: `Bearer ${token}` } })).map((s) => s.name);
      });
      assert.deepEqual(names, ['bravo', 'echo', 'foxtrot', 'india']);
    });

    test('bad values are refused and list nothing', async () => {
      assertError(await request(srv, 'GET', '/v4/repos?limit=-1', { headers: auth }), 400, 'invalid_input');
      assertError(await request(srv, 'GET', '/v4/repos?limit=two', { headers: auth }), 400, 'invalid_input');
      assertError(await request(srv, 'GET', '/v4/repos?after=', { headers: auth }), 400, 'invalid_input');
      for (const args of [['--limit', '0'], ['--limit', 'x'], ['--after', '']]) {
        const r = run(db, ['space', 'list', ...args], { bin: SMRITI_FULL });
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.equal(r.stdout, '');
      }
      const r = run(db, ['space', 'create', 'kilo', '--limit', '3'], { bin: SMRITI_FULL });
      assert.equal(r.code, 2);
      assert.match(r.stderr, /--limit and --after are for space list/);
      assert.deepEqual(cli(['space', 'list', '--names']).trim().split('\n'), SORTED, 'nothing made');
    });
  });
}

pagesSuite('sqlite', false);
pagesSuite('postgres', process.env.SMRITI_TEST_PG ? false : 'needs SMRITI_TEST_PG');
