// ancestry.test.mjs -- how two histories relate, against an oracle: over a
// family of Spaces grown by a fixed random sequence of checkpoints, forks
// (of a HEAD and of an older checkpoint) and merges (fast-forwards and
// merge checkpoints, both ways), every pair's merge preview (status,
// ahead, behind, base), merge-base and every fork's standing are what the
// whole graph says, computed here from its nodes' parents.  The server
// answers them by chains (ops_ancestry.c); the oracle walks every
// checkpoint.  On SQLite and (with SMRITI_TEST_PG) PostgreSQL.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { tempDb, ok, run, pgSchemaDb, SMRITI_FULL } from './helpers.mjs';
import { startServer, expectStatus } from './http-helpers.mjs';

// A small deterministic generator (mulberry32): the same family every run.
function random(seed) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function ancestry(nodes, hash) {
  const seen = new Set();
  const todo = [hash];
  while (todo.length) {
    const h = todo.pop();
    if (!h || seen.has(h)) continue;
    seen.add(h);
    const n = nodes.get(h);
    todo.push(n.parent, n.merge_parent);
  }
  return seen;
}

// The newest checkpoint both hold (ties: the greater hash), as a merge picks it.
function base(nodes, a, b) {
  let best = null;
  for (const h of a) {
    if (!b.has(h)) continue;
    const at = nodes.get(h).created_at;
    if (!best || at > best.at || (at === best.at && h > best.h)) best = { h, at };
  }
  return best ? best.h : null;
}

const minus = (a, b) => [...a].filter((h) => !b.has(h)).length;

function ancestrySuite(backend, skip) {
  describe(`ahead, behind and merge bases by chains (${backend})`, { skip }, () => {
    let t, pg, db, srv;
    const spaces = ['main'];
    const cli = (args) => ok(db, args, { bin: SMRITI_FULL });

    before(async () => {
      t = tempDb();
      db = t.db;
      if (backend === 'postgres') ({ db, cleanup: pg } = pgSchemaDb(process.env.SMRITI_TEST_PG, 'smriti_anc'));
      const rnd = random(20261208);
      const pick = () => spaces[Math.floor(rnd() * spaces.length)];
      cli(['space', 'create', 'main']);
      for (let i = 1; i <= 3; i++) cli(['checkpoint', 'create', 'main', '--title', `main ${i}`, '--decision', `main decision ${i}`]);
      for (let step = 0; step < 36; step++) {
        const r = rnd();
        const sp = pick();
        if (r < 0.5) {
          cli(['checkpoint', 'create', sp, '--title', `${sp} step ${step}`, '--decision', `${sp} decision ${step}`]);
        } else if (r < 0.7 && spaces.length < 7) {
          const name = `f${spaces.length}`;
          // a fork of HEAD, or of a checkpoint below it
          cli(['fork', rnd() < 0.5 ? sp : `${sp}~1`, '--into', name]);
          spaces.push(name);
        } else {
          const from = pick();
          // distinct decisions merge cleanly; a conflict (rare) writes nothing
          if (from !== sp) run(db, ['merge', sp, from], { bin: SMRITI_FULL });
        }
      }
      srv = await startServer(db);
    });
    after(async () => {
      await srv?.stop();
      pg?.();
      t?.cleanup();
    });

    test('every pair\'s preview, merge base and every fork\'s standing are the whole graph\'s', async () => {
      const nodes = new Map();
      const heads = new Map();
      for (const sp of spaces) {
        const g = await expectStatus(srv, 'GET', `/v4/repos/${sp}/graph?limit=100000`, 200);
        for (const n of g.nodes) nodes.set(n.hash, n);
        heads.set(sp, (await expectStatus(srv, 'GET', `/v4/repos/${sp}`, 200)).head);
      }
      const anc = new Map(spaces.map((sp) => [sp, ancestry(nodes, heads.get(sp))]));
      let merges = 0;
      for (const x of spaces) {
        for (const y of spaces) {
          if (x === y) continue;
          const ax = anc.get(x);
          const ay = anc.get(y);
          const dry = await expectStatus(srv, 'POST', `/v4/repos/${x}/merge`, 200, { body: { ref: y, dry_run: true } });
          const want = ax.has(heads.get(y)) ? 'up-to-date' : ay.has(heads.get(x)) ? 'fast-forward' : null;
          if (want) assert.equal(dry.status, want, `${y} into ${x}`);
          else {
            assert.ok(['merged', 'conflict'].includes(dry.status), `${y} into ${x}: ${dry.status}`);
            assert.equal(dry.base, base(nodes, ax, ay), `${y} into ${x}: base`);
            merges++;
          }
          assert.deepEqual([dry.ahead, dry.behind], [minus(ay, ax), minus(ax, ay)], `${y} into ${x}`);
          const mb = await expectStatus(srv, 'GET', `/v4/merge-base?a=${x}&b=${y}`, 200);
          assert.equal(mb.base, base(nodes, ax, ay), `merge-base ${x} ${y}`);
        }
      }
      assert.ok(merges > 5, `the family has lines that parted (${merges} pairs)`);
      const forks = (await expectStatus(srv, 'POST', '/api/ops/space.forks', 200, { body: {} })).result;
      assert.equal(forks.length, spaces.length - 1, 'every fork, of a HEAD or of an older checkpoint');
      for (const f of forks) {
        const mine = anc.get(f.space);
        const theirs = anc.get(f.origin);
        assert.deepEqual([f.ahead, f.behind], [minus(mine, theirs), minus(theirs, mine)], f.space);
      }
    });

    test('a checkpoint whose chain is not named yet (a migration under way) is compared whole, with the same answers', { skip: backend !== 'sqlite' }, async () => {
      const sql = (text) => execFileSync('sqlite3', [db], { input: text, encoding: 'utf8' }).trim();
      const ask = async () => {
        const out = [];
        for (const sp of spaces.slice(1)) {
          const dry = await expectStatus(srv, 'POST', '/v4/repos/main/merge', 200, { body: { ref: sp, dry_run: true } });
          const mb = await expectStatus(srv, 'GET', `/v4/merge-base?a=main&b=${sp}`, 200);
          out.push([sp, dry.status, dry.ahead, dry.behind, dry.base, mb.base]);
        }
        return out;
      };
      const want = await ask();
      const head = (await expectStatus(srv, 'GET', `/v4/repos/${spaces[1]}`, 200)).head;
      const chain = sql(`SELECT chain FROM commits WHERE commit_hash = '${head}';`);
      sql(`UPDATE commits SET chain = NULL WHERE commit_hash = '${head}';`);
      try {
        assert.deepEqual(await ask(), want);
      } finally {
        sql(`UPDATE commits SET chain = ${chain} WHERE commit_hash = '${head}';`);
      }
    });
  });
}

ancestrySuite('sqlite', false);
ancestrySuite('postgres', process.env.SMRITI_TEST_PG ? false : 'SMRITI_TEST_PG is not set');
