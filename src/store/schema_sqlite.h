/*
 * schema_sqlite.h -- the versioned schema migrations of the SQLite backend.
 *
 * Migration N brings a database from user_version N-1 to N.  Never edit a
 * migration that has shipped; add the next one.  postgres_schema.h mirrors
 * these in PostgreSQL's types.
 */
#ifndef SMRITI_SCHEMA_SQLITE_H
#define SMRITI_SCHEMA_SQLITE_H

#include "store/sql.h"

/* Migration 17's trigger on a ref's move (SQLite has no AFTER INSERT OR UPDATE). */
#define REFS_REACH_BODY \
	"  WHEN NEW.commit_id IS NOT NULL BEGIN" \
	"  INSERT INTO reach_tips (chain, repo_id, top_id) SELECT k.chain, NEW.repo_id, k.id" \
	"    FROM commits k WHERE k.id = NEW.commit_id AND k.chain IS NOT NULL" \
	"    ON CONFLICT (chain, repo_id) DO UPDATE" \
	"    SET top_id = excluded.top_id WHERE excluded.top_id > reach_tips.top_id;" \
	"  END;"

static const char *const sqlite_migrations[] = {
	/* 1: Spaces, Checkpoints, refs, sessions, turns, draft jobs */
	"CREATE TABLE repos ("
	"  id TEXT PRIMARY KEY,"
	"  name TEXT NOT NULL UNIQUE,"
	"  description TEXT NOT NULL DEFAULT '',"
	"  created_at TEXT NOT NULL);"
	"CREATE TABLE commits ("
	"  id INTEGER PRIMARY KEY,"
	"  repo_id TEXT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,"
	"  commit_hash TEXT NOT NULL,"
	"  parent_commit_id INTEGER REFERENCES commits(id) DEFERRABLE INITIALLY DEFERRED,"
	"  merge_parent_commit_id INTEGER REFERENCES commits(id) DEFERRABLE INITIALLY DEFERRED,"
	"  title TEXT NOT NULL,"
	"  summary TEXT NOT NULL,"
	"  decisions TEXT NOT NULL,"
	"  assumptions TEXT NOT NULL,"
	"  tasks TEXT NOT NULL,"
	"  open_questions TEXT NOT NULL,"
	"  entities TEXT NOT NULL,"
	"  artifacts TEXT NOT NULL,"
	"  metadata_ TEXT NOT NULL,"
	"  author TEXT NOT NULL,"
	"  created_at TEXT NOT NULL,"
	"  UNIQUE (repo_id, commit_hash));"
	"CREATE INDEX commits_by_hash ON commits(commit_hash);"
	"CREATE TABLE refs ("
	"  repo_id TEXT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,"
	"  name TEXT NOT NULL,"
	"  commit_id INTEGER REFERENCES commits(id) DEFERRABLE INITIALLY DEFERRED,"
	"  PRIMARY KEY (repo_id, name));"
	"CREATE TABLE sessions ("
	"  id TEXT PRIMARY KEY,"
	"  repo_id TEXT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,"
	"  title TEXT NOT NULL DEFAULT '',"
	"  mounted_commit_hash TEXT,"
	"  forked_from_session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL"
	"    DEFERRABLE INITIALLY DEFERRED,"
	"  history_base_seq INTEGER,"
	"  created_at TEXT NOT NULL);"
	"CREATE INDEX sessions_by_repo ON sessions(repo_id, created_at);"
	"CREATE TABLE turns ("
	"  id INTEGER PRIMARY KEY,"
	"  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
	"  sequence_number INTEGER NOT NULL,"
	"  role TEXT NOT NULL,"
	"  content TEXT NOT NULL,"
	"  provider TEXT,"
	"  model TEXT,"
	"  prompt_tokens INTEGER,"
	"  completion_tokens INTEGER,"
	"  latency_ms INTEGER,"
	"  error TEXT,"
	"  created_at TEXT NOT NULL,"
	"  UNIQUE (session_id, sequence_number));"
	"CREATE TABLE draft_jobs ("
	"  id TEXT PRIMARY KEY,"
	"  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
	"  status TEXT NOT NULL,"
	"  provider TEXT,"
	"  model TEXT,"
	"  result TEXT,"
	"  error TEXT,"
	"  created_at TEXT NOT NULL,"
	"  started_at TEXT,"
	"  finished_at TEXT);",
	/* 2: the nudge counts a Space's turns newer than its HEAD on every send */
	"CREATE INDEX turns_by_session_time ON turns(session_id, created_at);",
	/*
	 * 3: streaming replies (issue 10).  A turn says how it ended (NULL is an
	 * older turn: complete); a generation is one send's reply in progress,
	 * at most one running per session (the partial unique index).
	 */
	"ALTER TABLE turns ADD COLUMN status TEXT;"
	"CREATE TABLE generations ("
	"  id TEXT PRIMARY KEY,"
	"  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
	"  status TEXT NOT NULL,"
	"  provider TEXT,"
	"  model TEXT,"
	"  user_turn_seq INTEGER,"
	"  assistant_turn_seq INTEGER,"
	"  error TEXT,"
	"  created_at TEXT NOT NULL,"
	"  finished_at TEXT);"
	"CREATE UNIQUE INDEX generations_running ON generations(session_id)"
	"  WHERE status = 'running';"
	"CREATE INDEX generations_by_session ON generations(session_id, created_at);",
	/*
	 * 4: the reflog (every move of a Space's HEAD, append-only), soft
	 * deletion of Spaces (kept until `gc --prune`), and the search index:
	 * one row per item a checkpoint introduced (commit_id: one copy of it;
	 * field: store/index.c's code) or per turn, its words as util/terms.c
	 * normalises them, under an FTS5 index whose "ascii" tokenizer splits
	 * them exactly as PostgreSQL's array_to_tsvector sees them (detail=none:
	 * phrases are checked in domain/search.c).  Small on purpose: the
	 * author, time and hash are the commit row's.  sqlite.c fills the FTS5
	 * index once per transaction (one statement, not one per item); the
	 * trigger takes deleted rows out of it.
	 */
	"ALTER TABLE repos ADD COLUMN deleted_at TEXT;"
	"CREATE TABLE reflog ("
	"  id INTEGER PRIMARY KEY,"
	"  repo_id TEXT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,"
	"  space_name TEXT NOT NULL,"
	"  old_hash TEXT,"
	"  new_hash TEXT,"
	"  action TEXT NOT NULL,"
	"  actor TEXT NOT NULL,"
	"  reason TEXT NOT NULL,"
	"  created_at TEXT NOT NULL);"
	"CREATE INDEX reflog_by_repo ON reflog(repo_id, id);"
	"CREATE INDEX reflog_by_name ON reflog(space_name, id);"
	"CREATE TABLE search_items ("
	"  id INTEGER PRIMARY KEY,"
	"  commit_id INTEGER,"
	"  turn_id INTEGER,"
	"  field INTEGER NOT NULL,"
	"  ordinal INTEGER NOT NULL,"
	"  terms TEXT NOT NULL);"
	"CREATE INDEX search_items_by_turn ON search_items(turn_id) WHERE turn_id IS NOT NULL;"
	"CREATE VIRTUAL TABLE search_fts USING fts5(terms, content='search_items',"
	"  content_rowid='id', tokenize='ascii', detail='none');"
	"CREATE TRIGGER search_items_ad AFTER DELETE ON search_items BEGIN"
	"  INSERT INTO search_fts(search_fts, rowid, terms) VALUES ('delete', old.id, old.terms);"
	"  END;",
	/*
	 * 5: people and agents on one server.  An agent is a users row with an
	 * owner (its person); tokens are stored as SHA-256 only; grants give a
	 * person a role on a Space (1 reader, 2 writer, 3 owner); auth_state's
	 * epoch counts changes to all of these (servers cache what they read
	 * until it moves); a turn records who wrote it.
	 */
	"CREATE TABLE users ("
	"  id TEXT PRIMARY KEY,"
	"  name TEXT NOT NULL UNIQUE,"
	"  owner_id TEXT REFERENCES users(id) ON DELETE CASCADE,"
	"  disabled INTEGER NOT NULL DEFAULT 0,"
	"  created_at TEXT NOT NULL);"
	"CREATE INDEX users_by_owner ON users(owner_id);"
	"CREATE TABLE tokens ("
	"  id TEXT PRIMARY KEY,"
	"  token_hash TEXT NOT NULL UNIQUE,"
	"  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,"
	"  created_at TEXT NOT NULL,"
	"  expires_at TEXT,"
	"  last_used_at TEXT,"
	"  revoked_at TEXT);"
	"CREATE INDEX tokens_by_user ON tokens(user_id);"
	"CREATE TABLE grants ("
	"  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,"
	"  repo_id TEXT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,"
	"  role INTEGER NOT NULL,"
	"  PRIMARY KEY (user_id, repo_id));"
	"CREATE INDEX grants_by_repo ON grants(repo_id);"
	"CREATE TABLE auth_state (id INTEGER PRIMARY KEY, epoch INTEGER NOT NULL);"
	"INSERT INTO auth_state (id, epoch) VALUES (1, 0);"
	"ALTER TABLE turns ADD COLUMN author TEXT;",
	/*
	 * 6: hand-off notes (issue 26).  A hand-off is a fact about a Space at a
	 * moment, not part of the hashed, immutable checkpoint: a person leaves
	 * a note for the next agent on the checkpoint HEAD was (commit_hash),
	 * and HEAD reads show the Space's newest one.  Append-only; deleted
	 * with its Space.
	 */
	"CREATE TABLE handoffs ("
	"  id INTEGER PRIMARY KEY,"
	"  repo_id TEXT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,"
	"  commit_hash TEXT NOT NULL,"
	"  note TEXT NOT NULL,"
	"  author TEXT NOT NULL,"
	"  created_at TEXT NOT NULL);"
	"CREATE INDEX handoffs_by_repo ON handoffs(repo_id, id);",
	/*
	 * 7: chat message actions (issue 26).  A session's turns form a tree:
	 * an edited question or a regenerated reply is a new turn beside the
	 * old one (the same parent_seq), so nothing is lost; NULL parent_seq is
	 * the turn before it (every older turn).  leaf_seq is the turn the path
	 * shown (and sent) ends at, NULL: the newest turn.  fork_seq: the
	 * session was started from turn fork_seq of forked_from_session_id,
	 * whose path it holds as copies.
	 */
	"ALTER TABLE turns ADD COLUMN parent_seq INTEGER;"
	"ALTER TABLE sessions ADD COLUMN leaf_seq INTEGER;"
	"ALTER TABLE sessions ADD COLUMN fork_seq INTEGER;",
	/*
	 * 8: streams any server can serve (issue 29).  The server running a
	 * reply writes its events in batches (ops/full/relay.c): each row is
	 * events first_seq..last_seq as the server-sent-event text a reader
	 * gets, and the deltas' text among them joined, so another server can
	 * resume a reader after any event and tell the text streamed so far.
	 * Rows go some minutes after their generation ended.  stop_requested:
	 * a Stop sent to a server that does not hold the provider call; the
	 * one that does reads it and stops.  SQLite (one server) has the
	 * table and the column but never writes them.
	 */
	"CREATE TABLE generation_events ("
	"  generation_id TEXT NOT NULL,"
	"  first_seq INTEGER NOT NULL,"
	"  last_seq INTEGER NOT NULL,"
	"  events TEXT NOT NULL,"
	"  text TEXT NOT NULL,"
	"  PRIMARY KEY (generation_id, first_seq));"
	"ALTER TABLE generations ADD COLUMN stop_requested INTEGER NOT NULL DEFAULT 0;",
	/*
	 * 9: leases (issue 29).  Each process that runs replies or draft jobs
	 * (a `smriti serve`) is a servers row whose heartbeat_at it moves every
	 * fraction of lease_s; a generation and a draft job record their
	 * owner_id.  When an owner's heartbeat stops moving for its lease,
	 * another server takes over what it left running (ops/full/lease.c).
	 * NULL owner_id: made before leases, or by a process without one (a
	 * local CLI draft).
	 */
	"CREATE TABLE servers ("
	"  id TEXT PRIMARY KEY,"
	"  name TEXT NOT NULL,"
	"  started_at TEXT NOT NULL,"
	"  heartbeat_at TEXT NOT NULL,"
	"  lease_s INTEGER NOT NULL);"
	"ALTER TABLE generations ADD COLUMN owner_id TEXT;"
	"ALTER TABLE draft_jobs ADD COLUMN owner_id TEXT;"
	"CREATE INDEX generations_running_owner ON generations(owner_id)"
	"  WHERE status = 'running';"
	"CREATE INDEX draft_jobs_unfinished_owner ON draft_jobs(owner_id)"
	"  WHERE status IN ('queued', 'running');",
	/*
	 * 10: one shared history (issue 32, docs/storage.md).  A checkpoint is
	 * one row however many Spaces hold it; repo_id is the Space that wrote
	 * it first (its origin), and a Space holds what its ref and reflog
	 * reach.  Before this runs on a database that has checkpoints, the
	 * backend collapses the per-Space copies by hash in batches
	 * (rows_history_collapse), so the hash can be unique; its one-row
	 * cursor table history_collapse stays, so a process that started the
	 * collapse too finds nothing left to do.
	 */
	"CREATE UNIQUE INDEX commits_hash_unique ON commits(commit_hash);"
	"DROP INDEX commits_by_hash;"
	"CREATE INDEX IF NOT EXISTS commits_by_parent ON commits(parent_commit_id);"
	"CREATE INDEX IF NOT EXISTS commits_by_merge_parent ON commits(merge_parent_commit_id);"
	"CREATE INDEX IF NOT EXISTS refs_by_commit ON refs(commit_id);"
	"CREATE INDEX reflog_by_new_hash ON reflog(new_hash);",
	/*
	 * 11: a checkpoint stores its change (issue 32; store/content.h,
	 * docs/storage.md).  Each item of a list once (id: the first eight
	 * bytes of SHA-256 of its text, as a signed integer), each list a run
	 * of content-defined chunks of item ids (ids: 8-byte big-endian ids),
	 * and a commit row's lists: 6 chunk counts then its chunk ids, packed
	 * the same way.  A row with lists NULL keeps its lists in the old
	 * columns (written before, or not cut verbatim); a new row leaves
	 * them ''.  content_migration is the cursor of the conversion of the
	 * rows written before (sqlite.c, convert_content): it is there while
	 * rows after last_commit remain to be converted.
	 */
	"ALTER TABLE commits ADD COLUMN lists BLOB;"
	"CREATE TABLE items (id INTEGER PRIMARY KEY, body TEXT NOT NULL);"
	"CREATE TABLE chunks (id INTEGER PRIMARY KEY, ids BLOB NOT NULL);"
	"CREATE TABLE content_migration (id INTEGER PRIMARY KEY CHECK (id = 1),"
	"  last_commit INTEGER NOT NULL);"
	"INSERT INTO content_migration (id, last_commit)"
	"  SELECT 1, 0 WHERE EXISTS (SELECT 1 FROM commits);",
	/*
	 * 12: the search rows of a checkpoint by its row.  Since the history
	 * is shared (10), every write asks whether its checkpoint was indexed
	 * already (written before, by another Space); without this index
	 * that question read the whole table, so a write cost what the
	 * Spaces had ever indexed.  IF NOT EXISTS: tests that undo older
	 * migrations by hand run this one again.
	 */
	"CREATE INDEX IF NOT EXISTS search_items_by_commit"
	"  ON search_items(commit_id, field, ordinal) WHERE commit_id IS NOT NULL;",
	/*
	 * 13: what a checkpoint costs in indexes (issue 32; schema_postgres.h
	 * says why).  A merge parent is rare: its index keeps only the rows
	 * that have one (SQLite uses a partial index for "x = ?", which
	 * implies x IS NOT NULL).  The UNIQUE (repo_id, commit_hash) that
	 * PostgreSQL drops is part of the table here; dropping it would mean
	 * copying the table, for bytes SQLite's figures do not need.
	 */
	"DROP INDEX IF EXISTS commits_by_merge_parent;"
	"CREATE INDEX commits_by_merge_parent ON commits(merge_parent_commit_id)"
	"  WHERE merge_parent_commit_id IS NOT NULL;",
	/*
	 * 14: PostgreSQL's triggers that tell other servers of writes
	 * (schema_postgres.h).  SQLite has one server, which reads the data
	 * version; the number is kept so both backends count alike.
	 */
	"SELECT 1;",
	/*
	 * 15: chains, so that "does Space S reach checkpoint C" costs what lies
	 * between them in forks and merges, not in checkpoints (docs/storage.md,
	 * SQL_REACH in store/sql.h).  A chain is a path of first-parent links:
	 * a checkpoint continues its first parent's chain when it has the same
	 * origin and is the first such child of that parent (an origin writes
	 * its checkpoints one after the other on its HEAD, so its line is one
	 * chain from fork to fork); any other starts a chain of its own, named
	 * by its row id.  So two checkpoints of one chain are an ancestor and
	 * its descendant, the smaller row id the ancestor.  The trigger names
	 * the chain of each new row; chain_migration is the cursor of the rows
	 * written before (rows_chain_backfill), up to last_id, the newest row
	 * when this ran: rows after it have their chain from the trigger.
	 * commits_chain_exits lists where a walk leaves a chain: its first row
	 * (whose parent is on another) and its merges.
	 */
	"ALTER TABLE commits ADD COLUMN chain INTEGER;"
	"CREATE INDEX commits_chain_exits ON commits(chain, id)"
	"  WHERE merge_parent_commit_id IS NOT NULL OR id = chain;"
	"CREATE TRIGGER commits_chain AFTER INSERT ON commits BEGIN"
	"  UPDATE commits SET chain = COALESCE((SELECT p.chain FROM commits p"
	"    WHERE p.id = NEW.parent_commit_id AND p.repo_id = NEW.repo_id"
	"    AND NOT EXISTS (SELECT 1 FROM commits y WHERE y.parent_commit_id = p.id"
	"    AND y.repo_id = p.repo_id AND y.id < NEW.id)), NEW.id) WHERE id = NEW.id;"
	"  END;"
	"CREATE TABLE chain_migration (id INTEGER PRIMARY KEY CHECK (id = 1),"
	"  next_id INTEGER NOT NULL, last_id INTEGER NOT NULL);"
	"INSERT INTO chain_migration (id, next_id, last_id)"
	"  SELECT 1, 0, MAX(id) FROM commits HAVING MAX(id) IS NOT NULL;",
	/*
	 * 16: PostgreSQL's chain trigger finds a parent's children by
	 * commits_by_parent only; SQLite's plan already does (EXPLAIN QUERY
	 * PLAN: commits_by_parent (parent_commit_id=? AND rowid<?)).
	 */
	"SELECT 1;",
	/*
	 * 17: what a Space reaches, and who holds a checkpoint, in steps of
	 * chains (store/sql.h): reach_tips, each Space's roots folded by
	 * chain, and chain_entries, where walks enter a chain.  Triggers keep
	 * both as rows are written; the chain backfill and gc make them again.
	 * The entries' trigger follows the chain trigger's UPDATE (a trigger's
	 * statements fire other triggers).  reflog_by_new_hash served only the
	 * walk down to the reflogs that named a checkpoint's descendants,
	 * which the tips replace.  Written to run again.
	 */
	"CREATE TABLE IF NOT EXISTS reach_tips (chain INTEGER NOT NULL, repo_id TEXT NOT NULL,"
	"  top_id INTEGER NOT NULL, PRIMARY KEY (chain, repo_id)) WITHOUT ROWID;"
	"CREATE INDEX IF NOT EXISTS reach_tips_by_repo ON reach_tips(repo_id);"
	"CREATE TABLE IF NOT EXISTS chain_entries (from_chain INTEGER NOT NULL,"
	"  from_id INTEGER NOT NULL, to_chain INTEGER NOT NULL, to_id INTEGER NOT NULL,"
	"  PRIMARY KEY (from_chain, from_id, to_id)) WITHOUT ROWID;"
	"DROP TRIGGER IF EXISTS reflog_reach;"
	"CREATE TRIGGER reflog_reach AFTER INSERT ON reflog BEGIN"
	"  INSERT INTO reach_tips (chain, repo_id, top_id) SELECT k.chain, NEW.repo_id, k.id"
	"    FROM commits k WHERE k.commit_hash IN (NEW.new_hash, NEW.old_hash)"
	"    AND k.chain IS NOT NULL ON CONFLICT (chain, repo_id) DO UPDATE"
	"    SET top_id = excluded.top_id WHERE excluded.top_id > reach_tips.top_id;"
	"  END;"
	"DROP TRIGGER IF EXISTS refs_reach;"
	"CREATE TRIGGER refs_reach AFTER UPDATE OF commit_id ON refs" REFS_REACH_BODY
	"DROP TRIGGER IF EXISTS refs_reach_new;"
	"CREATE TRIGGER refs_reach_new AFTER INSERT ON refs" REFS_REACH_BODY
	"DROP TRIGGER IF EXISTS commits_chain_entry;"
	"CREATE TRIGGER commits_chain_entry AFTER UPDATE OF chain ON commits"
	"  WHEN NEW.chain IS NOT NULL AND ((NEW.id = NEW.chain AND NEW.parent_commit_id IS NOT NULL)"
	"  OR NEW.merge_parent_commit_id IS NOT NULL) BEGIN"
	"  INSERT OR IGNORE INTO chain_entries (from_chain, from_id, to_chain, to_id)"
	"    SELECT p.chain, p.id, NEW.chain, NEW.id FROM commits p"
	"    WHERE p.id = NEW.parent_commit_id AND NEW.id = NEW.chain AND p.chain IS NOT NULL"
	"    UNION SELECT p.chain, p.id, NEW.chain, NEW.id FROM commits p"
	"    WHERE p.id = NEW.merge_parent_commit_id AND p.chain IS NOT NULL;"
	"  END;"
	"DROP INDEX IF EXISTS reflog_by_new_hash;"
	SQL_REACH_REBUILD,
	/*
	 * 18: the history view's family starts from each fork's first reflog
	 * entry (store_space_forks): found by their own index, where a scan
	 * of the reflog took 170 ms at a million rows on PostgreSQL.
	 */
	"CREATE INDEX IF NOT EXISTS reflog_forks ON reflog(id) WHERE action = 'fork';",
	/*
	 * 19: the reflog's trigger looks its two hashes up one at a time.  As
	 * an IN list they were an ephemeral table, built and dropped for each
	 * row written, inside every write's transaction (issue 28).
	 */
	"DROP TRIGGER IF EXISTS reflog_reach;"
	"CREATE TRIGGER reflog_reach AFTER INSERT ON reflog BEGIN"
	SQL_REFLOG_REACH_ONE("new_hash")
	SQL_REFLOG_REACH_ONE("old_hash")
	"  END;",
	/*
	 * 20: no trigger on the reflog.  A move's row names the ref's old value
	 * and its new one, which the refs' trigger reached when the ref took
	 * them; the rows an import appends reach their hashes themselves
	 * (rows_reach_named).  Its two look-ups and upserts were work every
	 * write did twice (store/sql.h).
	 */
	"DROP TRIGGER IF EXISTS reflog_reach;",
	/*
	 * 21: the deleted Spaces by their own index, nearly always empty: a
	 * search asks whether there is any before it asks which of its
	 * candidates' Spaces are live (store/sql.h), and a scan of every
	 * Space took half a millisecond at ten thousand.
	 */
	"CREATE INDEX IF NOT EXISTS repos_deleted ON repos(id) WHERE deleted_at IS NOT NULL;",
};

#endif
