// live-push.test.mjs -- live updates are pushed, not polled (issue 29, part
// 3; docs/http.md "Following changes"): GET /v4/changes?since=V&wait=S waits,
// without holding a server thread, until the version differs from V and is
// answered at once when anyone writes (another process on the same SQLite
// file, another server on the same PostgreSQL), or after S seconds with V;
// bad parameters are refused with a message and change nothing; MCP
// subscribers (a subscriptions/listen on /mcp, a stdio resources/subscribe)
// are told of a write through another process or server.  Latencies are
// printed, never asserted (speed belongs to bench/).
//
// The PostgreSQL half needs SMRITI_TEST_PG (scripts/pg-cluster.sh start
// prints one) and is skipped without it.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { SMRITI_FULL, childEnv, ok, pgSchemaDb, tempDb } from './helpers.mjs';
import { startServer, expectStatus, request, assertError } from './http-helpers.mjs';

const PG = process.env.SMRITI_TEST_PG;
const skipPg = PG ? false : 'SMRITI_TEST_PG is not set (export SMRITI_TEST_PG=$(scripts/pg-cluster.sh start))';
const BOUND_MS = 10000;     // a bound on a wait, not a speed: ASan on a loaded machine

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(pred, ms, what) {
  const t0 = Date.now();
  while (!(await pred())) {
    if (Date.now() - t0 > ms) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(10);
  }
  return Date.now() - t0;
}

const versionOf = async (srv, space) =>
  (await expectStatus(srv, 'GET', `/v4/changes${space ? `?space=${space}` : ''}`, 200)).version;

// A long poll under way: its answer, and when it came.
function longPoll(srv, query) {
  const out = { answered: null };
  out.done = request(srv, 'GET', `/v4/changes?${query}`).then((r) => {
    out.answered = Date.now();
    return r;
  });
  return out;
}

// The process table's load average, for the figures printed beside latencies.
async function loadavg() {
  const { loadavg: l } = await import('node:os');
  return l().map((x) => x.toFixed(1)).join(' ');
}

