// group-commit.test.mjs -- many writers through one `smriti serve` on one
// SQLite file, where writes that arrive together share a transaction and
// an fsync (src/store/group.c): each write is still checked against its own
// parent (racers on one parent: exactly one wins, the rest get 409 naming
// the winner), and kill -9 in the middle of group commits loses no
// acknowledged write (every 201 is in its Space's history afterwards, fsck
// stays clean).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { tempDb, ok } from './helpers.mjs';
import { startServer, request, expectStatus } from './http-helpers.mjs';

const WRITERS = 32;

function titlesOf(db, space) {
  return new Set(ok(db, ['log', space, '--json']).map((c) => c.title));
}

test('racers on one parent through one server: exactly one wins each round', async () => {
  const t = tempDb();
  const srv = await startServer(t.db, { args: ['--workers', String(WRITERS), '--quiet'] });
  const agent = new http.Agent({ keepAlive: true, maxSockets: WRITERS });
  try {
    await expectStatus(srv, 'POST', '/v4/repos', 201, { body: { name: 'race' } });
    let head = (await expectStatus(srv, 'POST', '/chat/commit', 201,
      { body: { repo_id: 'race', title: 'root' } })).commit_hash;
    for (let round = 0; round < 5; round++) {
      const results = await Promise.all(Array.from({ length: 16 }, (_, i) => request(srv, 'POST',
        '/chat/commit', { agent, body: { repo_id: 'race', parent_commit_id: head, title: `r${round} w${i}` } })));
      const won = results.filter((r) => r.status === 201);
      const lost = results.filter((r) => r.status === 409);
      assert.equal(won.length, 1, results.map((r) => r.status).join(' '));
      assert.equal(lost.length, results.length - 1);
      head = won[0].json.commit_hash;
      for (const r of lost) assert.ok(r.json.error.message.includes(head), r.text);
    }
    const log = ok(t.db, ['log', 'race', '--json']);
    assert.equal(log.length, 6);
    assert.equal(log[0].commit_hash, head);
  } finally {
    agent.destroy();
    await srv.stop();
  }
});

// Writers, each on its own Space with the parent it wrote last, until the server dies.
async function writeUntilKilled(srv, spaces, acked, killAfterMs) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: WRITERS });
  let dead = false;
  const loops = spaces.map(async (space) => {
    let parent = null;
    for (let i = 0; !dead; i++) {
      const title = `${space} ${i}`;
      const body = { repo_id: space, title };
      if (parent) body.parent_commit_id = parent;
      let r;
      try {
        r = await request(srv, 'POST', '/chat/commit', { agent, body });
      } catch {
        return;   // the connection died with the server: that write was not acknowledged
      }
      assert.equal(r.status, 201, r.text);
      acked.push({ space, title });
      parent = r.json.commit_hash;
    }
  });
  await new Promise((resolve) => setTimeout(resolve, killAfterMs));
  srv.child.kill('SIGKILL');
  dead = true;
  await srv.exit;
  await Promise.all(loops);
  agent.destroy();
}

test('kill -9 during group commits: every acknowledged write is there', async () => {
  const t = tempDb();
  const spaces = Array.from({ length: WRITERS }, (_, i) => `agent-${i}`);
  for (const s of spaces) ok(t.db, ['space', 'create', s]);
  const acked = [];
  for (const killAfterMs of [150, 400, 700]) {
    const srv = await startServer(t.db, { args: ['--workers', String(WRITERS), '--quiet'] });
    // a second run continues each Space from its HEAD (no parent on the first write)
    await writeUntilKilled(srv, spaces, acked, killAfterMs);
  }
  assert.ok(acked.length > WRITERS, `only ${acked.length} writes were acknowledged`);
  for (const s of spaces) {
    const titles = titlesOf(t.db, s);
    for (const a of acked.filter((x) => x.space === s)) {
      assert.ok(titles.has(a.title), `acknowledged '${a.title}' is in ${s}'s history`);
    }
  }
  assert.equal(ok(t.db, ['fsck', '--json']).ok, true);
});
