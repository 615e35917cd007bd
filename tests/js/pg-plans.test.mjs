// pg-plans.test.mjs -- on PostgreSQL, a write through a long-lived server
// connection reads what it needs by index, whatever the statistics of a new
// database said when its plans were made (SMRITI_TEST_PG; skipped without).
//
// A trigger's plan is made once per connection.  The reflog's, made while
// a new database's commits were a few rows, scanned the whole table on every
// write afterwards: a write cost what the history held until an autoanalyze
// (docs/storage.md has the figures).  The table's sequential-scan count
// (pg_stat_user_tables, flushed when the server's connections close) tells
// it without any timing: one scan a write then, none now.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { pgSchemaDb } from './helpers.mjs';
import { startServer, request } from './http-helpers.mjs';

const PG = process.env.SMRITI_TEST_PG;
const WRITES = 120;

function psql(sql) {
  const r = spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', PG, '-c', sql], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`psql ${sql}: ${r.stderr}`);
  return r.stdout.trim();
}

test(`${WRITES} writes through one server scan no table that grows with the history`,
  { skip: !PG && 'SMRITI_TEST_PG is not set' }, async () => {
    const t = pgSchemaDb(PG, 'smriti_plans');
    const schema = decodeURIComponent(t.db.split('search_path%3D')[1]);
    const srv = await startServer(t.db);
    try {
      assert.equal((await request(srv, 'POST', '/v4/repos', { body: { name: 'plans' } })).status, 201);
      let parent = null;
      for (let i = 0; i < WRITES; i++) {
        const body = { repo_id: 'plans', title: `step ${i}`, decisions: [`decision ${i}`] };
        if (parent) body.parent_commit_id = parent;
        const r = await request(srv, 'POST', '/chat/commit', { body });
        assert.equal(r.status, 201, r.text);
        parent = r.json.commit_hash;
      }
    } finally {
      await srv.stop();
    }
    try {
      // a backend's counts reach the statistics when it exits; wait for them
      const scans = (table) => Number(psql(`SELECT coalesce(seq_scan, 0) FROM pg_stat_user_tables
        WHERE schemaname = '${schema}' AND relname = '${table}'`));
      let commits = 0;
      for (let i = 0; i < 50 && commits === 0; i++) {
        psql('SELECT pg_stat_clear_snapshot()');
        commits = Number(psql(`SELECT coalesce(n_tup_ins, 0) FROM pg_stat_user_tables
          WHERE schemaname = '${schema}' AND relname = 'commits'`));
        if (commits === 0) await new Promise((ok) => setTimeout(ok, 100));
      }
      assert.equal(commits, WRITES, 'the server\'s statistics arrived');
      for (const table of ['commits', 'reflog', 'search_items', 'reach_tips', 'refs']) {
        assert.ok(scans(table) < WRITES / 4,
          `${table} was scanned ${scans(table)} times in ${WRITES} writes`);
      }
    } finally {
      t.cleanup();
    }
  });