describe('long poll of /v4/changes on SQLite', () => {
  let tmp, srv;

  before(async () => {
    tmp = tempDb();
    ok(tmp.db, ['space', 'create', 'alpha']);
    ok(tmp.db, ['space', 'create', 'beta']);
    // one worker: a long poll that held one would starve the write below
    srv = await startServer(tmp.db, { args: ['--workers', '1', '--quiet'] });
  });

  after(async () => {
    await srv?.stop();
    tmp?.cleanup();
  });

  test('is answered when another process (the CLI) writes, with the new version', async () => {
    const v0 = await versionOf(srv, 'alpha');
    const poll = longPoll(srv, `space=alpha&since=${v0}&wait=30`);
    await sleep(300);
    assert.equal(poll.answered, null, 'nothing moved: it waits');
    ok(tmp.db, ['checkpoint', 'create', 'alpha', '--decision', 'from the CLI', '--quiet']);
    const wrote = Date.now();
    const r = await poll.done;
    assert.equal(r.status, 200);
    assert.notEqual(r.json.version, v0);
    assert.equal(r.json.version, await versionOf(srv, 'alpha'));
    console.log(`# SQLite: a CLI write answered a long poll ${poll.answered - wrote} ms after the CLI exited (load ${await loadavg()})`);
  });

  test('is answered with the same version when nothing moved within wait', async () => {
    const v = await versionOf(srv, 'alpha');
    const t0 = Date.now();
    const r = await expectStatus(srv, 'GET', `/v4/changes?space=alpha&since=${v}&wait=1`, 200);
    assert.equal(r.version, v);
    assert.ok(Date.now() - t0 >= 900, `it waited (${Date.now() - t0} ms)`);
    // a version that already differs is answered at once, whatever the wait
    const other = v === '0000000000000000' ? '0000000000000001' : '0000000000000000';
    assert.equal((await expectStatus(srv, 'GET', `/v4/changes?space=alpha&since=${other}&wait=30`, 200)).version, v);
    // wait=0 is a plain read
    assert.equal((await expectStatus(srv, 'GET', `/v4/changes?space=alpha&since=${v}&wait=0`, 200)).version, v);
  });

  test('waiting requests hold no thread: writes and reads go on, and each waiter is answered', async () => {
    const v0 = await versionOf(srv, 'alpha');
    const polls = Array.from({ length: 6 }, () => longPoll(srv, `space=alpha&since=${v0}&wait=30`));
    await sleep(300);
    // the one worker writes; the event threads read
    assert.equal((await expectStatus(srv, 'GET', '/v4/repos/beta', 200)).name, 'beta');
    await expectStatus(srv, 'POST', '/v4/repos/alpha/commits', 201,
      { body: { checkpoint: { title: 'through HTTP', decisions: ['y'] } } });
    const v1 = await versionOf(srv, 'alpha');
    assert.notEqual(v1, v0);
    for (const p of polls) {
      const r = await p.done;
      assert.equal(r.status, 200);
      assert.equal(r.json.version, v1);
    }
  });

  test('a Space deleted while a long poll waits on it is answered 404, as a read would be', async () => {
    const v = await versionOf(srv, 'beta');
    const poll = longPoll(srv, `space=beta&since=${v}&wait=30`);
    await sleep(200);
    ok(tmp.db, ['space', 'delete', 'beta', '--yes']);
    const r = await poll.done;
    assertError(r, 404, 'not_found');
    assert.match(r.json.error.message, /beta/);
  });

  test('bad parameters are answered 400 with a message naming the parameter, and change nothing', async () => {
    const v = await versionOf(srv, 'alpha');
    const cases = [
      [`since=${v}&wait=soon`, /parameter 'wait' must be an integer/],
      [`since=${v}&wait=-1`, /parameter 'wait' must be at least 0/],
      [`since=${v}&wait=61`, /parameter 'wait' must be at most 60/],
      ['since=not-a-version&wait=5', /parameter 'since' must match/],
      ['wait=5', /parameter 'wait' needs 'since'/],
    ];
    for (const [q, message] of cases) {
      const t0 = Date.now();
      const r = await request(srv, 'GET', `/v4/changes?space=alpha&${q}`);
      assertError(r, 400, 'invalid_input');
      assert.match(r.json.error.message, message, q);
      assert.ok(Date.now() - t0 < 5000, `${q}: refused at once, not after the wait`);
    }
    assert.equal(await versionOf(srv, 'alpha'), v, 'nothing changed');
    assert.equal(ok(tmp.db, ['space', 'list', '--names']).trim().split('\n').sort().join(','), 'alpha');
  });

  test('a stdio MCP subscriber on the same file is told of a CLI write', async () => {
    const uri = 'smriti://spaces/alpha/head';
    const told = [];
    const client = new Client({ name: 'stdio', version: '1' });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => told.push([Date.now(), n.params.uri]));
    await client.connect(new StdioClientTransport({ command: SMRITI_FULL, args: ['mcp'],
      env: childEnv({ SMRITI_DB: tmp.db }), stderr: 'pipe' }));
    try {
      await client.subscribeResource({ uri });
      await sleep(300);
      assert.equal(told.length, 0, 'nothing moved yet');
      ok(tmp.db, ['checkpoint', 'create', 'alpha', '--decision', 'for the subscriber', '--quiet']);
      const wrote = Date.now();
      await until(() => told.length > 0, BOUND_MS, 'the stdio subscriber');
      assert.deepEqual(told.map((t) => t[1]), [uri]);
      console.log(`# SQLite: stdio subscriber told ${told[0][0] - wrote} ms after the CLI exited`);
    } finally {
      await client.close();
    }
  });

  test('at shutdown a waiting long poll is answered with its version and the server stops cleanly', async () => {
    const v = await versionOf(srv, 'alpha');
    const polls = [longPoll(srv, `space=alpha&since=${v}&wait=60`), longPoll(srv, `since=${await versionOf(srv)}&wait=60`)];
    await sleep(300);
    const stopped = srv.stop();
    const answers = await Promise.all(polls.map((p) => p.done));
    assert.deepEqual(answers.map((r) => r.status), [200, 200]);
    assert.equal(answers[0].json.version, v);
    await stopped;
    srv = null;
  });
});

