/*
 * schema_sqlite.h -- the versioned schema migrations of the SQLite backend.
 *
 * Migration N brings a database from user_version N-1 to N.  Never edit a
 * migration that has shipped; add the next one.  postgres_schema.h mirrors
 * these in PostgreSQL's types.
 */
#ifndef SMRITI_SCHEMA_SQLITE_H
#define SMRITI_SCHEMA_SQLITE_H

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
};

#endif
