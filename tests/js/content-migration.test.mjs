// content-migration.test.mjs -- migration 8 (a checkpoint stores its change,
// issue 32) converts a database written before it in place, batch by batch:
// killed with SIGKILL after its first batch, the next open goes on from the
// cursor it left, and the history reads back with every hash it was written
// with (fsck recomputes each from what is stored).  On SQLite, and on
// PostgreSQL when SMRITI_TEST_PG is set.
//
// The old database is made by hand: a current one with migration 8 undone
// (its tables dropped, the lists' columns back), then checkpoints written
// as rows with their lists in those columns, each hashed here by the
// canonical form (docs/checkpoint-hash.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { tempDb, ok, childEnv, SMRITI, SMRITI_FULL, SANITIZED } from './helpers.mjs';

const PG = process.env.SMRITI_TEST_PG;
const N = SANITIZED || PG ? 3000 : 6000;    // checkpoints: several batches of 1,000
const WINDOW = 30;                          // decisions each holds, sliding by one

function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

// The history: N checkpoints, each on the one before, with their hashes.
function history() {
  const out = [];
  let parent = null;
  for (let i = 0; i < N; i++) {
    const c = {
      title: `step ${i}`, summary: '', author: 'migrator',
      created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString().replace('Z', '000Z'),
      decisions: Array.from({ length: WINDOW }, (_, k) => ({ text: `decision ${i + k} about the plan` })),
      assumptions: [], tasks: [{ text: `task ${i}`, status: 'open' }], open_questions: [],
      entities: [], artifacts: [], metadata: { step: i },
    };
    const doc = { v: 1, parent, merge_parent: null, ...c };
    c.hash = createHash('sha256').update(canonical(doc)).digest('hex');
    c.parent = parent;
    out.push(c);
    parent = c.hash;
  }
  return out;
}

const LISTS = ['decisions', 'assumptions', 'tasks', 'open_questions', 'entities', 'artifacts'];
const q = (s) => `'${s.replace(/'/g, "''")}'`;