describe('live updates across two servers on one PostgreSQL', { skip: skipPg }, () => {
  let pg, A, B;

  before(async () => {
    pg = pgSchemaDb(PG, 'smriti_live');
    A = await startServer(pg.db, { args: ['--workers', '2', '--quiet'] });
    B = await startServer(pg.db, { args: ['--workers', '2', '--quiet'] });
    await expectStatus(B, 'POST', '/v4/repos', 201, { body: { name: 'live' } });
  });

  after(async () => {
    await A?.stop();
    await B?.stop();
    pg?.cleanup();
  });

  const writeThroughB = (title) => expectStatus(B, 'POST', '/v4/repos/live/commits', 201,
    { body: { checkpoint: { title, decisions: [title] } } });

  test('a long poll on A is answered by a write through B', async () => {
    const figures = [];
    for (let i = 0; i < 5; i++) {
      const v0 = await versionOf(A, 'live');
      const poll = longPoll(A, `space=live&since=${v0}&wait=30`);
      await sleep(200);
      assert.equal(poll.answered, null, 'nothing moved: it waits');
      const t0 = Date.now();
      await writeThroughB(`write ${i}`);
      const r = await poll.done;
      assert.equal(r.status, 200);
      assert.notEqual(r.json.version, v0);
      assert.equal(r.json.version, await versionOf(A, 'live'));
      figures.push(poll.answered - t0);
    }
    console.log(`# PostgreSQL: a write through B answered a long poll on A after ${figures.join(', ')} ms`
      + ` (from sending the write; load ${await loadavg()})`);
  });

  test('an MCP listen on A and a stdio subscriber on the same database are told of a write through B', async () => {
    const uri = 'smriti://spaces/live/head';
    const modern = new ModernClient({ name: 'listener', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const heard = [];
    modern.setNotificationHandler('notifications/resources/updated', (n) => heard.push([Date.now(), n.params.uri]));
    await modern.connect(new StreamableHTTPClientTransport(new URL(`${A.url}/mcp`)));
    const legacy = new Client({ name: 'stdio', version: '1' });
    const told = [];
    legacy.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => told.push([Date.now(), n.params.uri]));
    await legacy.connect(new StdioClientTransport({ command: SMRITI_FULL, args: ['mcp'],
      env: childEnv({ SMRITI_DB: pg.db }), stderr: 'pipe' }));
    const figures = { listen: [], stdio: [] };
    try {
      const sub = await modern.listen({ resourceSubscriptions: [uri] });
      assert.deepEqual(sub.honoredFilter.resourceSubscriptions, [uri]);
      await legacy.subscribeResource({ uri });
      await sleep(500);
      assert.deepEqual([heard.length, told.length], [0, 0], 'nothing moved yet');
      for (let i = 0; i < 5; i++) {
        const t0 = Date.now();
        await writeThroughB(`told ${i}`);
        await until(() => heard.length > i, BOUND_MS, 'the listen on A');
        await until(() => told.length > i, BOUND_MS, 'the stdio subscriber');
        figures.listen.push(heard[i][0] - t0);
        figures.stdio.push(told[i][0] - t0);
        await sleep(100);
      }
      assert.deepEqual(heard.map((h) => h[1]), Array(5).fill(uri));
      assert.deepEqual(told.map((h) => h[1]), Array(5).fill(uri));
      console.log(`# PostgreSQL: a write through B told a listen on A after ${figures.listen.join(', ')} ms,`
        + ` a stdio subscriber after ${figures.stdio.join(', ')} ms (load ${await loadavg()})`);
      await sub.close();
    } finally {
      await modern.close();
      await legacy.close();
    }
  });
});
