// graph-pages.test.mjs -- the history view's pages (GET /v4/repos/{id}/graph)
// over a family of Spaces with a fork, a fork of a fork and a merge, on
// SQLite and (with SMRITI_TEST_PG) PostgreSQL: pages by `cursor` and by
// `after` list the whole graph in one order, children before parents, with
// no gap and no duplicate whatever the page size; a cursor a client
// altered never starts a walk anywhere the Space's graph does not reach.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDb, ok, pgSchemaDb, SMRITI_FULL } from './helpers.mjs';
import { startServer, request, expectStatus, assertError } from './http-helpers.mjs';

// Every page of size limit, following `cursor` (by: 'cursor') or `after` (by: 'after').
async function pages(srv, space, limit, by) {
  const out = [];
  let at = null;
  for (let guard = 0; guard < 100; guard++) {
    const q = at ? `&${by}=${encodeURIComponent(at)}` : '';
    const g = await expectStatus(srv, 'GET', `/v4/repos/${space}/graph?limit=${limit}${q}`, 200);
    assert.ok(g.nodes.length <= limit);
    out.push(g);
    if (!g.next) {
      assert.equal(g.cursor, null);
      return out;
    }
    assert.equal(g.next, g.nodes[g.nodes.length - 1].hash);
    at = by === 'cursor' ? g.cursor : g.next;
  }
  throw new Error('no last page');
}