function sqlite(db, sql) {
  const r = spawnSync('sqlite3', [db], { input: sql, encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

function psql(url, sql) {
  const r = spawnSync('psql', ['-qAt', '-v', 'ON_ERROR_STOP=1', url], { input: sql, encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

// The rows of the history as a release before migration 8 wrote them.
function rows(h, repo, fields) {
  return h.map((c, i) => {
    const lists = LISTS.map((l) => q(JSON.stringify(c[l]))).join(', ');
    const own = fields
      ? `${lists.split(', ').map((l) => `${l}::jsonb`).join(', ')}, '{}'::jsonb, ${q(JSON.stringify(
        Object.fromEntries([...LISTS.map((l) => [l, c[l]]), ['metadata', c.metadata]])))}`
      : `${lists}, ${q(JSON.stringify(c.metadata))}`;
    return `(${i + 1}, ${q(repo)}, ${q(c.hash)}, ${i ? i : 'NULL'}, ${q(c.title)}, '', ${own},` +
      ` 'migrator', ${q(c.created_at)})`;
  });
}

const backends = [{
  name: 'sqlite',
  bin: SMRITI,
  setup() {
    const t = tempDb();
    ok(t.db, ['space', 'create', 'old']);
    const repo = sqlite(t.db, "SELECT id FROM repos WHERE name = 'old';");
    const h = history();
    sqlite(t.db, 'DROP TRIGGER IF EXISTS reflog_reach; DROP TRIGGER refs_reach; DROP TRIGGER refs_reach_new;' +
      ' DROP TRIGGER commits_chain_entry; DROP TABLE reach_tips; DROP TABLE chain_entries;' +
      ' DROP TRIGGER commits_chain; DROP INDEX commits_chain_exits;' +
      ' ALTER TABLE commits DROP COLUMN chain; DROP TABLE IF EXISTS chain_migration;' +
      ' DROP INDEX search_items_by_commit; DROP TABLE items; DROP TABLE chunks; DROP TABLE content_migration;' +
      ' ALTER TABLE commits DROP COLUMN lists; PRAGMA user_version = 10; BEGIN;' +
      ` INSERT INTO commits (id, repo_id, commit_hash, parent_commit_id, title, summary, ${LISTS.join(', ')},` +
      ` metadata_, author, created_at) VALUES ${rows(h, repo, false).join(',\n')};` +
      ` UPDATE refs SET commit_id = ${N} WHERE repo_id = ${q(repo)}; COMMIT;`);
    return {
      dsn: t.db, h, cleanup: t.cleanup,
      cursor: () => sqlite(t.db, 'SELECT last_commit FROM content_migration;'),
      converted: () => Number(sqlite(t.db, 'SELECT count(*) FROM commits WHERE lists IS NOT NULL;')),
    };
  },
}, {
  name: 'postgres',
  bin: SMRITI_FULL,
  skip: PG ? false : 'SMRITI_TEST_PG is not set',
  setup() {
    const schema = `smriti_mig_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
    psql(PG, `CREATE SCHEMA ${schema}`);
    const dsn = `${PG}${PG.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`;
    ok(dsn, ['space', 'create', 'old'], { bin: SMRITI_FULL });
    const url = dsn;
    const repo = psql(url, "SELECT id FROM repos WHERE name = 'old';");
    const h = history();
    psql(url, 'DROP TRIGGER IF EXISTS reflog_reach ON reflog; DROP TRIGGER refs_reach ON refs;' +
      ' DROP TRIGGER commits_chain_entry ON commits; DROP TABLE reach_tips, chain_entries;' +
      ' DROP TRIGGER commits_chain ON commits; DROP FUNCTION smriti_commit_chain();' +
      ' DROP INDEX commits_chain_exits; ALTER TABLE commits DROP COLUMN chain; DROP TABLE IF EXISTS chain_migration;' +
      ' DROP TABLE items, chunks, content_migration; DELETE FROM schema_migrations WHERE version >= 11;' +
      ' ALTER TABLE commits DROP COLUMN lists, ' +
      LISTS.map((l) => `ADD COLUMN ${l} JSONB NOT NULL`).join(', ') + '; BEGIN;' +
      ` INSERT INTO commits (id, repo_id, commit_hash, parent_commit_id, title, summary, ${LISTS.join(', ')},` +
      ` metadata_, fields_text, author, created_at) VALUES ${rows(h, repo, true).join(',\n')};` +
      ` UPDATE refs SET commit_id = ${N} WHERE repo_id = ${q(repo)}; COMMIT;`);
    return {
      dsn, h,
      cleanup: () => psql(PG, `DROP SCHEMA ${schema} CASCADE`),
      cursor: () => psql(url, 'SELECT last_commit FROM content_migration;'),
      converted: () => Number(psql(url, 'SELECT count(*) FROM commits WHERE lists IS NOT NULL;')),
    };
  },
}];

// Runs `smriti fsck` and kills it with SIGKILL once its first batch is reported.
function killAfterFirstBatch(bin, dsn) {
  return new Promise((resolve, reject) => {
    const p = spawn(bin, ['fsck', '--json'], { env: childEnv({ SMRITI_DB: dsn }) });
    let err = '';
    p.stderr.on('data', (d) => {
      err += d;
      if (/converted/.test(err)) p.kill('SIGKILL');
    });
    p.on('error', reject);
    p.on('exit', (code, signal) => resolve({ code, signal, stderr: err }));
  });
}

for (const b of backends) {
  test(`${b.name}: a conversion killed with SIGKILL goes on from its cursor; every hash verifies`,
    { skip: b.skip }, async () => {
      const db = b.setup();
      try {
        const killed = await killAfterFirstBatch(b.bin, db.dsn);
        assert.equal(killed.signal, 'SIGKILL', `it finished before the kill: ${killed.stderr}`);
        assert.match(killed.stderr, /smriti: storing each item once: 1000 of \d+ checkpoints converted/);
        // what a batch converted is committed with the cursor, and nothing after it
        const cursor = Number(db.cursor());
        assert.ok(cursor >= 1000 && cursor < N && cursor % 1000 === 0, `cursor ${cursor}`);
        assert.equal(db.converted(), cursor);

        const r = spawnSync(b.bin, ['fsck', '--json'], { env: childEnv({ SMRITI_DB: db.dsn }), encoding: 'utf8' });
        assert.equal(r.status, 0, r.stderr);
        // the conversion's lines (the chains of migration 15 follow, with lines of their own)
        const lines = r.stderr.trim().split('\n').filter((l) => /storing each item once/.test(l));
        assert.match(lines[0], new RegExp(`: 1000 of ${N - cursor} checkpoints converted$`));
        assert.match(lines.at(-1), new RegExp(`: ${N - cursor} of ${N - cursor} checkpoints converted$`));
        const report = JSON.parse(r.stdout);
        assert.equal(report.ok, true, JSON.stringify(report.problems.slice(0, 3)));
        assert.equal(report.checkpoints, N);
        assert.equal(db.converted(), N);
        assert.equal(db.cursor(), '');

        const head = ok(db.dsn, ['head', 'old', '--json'], { bin: b.bin });
        assert.equal(head.commit_hash, db.h.at(-1).hash);
        assert.deepEqual(head.decisions, db.h.at(-1).decisions);
        const log = ok(db.dsn, ['log', 'old', '--limit', '50', '--json'], { bin: b.bin });
        assert.deepEqual(log.map((c) => c.commit_hash), db.h.slice(-50).reverse().map((c) => c.hash));
        // opened again: nothing left to convert, nothing said
        assert.equal(spawnSync(b.bin, ['head', 'old'], { env: childEnv({ SMRITI_DB: db.dsn }), encoding: 'utf8' }).stderr, '');
      } finally {
        db.cleanup();
      }
    });
}