function graphSuite(backend, skip) {
  describe(`graph pages (${backend})`, { skip }, () => {
    let t, pg, db, srv;
    const cli = (args) => ok(db, args, { bin: SMRITI_FULL });
    before(async () => {
      t = tempDb();
      db = t.db;
      if (backend === 'postgres') ({ db, cleanup: pg } = pgSchemaDb(process.env.SMRITI_TEST_PG, 'smriti_graph'));
      cli(['space', 'create', 'main']);
      for (let i = 1; i <= 4; i++) cli(['checkpoint', 'create', 'main', '--title', `m${i}`, '--decision', `d${i}`]);
      cli(['fork', 'main~2', '--into', 'alt']);
      cli(['checkpoint', 'create', 'alt', '--title', 'a1', '--task', 'ta1']);
      cli(['fork', 'alt', '--into', 'alt2']);
      cli(['checkpoint', 'create', 'alt2', '--title', 'b1', '--task', 'tb1']);
      cli(['checkpoint', 'create', 'alt', '--title', 'a2', '--task', 'ta2']);
      cli(['checkpoint', 'create', 'main', '--title', 'm5', '--decision', 'd5']);
      cli(['merge', 'main', 'alt']);
      cli(['checkpoint', 'create', 'main', '--title', 'm6', '--decision', 'd6']);
      cli(['space', 'create', 'stranger']);
      cli(['checkpoint', 'create', 'stranger', '--title', 's1', '--decision', 'secret']);
      srv = await startServer(db);
    });
    after(async () => {
      await srv?.stop();
      pg?.();
      t.cleanup();
    });

    test('the whole graph: the family, each checkpoint once, before its parents, with its Spaces', async () => {
      const g = await expectStatus(srv, 'GET', '/v4/repos/alt2/graph', 200);
      const titles = g.nodes.map((n) => n.title);
      assert.equal(g.next, null);
      assert.equal(new Set(g.nodes.map((n) => n.hash)).size, g.nodes.length, 'no duplicate');
      for (const want of ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'a1', 'a2', 'b1']) assert.ok(titles.includes(want), want);
      assert.ok(!titles.includes('s1'), 'another family is not drawn');
      const at = new Map(g.nodes.map((n, i) => [n.hash, i]));
      for (const n of g.nodes) {
        if (n.parent) assert.ok(at.get(n.parent) > at.get(n.hash), `${n.title} before its parent`);
        if (n.merge_parent) assert.ok(at.get(n.merge_parent) > at.get(n.hash), `${n.title} before its merge parent`);
      }
      const by = (title) => g.nodes.find((n) => n.title === title && !n.merge_parent);
      assert.deepEqual(by('m1').spaces.sort(), ['alt', 'alt2', 'main']);
      assert.deepEqual(by('b1').spaces, ['alt2']);
      assert.deepEqual(by('b1').heads, ['alt2']);
      assert.deepEqual(by('a2').heads, ['alt']);
      assert.deepEqual(by('m6').heads, ['main']);
      assert.deepEqual(by('m5').heads, []);
      // a Space no fork touches is its own family, HEAD label included
      const alone = await expectStatus(srv, 'GET', '/v4/repos/stranger/graph', 200);
      assert.deepEqual(alone.nodes.map((n) => [n.title, n.spaces, n.heads]), [['s1', ['stranger'], ['stranger']]]);
      assert.equal(by('b1').own, true);
      assert.deepEqual(by('a2').spaces.sort(), ['alt', 'main'], 'the merge brought a2 into main');
      assert.equal(by('a2').own, false);
      assert.equal(by('m4').own, false, 'main went on after alt was forked');
      assert.equal(g.nodes.find((n) => n.merge_parent).title, 'Merge alt into main');
      // asked from the origin, the same graph with its own flags
      const fromMain = await expectStatus(srv, 'GET', '/v4/repos/main/graph', 200);
      assert.deepEqual(fromMain.nodes.map((n) => n.hash), g.nodes.map((n) => n.hash));
      assert.equal(fromMain.nodes.find((n) => n.title === 'm4').own, true);
    });

    test('pages by cursor and by after: the same order, no gap or duplicate at any size', async () => {
      const all = (await expectStatus(srv, 'GET', '/v4/repos/main/graph', 200)).nodes.map((n) => n.hash);
      for (let limit = 1; limit <= all.length; limit++) {
        for (const by of ['cursor', 'after']) {
          const got = (await pages(srv, 'main', limit, by)).flatMap((p) => p.nodes.map((n) => n.hash));
          assert.deepEqual(got, all, `limit ${limit} by ${by}`);
        }
      }
    });

    test('changes=1 on forks and a merge: every node of every page counts its diff against its first parent', async () => {
      const fields = ['decisions', 'assumptions', 'tasks', 'open_questions', 'entities', 'artifacts'];
      const want = new Map();
      for (const n of (await expectStatus(srv, 'GET', '/v4/repos/alt2/graph', 200)).nodes) {
        if (!n.parent) continue;
        const d = (await expectStatus(srv, 'POST', '/api/ops/diff', 200, { body: { from: n.parent, to: n.hash } })).result;
        want.set(n.hash, Object.fromEntries(fields.filter((f) => d[f])
          .map((f) => [f, [d[f].added.length, d[f].removed.length, d[f].changed.length]])));
      }
      for (const limit of [1, 2, 3, 50]) {
        let at = null, seen = 0;
        do {
          const q = at ? `&cursor=${encodeURIComponent(at)}` : '';
          const g = await expectStatus(srv, 'GET', `/v4/repos/alt2/graph?limit=${limit}&changes=1${q}`, 200);
          for (const n of g.nodes) {
            seen++;
            const got = Object.fromEntries(Object.entries(n.changes).map(([f, c]) => [f, [c.added, c.removed, c.changed]]));
            if (n.parent) assert.deepEqual(got, want.get(n.hash), `${n.title}, pages of ${limit}`);
            else assert.deepEqual(got, { decisions: [1, 0, 0] }, `the first checkpoint adds what it holds, pages of ${limit}`);
          }
          at = g.cursor;
        } while (at);
        assert.equal(seen, want.size + 1, `pages of ${limit}`);
      }
    });

    test('a cursor a client altered: a malformed one is 400, a forged one reads only the graph', async () => {
      const p1 = await expectStatus(srv, 'GET', '/v4/repos/main/graph?limit=3', 200);
      const p2 = await expectStatus(srv, 'GET', `/v4/repos/main/graph?limit=3&cursor=${encodeURIComponent(p1.cursor)}`, 200);
      for (const bad of ['x', 'a.b', `${p1.cursor}.more`]) {
        assertError(await request(srv, 'GET', `/v4/repos/main/graph?cursor=${encodeURIComponent(bad)}`), 400);
      }
      // the walk it names changed (the MAC no longer matches): walked again from the HEADs to its last node
      const [last, fam, frontier, mac] = p1.cursor.split('.');
      const stranger = (await expectStatus(srv, 'GET', '/v4/repos/stranger/graph', 200)).nodes[0];
      const forged = [last, fam, frontier.replace(/^\d+/, '1'), mac].join('.');
      const again = await expectStatus(srv, 'GET', `/v4/repos/main/graph?limit=3&cursor=${encodeURIComponent(forged)}`, 200);
      assert.deepEqual(again.nodes.map((n) => n.hash), p2.nodes.map((n) => n.hash));
      // a cursor whose last node is another family's: not in this graph
      const elsewhere = [stranger.hash, fam, frontier, mac].join('.');
      assertError(await request(srv, 'GET', `/v4/repos/main/graph?cursor=${encodeURIComponent(elsewhere)}`), 404);
      // a cursor of main's family asked of the stranger: its family differs, so its last node is looked for there
      assertError(await request(srv, 'GET', `/v4/repos/stranger/graph?cursor=${encodeURIComponent(p1.cursor)}`), 404);
    });
  });
}

graphSuite('sqlite', false);
graphSuite('postgres', process.env.SMRITI_TEST_PG ? false : 'SMRITI_TEST_PG is not set');
