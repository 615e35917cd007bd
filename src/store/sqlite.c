/*
 * sqlite.c -- the embedded SQLite backend of the store port.
 *
 * WAL journal, synchronous=FULL (an acknowledged write survives power loss
 * and kill -9) and a busy timeout so several CLI processes can share one
 * file.  Writers take the write lock up front (BEGIN IMMEDIATE), which makes
 * the HEAD compare-and-swap and sequence assignment race-free.  Prepared
 * statements are cached per connection, keyed by the SQL literal.
 *
 * Within one process, write transactions also queue at a FIFO gate before
 * BEGIN IMMEDIATE: SQLite's busy handler polls with growing sleeps rather
 * than queueing, so under a burst of writes from some threads (a server
 * admitting hundreds of chat sends) another thread's single write could
 * wait a second or more; in line, it waits for those ahead of it only.
 * The gate is one for the process (a thread never holds two write
 * transactions at once); other processes still meet the busy handler.
 */
#include "store/auth.h"
#include "store/content.h"
#include "store/store_int.h"
#include "store/schema_sqlite.h"
#include "store/sql.h"
#include "util/metrics.h"
#include "util/buf.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUSY_TIMEOUT_MS 10000
#define STMT_CACHE 128
#define WAL_HDR 48                 /* bytes of one copy of the WAL-index header */
#define WAL_INDEX_VERSION 3007000u /* its iVersion, unchanged since SQLite 3.7.0 */

struct stmt_slot {
	const char *sql;
	sqlite3_stmt *stmt;
};

/*
 * The JSON fields of the last checkpoint a HEAD read parsed.  A checkpoint
 * is immutable and named by the hash of its content, so a HEAD read that
 * finds that hash again copies these instead of parsing seven columns of
 * JSON again (most of a read's time).
 */
#define MEMO_FIELDS 7
struct fields_memo {
	char hash[HASH_HEX_LEN + 1];
	json_t *fields[MEMO_FIELDS];   /* owned; fields[0] NULL: empty */
};

static void memo_clear(struct fields_memo *m)
{
	for (int i = 0; i < MEMO_FIELDS; i++)
		json_decref(m->fields[i]);
	memset(m, 0, sizeof(*m));
}

struct sqlite_store {
	struct store base;
	sqlite3 *db;
	int64_t content_db;    /* content_db_key of the file: the chunk memories' key */
	int64_t fts_from;      /* first search_items row of this transaction not in search_fts, or -1 */
	struct stmt_slot cache[STMT_CACHE];
	int gated;                     /* this handle holds the write gate */
	int own_checkpoints;           /* 0: SQLite's at each commit; 1: see checkpoint_due */
	int wal_frames;                /* in the WAL after its last commit (own_checkpoints) */
	int wal_checkpointed;          /* wal_frames when it asked for a checkpoint last */
	struct fields_memo memo;       /* of the last HEAD read */
	/* a read of chunks that failed but for damage, since the last read_failed() */
	enum smr_rc read_rc;
	struct smr_err read_err;
	/* sqlite_data_version: what it saw last of each source, and its count of changes seen */
	int wal;                       /* 1: in WAL mode, 0: not, -1: not asked yet */
	const volatile unsigned char *shm;   /* the WAL index's first region, once mapped */
	unsigned char wal_seen[WAL_HDR];
	uint64_t pragma_seen;
	uint64_t generation;
};

/* The write gate: a ticket lock, so writers get in in the order they came. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t turn;
	unsigned long next, serving;
} gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };

static void gate_enter(struct sqlite_store *s)
{
	unsigned long me;

	pthread_mutex_lock(&gate.lock);
	me = gate.next++;
	while (gate.serving != me)
		pthread_cond_wait(&gate.turn, &gate.lock);
	pthread_mutex_unlock(&gate.lock);
	s->gated = 1;
}

static void gate_leave(struct sqlite_store *s)
{
	if (!s->gated)
		return;
	s->gated = 0;
	pthread_mutex_lock(&gate.lock);
	gate.serving++;
	pthread_cond_broadcast(&gate.turn);
	pthread_mutex_unlock(&gate.lock);
}

static struct sqlite_store *S(struct store *st)
{
	return (struct sqlite_store *)st;
}

static enum smr_rc db_error(struct sqlite_store *s, struct smr_err *err, const char *what)
{
	int code = sqlite3_errcode(s->db);

	metrics_store_error("sqlite", code == SQLITE_BUSY || code == SQLITE_LOCKED);
	if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
		return smr_errf(err, SMR_EUNAVAIL, "database is busy (%s); try again", what);
	return smr_errf(err, SMR_EINTERNAL, "database error while %s: %s", what,
			sqlite3_errmsg(s->db));
}

/* A reset statement for sql, prepared once per connection. */
static sqlite3_stmt *prep(struct sqlite_store *s, const char *sql)
{
	int i;

	for (i = 0; i < STMT_CACHE && s->cache[i].sql; i++) {
		if (s->cache[i].sql == sql) {
			sqlite3_reset(s->cache[i].stmt);
			sqlite3_clear_bindings(s->cache[i].stmt);
			return s->cache[i].stmt;
		}
	}
	if (i == STMT_CACHE)
		BUG("more than %d distinct statements: raise STMT_CACHE", STMT_CACHE);
	if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
			       &s->cache[i].stmt, NULL) != SQLITE_OK)
		return NULL;
	s->cache[i].sql = sql;
	return s->cache[i].stmt;
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_int_or_null(sqlite3_stmt *st, int i, int64_t v)
{
	if (v < 0)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

static char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? xstrdup((const char *)t) : NULL;
}

static int64_t col_int_or_neg(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i);
}

static enum smr_rc exec(struct sqlite_store *s, const char *sql, struct smr_err *err)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_error(s, err, sql);
	return SMR_OK;
}

static enum smr_rc begin(struct sqlite_store *s, struct smr_err *err)
{
	enum smr_rc rc;

	gate_enter(s);
	rc = exec(s, "BEGIN IMMEDIATE", err);
	if (rc)
		gate_leave(s);
	return rc;
}

static enum smr_rc commit(struct sqlite_store *s, struct smr_err *err)
{
	enum smr_rc rc = exec(s, "COMMIT", err);

	if (rc)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	gate_leave(s);
	return rc;
}

/* Rolls back and passes rc through. */
static enum smr_rc rollback(struct sqlite_store *s, enum smr_rc rc)
{
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	gate_leave(s);
	return rc;
}

static enum smr_rc sqlite_txn_begin(struct store *st, struct smr_err *err)
{
	return begin(S(st), err);
}

static enum smr_rc step_done(struct sqlite_store *s, sqlite3_stmt *st, const char *what,
			     struct smr_err *err);

/* Puts the search rows this transaction wrote into the FTS5 index, in one statement. */
static enum smr_rc fts_flush(struct sqlite_store *s, struct smr_err *err)
{
	static const char sql[] =
		"INSERT INTO search_fts(rowid, terms) SELECT id, terms FROM search_items WHERE id >= ?";
	sqlite3_stmt *q;

	if (s->fts_from < 0)
		return SMR_OK;
	q = prep(s, sql);
	if (q)
		sqlite3_bind_int64(q, 1, s->fts_from);
	s->fts_from = -1;
	return step_done(s, q, "indexing for search", err);
}

static enum smr_rc sqlite_txn_commit(struct store *st, struct smr_err *err)
{
	enum smr_rc rc = fts_flush(S(st), err);

	if (rc)
		return rollback(S(st), rc);
	return commit(S(st), err);
}

static void sqlite_txn_rollback(struct store *st)
{
	S(st)->fts_from = -1;
	rollback(S(st), SMR_OK);
}

/* 1 when the connection's database is in WAL mode (it stays so while the connection is open). */
static int in_wal_mode(struct sqlite_store *s)
{
	sqlite3_stmt *q = NULL;
	int wal = 0;

	if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode", -1, &q, NULL) == SQLITE_OK &&
	    sqlite3_step(q) == SQLITE_ROW)
		wal = !sqlite3_stricmp((const char *)sqlite3_column_text(q, 0), "wal");
	sqlite3_finalize(q);
	return wal;
}

/*
 * The WAL-index header as it is now, read from the -shm file this
 * connection has mapped, without a transaction, a lock or a system call;
 * 0 on success, -1 when it cannot be read that way (no WAL index mapped, a
 * VFS without shared memory, a header being rewritten at every try).
 *
 * The layout is SQLite's documented WAL-index format
 * (https://www.sqlite.org/walformat.html), which processes running
 * different SQLite versions share, so it does not change: two copies of a
 * 48-byte header (iVersion, unused, iChange, isInit, ..., mxFrame, nPage,
 * checksums, salts).  A writer commits by appending frames and then
 * rewriting the header, copy 2 first and copy 1 after a memory barrier,
 * before its COMMIT returns; a reader that reads copy 1, then copy 2, and
 * finds them equal has a whole header (SQLite's own walIndexTryHdr).  Every
 * commit appends at least its commit frame, so mxFrame grows, or it
 * restarts the WAL, which changes the salts: the header differs from what
 * it was before any commit, by any connection of any process.
 *
 * The header lies in the first 32 KiB region, which is mapped once per
 * handle and kept (s->shm): asking the VFS every time cost a file-control
 * lookup, the VFS's shm mutex and a sysconf() on every request.  The
 * pointer stays valid while the connection is open: the unix VFS maps each
 * region once and unmaps only in xShmUnmap, which the pager calls when it
 * closes the WAL -- at sqlite3_close(), or when leaving WAL mode, which
 * this handle never does and no other connection can do while this one
 * holds the WAL open; a -shm that grows gets new regions beside the old.
 */
static int wal_header(struct sqlite_store *s, unsigned char out[WAL_HDR])
{
	const volatile unsigned char *shm = s->shm;
	unsigned char second[WAL_HDR];
	uint32_t version;

	if (!shm) {
		sqlite3_file *f = NULL;
		volatile void *map = NULL;

		if (s->wal < 0)
			s->wal = in_wal_mode(s);
		/* a database in another journal mode has no WAL index: mapping one would make it */
		if (!s->wal ||
		    sqlite3_file_control(s->db, "main", SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK ||
		    !f || !f->pMethods || f->pMethods->iVersion < 2 || !f->pMethods->xShmMap ||
		    f->pMethods->xShmMap(f, 0, 32768, 0, &map) != SQLITE_OK || !map)
			return -1;
		shm = s->shm = map;
	}
	for (int tries = 0; tries < 4; tries++) {
		for (size_t i = 0; i < WAL_HDR; i++)
			out[i] = shm[i];
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		for (size_t i = 0; i < WAL_HDR; i++)
			second[i] = shm[WAL_HDR + i];
		if (memcmp(out, second, WAL_HDR))
			continue;                   /* a writer is rewriting it */
		memcpy(&version, out, sizeof(version));
		return version == WAL_INDEX_VERSION && out[12] ? 0 : -1;   /* isInit */
	}
	return -1;
}

/*
 * An import writes every page of its indexes many times over, in hash
 * order: with the default 2 MB of cache, SQLite spilled each dirty page
 * to the WAL again and again before the commit.  64 MB for the length of
 * the load, then SQLite's default again.
 */
static void sqlite_bulk(struct store *st, int on)
{
	exec(S(st), on ? "PRAGMA cache_size=-65536" : "PRAGMA cache_size=-2000", NULL);
}

/*
 * PRAGMA data_version changes when another connection (or process) commits;
 * this connection's own changes count in total_changes.  Both only grow, so
 * the pair says "nothing changed" exactly when it is the same.  A
 * statement, a read transaction and its file locks: the slow way, for when
 * wal_header cannot say.
 */
static enum smr_rc pragma_version(struct sqlite_store *s, uint64_t *v, struct smr_err *err)
{
	static const char sql[] = "PRAGMA data_version";
	sqlite3_stmt *q = prep(s, sql);
	uint64_t others = 0;
	int step;

	if (!q)
		return db_error(s, err, "reading the data version");
	step = sqlite3_step(q);
	if (step == SQLITE_ROW)
		others = (uint64_t)sqlite3_column_int64(q, 0);
	sqlite3_reset(q);
	if (step != SQLITE_ROW)
		return db_error(s, err, "reading the data version");
	*v = ((uint64_t)sqlite3_total_changes64(s->db) << 32) + (others & 0xffffffffu) + 1;
	return SMR_OK;
}

/*
 * A count of the changes this handle has seen: it moves when the WAL-index
 * header (or, failing that, the PRAGMA's pair) differs from what it was at
 * the last call.  Each source only moves forward, so a source that says
 * "the same" since its own last reading means nothing was committed, by
 * anyone, in between; which source a call used does not matter.  The header
 * costs a few loads where the PRAGMA cost a statement and four fcntl locks,
 * on every cached HEAD read of the server.
 */
static enum smr_rc sqlite_data_version(struct store *st, uint64_t *v, struct smr_err *err)
{
	struct sqlite_store *s = S(st);
	unsigned char hdr[WAL_HDR];
	uint64_t p = 0;
	enum smr_rc rc;

	if (!wal_header(s, hdr)) {
		if (!s->generation || memcmp(hdr, s->wal_seen, WAL_HDR)) {
			memcpy(s->wal_seen, hdr, WAL_HDR);
			s->generation++;
		}
	} else {
		rc = pragma_version(s, &p, err);
		if (rc)
			return rc;
		if (p != s->pragma_seen) {
			s->pragma_seen = p;
			s->generation++;
		}
	}
	*v = s->generation;
	return SMR_OK;
}

/* The file's full path: every handle on it groups its commits (store/group.c). */
static const char *sqlite_group_key(struct store *st)
{
	const char *path = sqlite3_db_filename(S(st)->db, "main");

	return path && *path ? path : NULL;
}

/* SQLite's own default: checkpoint once the WAL has this many frames. */
#define WAL_CHECKPOINT_FRAMES 1000

static int note_frames(void *arg, sqlite3 *db, const char *name, int frames)
{
	(void)db;
	(void)name;
	((struct sqlite_store *)arg)->wal_frames = frames;
	return SQLITE_OK;
}

/*
 * A commit checkpointed at its end once the WAL passed 1000 frames, and a
 * group's leader did that with every writer it had committed still
 * waiting and the next transaction held back, for two fsyncs (its share of
 * the leader's time: docs/storage.md).  The group's handle leaves its checkpoints to the group,
 * which runs them on a handle of no transaction while the next one goes
 * on (passive: copying what is committed, waiting for no one).  Writers
 * that never pause could keep a passive checkpoint from ever reaching the
 * WAL's end and so from restarting it: at four times the size the next
 * transaction waits for one.  So the WAL may reach about 16 MiB, and the
 * group's handle (the one that restarts it) keeps it that size: truncated
 * to the 4 MiB of the other handles at each restart, it grew again, and
 * on ext4 an fdatasync that grows a file also writes its inode and block
 * map, waiting for the disk three times where it waited once (how much
 * of the leader's time that was: docs/storage.md).
 */
static int sqlite_checkpoint_due(struct store *st)
{
	struct sqlite_store *s = S(st);

	if (!s->own_checkpoints) {
		sqlite3_wal_hook(s->db, note_frames, s);   /* in place of the auto-checkpoint */
		exec(s, "PRAGMA journal_size_limit=25165824", NULL);   /* 24 MiB */
		s->own_checkpoints = 1;
		return 0;
	}
	if (s->wal_frames < s->wal_checkpointed)
		s->wal_checkpointed = 0;   /* the WAL restarted */
	if (s->wal_frames >= 4 * WAL_CHECKPOINT_FRAMES)
		return 2;
	/* once per 1000 new frames, as SQLite would: a checkpoint after every commit copied the same pages again */
	if (s->wal_frames - s->wal_checkpointed < WAL_CHECKPOINT_FRAMES)
		return 0;
	s->wal_checkpointed = s->wal_frames;
	return 1;
}

static void sqlite_checkpoint(struct store *st)
{
	sqlite3_wal_checkpoint_v2(S(st)->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
}

static enum smr_rc sqlite_savepoint(struct store *st, enum savepoint_op op,
				    struct smr_err *err)
{
	static const char *const sql[] = {
		[SAVEPOINT_BEGIN] = "SAVEPOINT w",
		[SAVEPOINT_END] = "RELEASE w",
		[SAVEPOINT_UNDO] = "ROLLBACK TO w; RELEASE w",
	};

	return exec(S(st), sql[op], err);
}

/* Steps a statement that returns no rows. */
static enum smr_rc step_done(struct sqlite_store *s, sqlite3_stmt *st, const char *what,
			     struct smr_err *err)
{
	int rc = st ? sqlite3_step(st) : SQLITE_ERROR;

	if (st)
		sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return db_error(s, err, what);
	return SMR_OK;
}

/* How collect_rows() turns rows into an array of one struct type. */
struct row_reader {
	size_t size;
	void (*read)(sqlite3_stmt *q, void *elem);
	void (*free_all)(void *v, size_t n);
};

/*
 * Steps q to the end, reading each row into a growing array; *out (caller
 * frees with rr->free_all) and *n get the result.  q is reset either way.
 */
static enum smr_rc collect_rows(struct sqlite_store *s, sqlite3_stmt *q,
				const struct row_reader *rr, void **out, size_t *n,
				const char *what, struct smr_err *err)
{
	char *v = NULL;
	size_t len = 0, cap = 0;
	int step;

	for (;;) {
		step = sqlite3_step(q);
		if (step != SQLITE_ROW)
			break;
		if (len == cap) {
			cap = cap ? cap * 2 : 16;
			v = xrealloc(v, cap * rr->size);
		}
		memset(v + len * rr->size, 0, rr->size);
		rr->read(q, v + len * rr->size);
		len++;
	}
	sqlite3_reset(q);
	if (step != SQLITE_DONE) {
		rr->free_all(v, len);
		return db_error(s, err, what);
	}
	*out = v;
	*n = len;
	return SMR_OK;
}

/*
 * Steps q for at most one row and reads it with read; q is reset either
 * way.  SMR_ENOTFOUND (with no message: the caller names what is missing)
 * when there is no row.
 */
static enum smr_rc read_one(struct sqlite_store *s, sqlite3_stmt *q,
			    void (*read)(sqlite3_stmt *q, void *elem), void *out,
			    const char *what, struct smr_err *err)
{
	int step = sqlite3_step(q);

	if (step == SQLITE_ROW)
		read(q, out);
	sqlite3_reset(q);
	if (step == SQLITE_ROW)
		return SMR_OK;
	if (step == SQLITE_DONE)
		return SMR_ENOTFOUND;
	return db_error(s, err, what);
}

/* ---- opening and migrations ---- */

static int sqlite_accepts(const char *dsn)
{
	return strncmp(dsn, "postgres://", 11) && strncmp(dsn, "postgresql://", 13);
}

/* The schema version, read under whatever lock the caller holds. */
static int user_version(struct sqlite_store *s)
{
	sqlite3_stmt *st = NULL;
	int version = 0;

	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return version;
}

/*
 * Before the migration that makes a checkpoint's hash unique: commits the
 * migrations so far at *version, collapses the per-Space copies in
 * transactions of their own (rows_history_collapse), and takes the write
 * lock again; *version gets the version then (another process may have
 * gone on meanwhile).
 */
static enum smr_rc collapse_history(struct sqlite_store *s, int *from, int *version,
				    struct smr_err *err)
{
	char pragma[64];
	enum smr_rc rc;

	snprintf(pragma, sizeof(pragma), "PRAGMA user_version=%d", *version);
	rc = exec(s, pragma, err);
	if (!rc)
		rc = commit(s, err);
	if (rc)
		return rc;
	rc = rows_history_collapse(&s->base, from, err);
	if (!rc)
		rc = begin(s, err);
	if (!rc)
		*version = user_version(s);
	return rc;
}

static enum smr_rc convert_content(struct sqlite_store *s, struct smr_err *err);

static enum smr_rc migrate(struct sqlite_store *s, struct smr_err *err)
{
	int n = (int)(sizeof(sqlite_migrations) / sizeof(sqlite_migrations[0]));
	sqlite3_stmt *st = NULL;
	int version = 0, from;
	enum smr_rc rc;
	char pragma[64];

	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version == n)
		return SMR_OK;
	if (version > n)
		return smr_errf(err, SMR_EINTERNAL,
				"database schema version %d is newer than this smriti (%d); upgrade smriti",
				version, n);
	if (version == 0)
		exec(s, "PRAGMA journal_mode=WAL", NULL);
	rc = begin(s, err);
	if (rc)
		return rc;
	/* Re-read under the write lock: another process may have migrated meanwhile. */
	st = NULL;
	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	s->base.migrated_from = version < n ? version : 0;
	from = version;
	while (version < n) {
		/* a new database has no copies to collapse */
		if (from > 0 && strstr(sqlite_migrations[version], HISTORY_MIGRATION_MARK)) {
			rc = collapse_history(s, &from, &version, err);
			s->base.migrated_from = from;
			if (rc)
				return rollback(s, rc);
			if (version >= n || !strstr(sqlite_migrations[version],
						    HISTORY_MIGRATION_MARK))
				continue;
		}
		rc = exec(s, sqlite_migrations[version], err);
		if (rc)
			return rollback(s, rc);
		version++;
	}
	snprintf(pragma, sizeof(pragma), "PRAGMA user_version=%d", n);
	rc = exec(s, pragma, err);
	if (rc)
		return rollback(s, rc);
	return commit(s, err);
}

static void sqlite_close(struct store *st)
{
	struct sqlite_store *s = S(st);

	if (!s)
		return;
	gate_leave(s);          /* a transaction left open must not block the process's writers */
	for (int i = 0; i < STMT_CACHE && s->cache[i].sql; i++)
		sqlite3_finalize(s->cache[i].stmt);
	memo_clear(&s->memo);
	sqlite3_close(s->db);
	free(s);
}

#define STMT_JOURNAL_SPILL (4 << 20)

/*
 * Before SQLite's first use: no initial bulk allocation of page-cache lines
 * per connection (it touched some twenty pages at every open; a `head`
 * reads a handful), and no memory statistics: with them every SQLite
 * allocation takes one process-wide mutex, which the server's threads
 * (event threads reading, workers and chat-send threads writing) then
 * queue on; nothing here reads the statistics.  And statement journals in
 * memory up to STMT_JOURNAL_SPILL: a write's statements whose triggers
 * write (a checkpoint's chain, a ref's reach) each need one, and this
 * build of SQLite spilled every one to a new file in /var/tmp, created,
 * written and deleted inside the write's transaction.
 */
static void configure_sqlite(void)
{
	sqlite3_config(SQLITE_CONFIG_PAGECACHE, NULL, 0, 0);
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, STMT_JOURNAL_SPILL);
}

static enum smr_rc sqlite_open(const char *dsn, struct store **out, struct smr_err *err)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct sqlite_store *s = xcalloc(1, sizeof(*s));
	enum smr_rc rc;

	pthread_once(&once, configure_sqlite);
	s->base.ops = &store_sqlite_ops;
	s->fts_from = -1;
	s->wal = -1;
	if (!strncmp(dsn, "sqlite://", 9))
		dsn += 9;
	if (sqlite3_open_v2(dsn, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		rc = smr_errf(err, SMR_EINTERNAL, "cannot open database '%s': %s", dsn,
			      s->db ? sqlite3_errmsg(s->db) : "out of memory");
		sqlite_close(&s->base);
		return rc;
	}
	sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
	/* an in-memory database (no file) is another at each open: its chunks are its own */
	s->content_db = *sqlite3_db_filename(s->db, "main") ? content_db_key(dsn)
							    : content_db_key_private();
	/*
	 * Keep the -wal and -shm files when the last connection closes (it still
	 * checkpoints, so the main file stays complete): a CLI run that
	 * created and deleted them paid a file creation, an unlink and an inode
	 * eviction, about a tenth of `smriti head`.  A journal size limit makes
	 * that last close truncate the WAL to nothing, or the next process to
	 * open the file would rebuild its index from every frame left in it
	 * (up to the 4 MiB of an auto-checkpoint, several milliseconds); while
	 * writers run, the WAL keeps up to that size between checkpoints.
	 */
	sqlite3_file_control(s->db, "main", SQLITE_FCNTL_PERSIST_WAL, &(int){ 1 });
	sqlite3_db_config(s->db, SQLITE_DBCONFIG_ENABLE_FKEY, 1, NULL);
	rc = exec(s, "PRAGMA synchronous=FULL; PRAGMA journal_size_limit=4194304", err);
	if (!rc)
		rc = migrate(s, err);
	if (!rc)
		rc = convert_content(s, err);
	if (!rc)
		rc = rows_chain_backfill(&s->base, err);
	if (rc) {
		sqlite_close(&s->base);
		return rc;
	}
	*out = &s->base;
	return SMR_OK;
}

/* ---- Spaces ---- */

static enum smr_rc insert_space(struct sqlite_store *s, const struct space *sp,
				struct smr_err *err)
{
	static const char ins_repo[] =
		"INSERT INTO repos (id, name, description, created_at) VALUES (?, ?, ?, ?)";
	static const char ins_ref[] =
		"INSERT INTO refs (repo_id, name, commit_id) VALUES (?, 'main', NULL)";
	sqlite3_stmt *q = prep(s, ins_repo);
	int step;

	if (!q)
		return db_error(s, err, "creating a space");
	bind_text(q, 1, sp->id);
	bind_text(q, 2, sp->name);
	bind_text(q, 3, sp->description ? sp->description : "");
	bind_text(q, 4, sp->created_at);
	step = sqlite3_step(q);
	sqlite3_reset(q);
	if (step == SQLITE_CONSTRAINT)
		return smr_errf(err, SMR_ECONFLICT, "a space named '%s' already exists", sp->name);
	if (step != SQLITE_DONE)
		return db_error(s, err, "creating a space");
	q = prep(s, ins_ref);
	if (q)
		bind_text(q, 1, sp->id);
	return step_done(s, q, "creating a space", err);
}

static enum smr_rc sqlite_space_create(struct store *st, const struct space *sp,
				       struct smr_err *err)
{
	return insert_space(S(st), sp, err);
}

/* Runs sql with $1 = a1 (and $2 = a2 when sql has it); *n (NULL: not wanted) gets its changes. */
static enum smr_rc gc_step(struct sqlite_store *s, const char *sql, const char *a1,
			   const char *a2, const char *what, size_t *n, struct smr_err *err)
{
	sqlite3_stmt *q = prep(s, sql);
	enum smr_rc rc;

	if (q && sqlite3_bind_parameter_index(q, "$1"))
		bind_text(q, sqlite3_bind_parameter_index(q, "$1"), a1);
	if (q && sqlite3_bind_parameter_index(q, "$2"))
		bind_text(q, sqlite3_bind_parameter_index(q, "$2"), a2);
	rc = step_done(s, q, what, err);
	if (!rc && n)
		*n = (size_t)sqlite3_changes(s->db);
	return rc;
}

/*
 * The chunks no checkpoint row names, then the items no chunk names.  A
 * row's lists and a chunk's ids are 8-byte big-endian ids (a row's after
 * its six counts), compared as hex with the ids they name.
 */
#define SQLITE_IDS_HEX(TABLE, COL, FROM) \
	"WITH RECURSIVE u(b, i) AS (SELECT " COL ", " FROM " FROM " TABLE \
	" WHERE " COL " IS NOT NULL UNION ALL SELECT b, i + 8 FROM u WHERE i + 8 <= length(b))" \
	" SELECT hex(substr(b, i, 8)) FROM u WHERE i + 7 <= length(b)"

static enum smr_rc sqlite_gc_content(struct sqlite_store *s, struct gc_counts *n,
				     struct smr_err *err)
{
	static const char chunks[] = "DELETE FROM chunks WHERE printf('%016X', id) NOT IN ("
		SQLITE_IDS_HEX("commits", "lists", "49") ")";
	static const char items[] = "DELETE FROM items WHERE printf('%016X', id) NOT IN ("
		SQLITE_IDS_HEX("chunks", "ids", "1") ")";
	enum smr_rc rc = gc_step(s, chunks, NULL, NULL, "removing unused chunks", &n->chunks, err);

	return rc ? rc : gc_step(s, items, NULL, NULL, "removing unused items", &n->items, err);
}

static enum smr_rc sqlite_gc_prune(struct store *st, const char *before, const char *expire,
				   struct gc_counts *n, struct smr_err *err)
{
	/* checkpoints a surviving Space reaches change origin; the rest go with their Space */
	static const char spaces[] =
		"DELETE FROM repos WHERE deleted_at IS NOT NULL AND ($1 IS NULL OR deleted_at <= $1)";
	struct sqlite_store *s = S(st);
	enum smr_rc rc = begin(s, err);

	if (rc)
		return rc;
	if (expire) {
		rc = gc_step(s, SQL_GC_UNREACHED, before, expire, "expiring the reflog",
			     &n->unreached, err);
		if (!rc)
			rc = gc_step(s, SQL_GC_EXPIRE, expire, NULL, "expiring the reflog",
				     &n->reflog, err);
	}
	if (!rc)
		rc = gc_step(s, SQL_GC_ADOPT, before, NULL, "pruning deleted spaces", NULL, err);
	if (!rc)
		rc = gc_step(s, spaces, before, NULL, "pruning deleted spaces", &n->spaces, err);
	if (!rc)
		rc = gc_step(s, SQL_GC_ORPHANS, NULL, NULL, "pruning the search index", NULL, err);
	if (!rc)
		rc = sqlite_gc_content(s, n, err);
	if (!rc && (n->unreached || n->reflog || n->spaces))
		rc = rows_reach_rebuild(st, err);
	if (rc)
		return rollback(s, rc);
	return commit(s, err);
}

/* ---- the search index ---- */

static enum smr_rc sqlite_search_has(struct store *st, const char *hash, int *yes,
				     struct smr_err *err)
{
	/* a checkpoint written again (on another Space) was indexed when first written */
	static const char sql[] = "SELECT EXISTS (SELECT 1 FROM search_items"
		" WHERE commit_id = (SELECT id FROM commits WHERE commit_hash = ?))";
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, sql);
	int step;

	if (!q)
		return db_error(s, err, "reading the search index");
	bind_text(q, 1, hash);
	step = sqlite3_step(q);
	*yes = step == SQLITE_ROW && sqlite3_column_int(q, 0);
	sqlite3_reset(q);
	if (step != SQLITE_ROW)
		return db_error(s, err, "reading the search index");
	return SMR_OK;
}

static enum smr_rc sqlite_search_insert(struct store *st, int64_t commit_id, int64_t turn_id,
					int field, int64_t ordinal, const char *words,
					struct smr_err *err)
{
	static const char sql[] =
		"INSERT INTO search_items (commit_id, turn_id, field, ordinal, terms)"
		" VALUES (?, ?, ?, ?, ?)";
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, sql);
	enum smr_rc rc;

	if (q) {
		bind_int_or_null(q, 1, commit_id);
		bind_int_or_null(q, 2, turn_id);
		sqlite3_bind_int(q, 3, field);
		sqlite3_bind_int64(q, 4, ordinal);
		bind_text(q, 5, words);
	}
	rc = step_done(s, q, "indexing for search", err);
	if (!rc && s->fts_from < 0)
		s->fts_from = sqlite3_last_insert_rowid(s->db);
	return rc;
}

char *store_fts5_query(const struct search_word *words, size_t n)
{
	struct buf b = BUF_INIT(0);

	for (size_t i = 0; i < n; i++)
		buf_addf(&b, "%s\"%s\"%s", i ? " AND " : "", words[i].word,
			 words[i].prefix ? "*" : "");
	return buf_detach(&b, NULL);
}

static void read_search_row(sqlite3_stmt *q, void *elem)
{
	static const int cols[SEARCH_TEXTS] = { 0, 1, 2, 3, 7, 8, 9, 10 };
	struct search_row *r = elem;
	const char *text[SEARCH_TEXTS];
	size_t len[SEARCH_TEXTS];

	for (int k = 0; k < SEARCH_TEXTS; k++) {
		text[k] = (const char *)sqlite3_column_text(q, cols[k]);
		len[k] = (size_t)sqlite3_column_bytes(q, cols[k]);
	}
	search_row_texts(r, text, len);
	r->seq = sqlite3_column_int64(q, 4);
	r->field = store_field_name(sqlite3_column_int(q, 5));
	r->ordinal = sqlite3_column_int64(q, 6);
	r->commit_id = sqlite3_column_int64(q, 12);
	r->chain = sqlite3_column_int64(q, 13);
}

static void free_search_rows(void *v, size_t n)
{
	search_rows_free(v, n);
}

static enum smr_rc sqlite_search(struct store *st, const struct search_filter *f,
				 const char *spaces_json, struct search_row **out, size_t *n,
				 struct smr_err *err)
{
	/*
	 * a checkpoint's item once, with its origin (store.c finds the Spaces
	 * that hold it, and keeps those ?2 allows)
	 */
#define SEARCH_CKPT \
		"SELECT c0.repo_id, NULL, c0.commit_hash, NULL, 0, i.field, i.ordinal, i.terms," \
		" c0.author, c0.created_at AS at, NULL, i.id AS iid, c0.id, c0.chain" \
		" FROM search_fts JOIN search_items i ON i.id = search_fts.rowid" \
		" JOIN commits c0 ON c0.id = i.commit_id" \
		" WHERE search_fts MATCH ?1" \
		" AND (?3 IS NULL OR i.field = ?3) AND (?4 IS NULL OR c0.author = ?4)" \
		" AND (?5 IS NULL OR c0.created_at >= ?5) AND (?6 IS NULL OR c0.created_at <= ?6)"
#define SEARCH_TURN \
		" UNION ALL SELECT r.id, r.name, NULL, s.id, t.sequence_number, i.field, i.ordinal," \
		" i.terms, t.role, t.created_at, t.content, i.id, NULL, NULL" \
		" FROM search_fts JOIN search_items i ON i.id = search_fts.rowid" \
		" JOIN turns t ON t.id = i.turn_id JOIN sessions s ON s.id = t.session_id" \
		" JOIN repos r ON r.id = s.repo_id" \
		" WHERE search_fts MATCH ?1 AND r.deleted_at IS NULL" \
		" AND (?2 IS NULL OR r.id IN (SELECT value FROM json_each(?2)))" \
		" AND (?3 IS NULL OR i.field = ?3) AND (?4 IS NULL OR t.role = ?4)" \
		" AND (?5 IS NULL OR t.created_at >= ?5) AND (?6 IS NULL OR t.created_at <= ?6)"
	/*
	 * The rows indexed last first: FTS5 yields its matches in rowid order,
	 * so the LIMIT stops the scan; ordering by time read every match's
	 * checkpoint row first (tens of thousands in a long history).
	 */
	static const char ckpt_only[] = SEARCH_CKPT " ORDER BY search_fts.rowid DESC LIMIT ?7";
	static const char with_turns[] = SEARCH_CKPT SEARCH_TURN " ORDER BY 12 DESC LIMIT ?7";
	const char *sql = f->turns ? with_turns : ckpt_only;
	static const struct row_reader rr = { sizeof(struct search_row), read_search_row,
					      free_search_rows };
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, sql);
	char *match = store_fts5_query(f->words, f->n_words);
	enum smr_rc rc;

	if (!q) {
		free(match);
		return db_error(s, err, "searching");
	}
	sqlite3_bind_text(q, 1, match, -1, free);
	bind_text(q, 2, spaces_json);
	if (f->field)
		sqlite3_bind_int(q, 3, store_field_code(f->field));
	bind_text(q, 4, f->author);
	bind_text(q, 5, f->since);
	bind_text(q, 6, f->until);
	sqlite3_bind_int64(q, 7, f->limit ? (sqlite3_int64)f->limit : -1);
	rc = collect_rows(s, q, &rr, (void **)out, n, "searching", err);
	return rc;
}

/* ---- the reflog ---- */

/* ---- hand-off notes ---- */

/* ---- a checkpoint's lists as items and chunks (store/content.h) ---- */

/* The column of CKPT_COLS and HEAD_COLS that holds a row's packed lists. */
#define LISTS_COL 18

/* Chunk id's items' text joined by ",", and their number. */
static enum smr_rc fetch_chunk(struct sqlite_store *s, int64_t id, struct buf *out, size_t *count,
			       struct smr_err *err)
{
	static const char chunk_sql[] = "SELECT ids FROM chunks WHERE id = ?";
	static const char item_sql[] = "SELECT body FROM items WHERE id = ?";
	sqlite3_stmt *q = prep(s, chunk_sql);
	unsigned char *ids = NULL;
	size_t n = 0;
	int step;
	enum smr_rc rc = SMR_OK;

	if (!q)
		return db_error(s, err, "reading a checkpoint's items");
	sqlite3_bind_int64(q, 1, id);
	step = sqlite3_step(q);
	if (step == SQLITE_ROW) {
		n = (size_t)sqlite3_column_bytes(q, 0) / 8;
		ids = xmalloc(n * 8 + 1);
		memcpy(ids, sqlite3_column_blob(q, 0), n * 8);
	}
	sqlite3_reset(q);
	if (step != SQLITE_ROW)
		return step == SQLITE_DONE ? smr_errf(err, SMR_ENOTFOUND, "chunk %016llx is missing",
						      (unsigned long long)id)
					   : db_error(s, err, "reading a checkpoint's items");
	for (size_t i = 0; !rc && i < n; i++) {
		q = prep(s, item_sql);
		if (!q) {
			rc = db_error(s, err, "reading a checkpoint's items");
			break;
		}
		sqlite3_bind_int64(q, 1, content_unpack(ids + i * 8));
		step = sqlite3_step(q);
		if (step == SQLITE_ROW) {
			if (i)
				buf_addch(out, ',');
			buf_add(out, sqlite3_column_text(q, 0), (size_t)sqlite3_column_bytes(q, 0));
		}
		sqlite3_reset(q);
		if (step == SQLITE_DONE)
			rc = smr_errf(err, SMR_ENOTFOUND, "an item of chunk %016llx is missing",
				      (unsigned long long)id);
		else if (step != SQLITE_ROW)
			rc = db_error(s, err, "reading a checkpoint's items");
	}
	free(ids);
	*count = n;
	return rc;
}

/* content_fetch_fn over this handle. */
static enum smr_rc fetch_chunks(void *arg, const int64_t *ids, size_t n, struct buf *out,
				size_t *counts, struct smr_err *err)
{
	enum smr_rc rc = SMR_OK;

	for (size_t i = 0; !rc && i < n; i++)
		rc = fetch_chunk(arg, ids[i], &out[i], &counts[i], err);
	return rc;
}

/* The failure a read of chunks met since the last call (see sqlite_store.read_rc), cleared. */
static enum smr_rc read_failed(struct sqlite_store *s, struct smr_err *err)
{
	enum smr_rc rc = s->read_rc;

	if (rc && err)
		*err = s->read_err;
	s->read_rc = SMR_OK;
	return rc;
}

/*
 * The six lists' text of a row that stores them as chunks (text[k] the
 * caller's to free); 1 when the row keeps them in its own columns, -1 when
 * its chunks cannot be read (damage that fsck reports as a hash mismatch;
 * any other failure is kept for read_failed).
 */
static int row_lists(struct sqlite_store *s, sqlite3_stmt *q, int fresh,
		     char *text[CONTENT_LISTS], size_t len[CONTENT_LISTS])
{
	struct smr_err err = SMR_ERR_INIT;
	size_t n;
	int64_t *row;
	enum smr_rc rc;

	if (sqlite3_column_type(q, LISTS_COL) == SQLITE_NULL)
		return 1;
	row = content_row_unpack(sqlite3_column_blob(q, LISTS_COL),
				 (size_t)sqlite3_column_bytes(q, LISTS_COL), &n);
	rc = row ? content_read(row, n, s->content_db, fresh, fetch_chunks, s, text, len, &err)
		 : SMR_ENOTFOUND;
	if (rc && rc != SMR_ENOTFOUND && !s->read_rc) {   /* not damage: the read must fail */
		s->read_rc = rc;
		s->read_err = err;
	}
	if (!rc)
		content_remember(s->content_db, (const char *)sqlite3_column_text(q, 0), row, n);
	free(row);
	return rc ? -1 : 0;
}

/* Binds c's lists as a row (packed) at column i. */
static void bind_row(sqlite3_stmt *q, int i, const struct content *ct)
{
	unsigned char *packed = xmalloc(ct->n_row * 8);

	content_pack(ct->row, ct->n_row, packed);
	sqlite3_bind_blob(q, i, packed, (int)(ct->n_row * 8), free);
}

/* Writes chunk ch of ct unless it is there; *added 1 when it was not. */
static enum smr_rc insert_chunk(struct sqlite_store *s, const struct content *ct,
				const struct content_chunk *ch, int *added, struct smr_err *err)
{
	static const char sql[] = "INSERT INTO chunks (id, ids) VALUES (?, ?) ON CONFLICT (id) DO NOTHING";
	sqlite3_stmt *q = prep(s, sql);
	unsigned char *packed = xmalloc(ch->n * 8);
	enum smr_rc rc;

	for (size_t i = 0; i < ch->n; i++)
		content_pack(&ct->items[ch->first + i].id, 1, packed + i * 8);
	if (!q) {
		free(packed);
		return db_error(s, err, "writing a checkpoint's items");
	}
	sqlite3_bind_int64(q, 1, ch->id);
	sqlite3_bind_blob(q, 2, packed, (int)(ch->n * 8), free);
	rc = step_done(s, q, "writing a checkpoint's items", err);
	*added = !rc && sqlite3_changes(s->db) == 1;
	return rc;
}

/*
 * Writes an item unless it is there.  Two different items with one id (a
 * collision of 64 bits of SHA-256) fail the write: the update sets NOT NULL
 * body to NULL only then.
 */
static enum smr_rc insert_item(struct sqlite_store *s, const struct content_item *it,
			       struct smr_err *err)
{
	static const char sql[] =
		"INSERT INTO items (id, body) VALUES (?, ?) ON CONFLICT (id) DO UPDATE"
		" SET body = NULL WHERE body <> excluded.body";
	sqlite3_stmt *q = prep(s, sql);
	int step;

	if (!q)
		return db_error(s, err, "writing a checkpoint's items");
	sqlite3_bind_int64(q, 1, it->id);
	sqlite3_bind_text(q, 2, it->body, (int)it->len, SQLITE_STATIC);
	step = sqlite3_step(q);
	sqlite3_reset(q);
	if (step == SQLITE_CONSTRAINT)
		return smr_errf(err, SMR_EINTERNAL, "two different items have the id %016llx;"
				" nothing was written (report this)", (unsigned long long)it->id);
	if (step != SQLITE_DONE)
		return db_error(s, err, "writing a checkpoint's items");
	return SMR_OK;
}

/* The fresh chunks of ct and, for each that was not there yet, its items. */
static enum smr_rc insert_content(struct sqlite_store *s, const struct content *ct,
				  struct smr_err *err)
{
	const struct content_chunk *ch;
	enum smr_rc rc = SMR_OK;
	int added = 0;

	for (size_t i = 0; !rc && i < ct->n_chunks; i++) {
		ch = &ct->chunks[i];
		if (ch->fresh)
			rc = insert_chunk(s, ct, ch, &added, err);
		for (size_t j = 0; !rc && ch->fresh && added && j < ch->n; j++)
			rc = insert_item(s, &ct->items[ch->first + j], err);
	}
	return rc;
}

/* c's lists cut into items and chunks, checked against c's hash, and what was not stored written. */
static enum smr_rc write_content(struct sqlite_store *s, const struct checkpoint *c,
				 const struct checkpoint_text *text, struct content *ct,
				 struct smr_err *err)
{
	enum smr_rc rc;

	content_of(ct, c, text);
	content_mark_fresh(ct, s->content_db, c->parent_hash);
	rc = content_verify(ct, c, err);
	if (!rc)
		rc = insert_content(s, ct, err);
	return rc;
}

/*
 * ---- converting the rows written before migration 11 ----
 *
 * Batch by batch, each one transaction that moves the cursor
 * (content_migration.last_commit) with the rows it converted, so a kill
 * -9 loses at most the batch under way and the next open goes on from the
 * cursor.  A row whose lists cannot be cut verbatim keeps its columns
 * (reads take them from there).  Once no row is left after the cursor, the
 * cursor goes.
 */
#define CONVERT_BATCH 1000

/* Converts the row id (its lists still in their columns). */
static enum smr_rc convert_row(struct sqlite_store *s, int64_t id, struct smr_err *err)
{
	static const char get[] =
		"SELECT c.commit_hash, p.commit_hash, c.decisions, c.assumptions, c.tasks,"
		" c.open_questions, c.entities, c.artifacts FROM commits c"
		" LEFT JOIN commits p ON p.id = c.parent_commit_id"
		" WHERE c.id = ? AND c.lists IS NULL";
	static const char set[] =
		"UPDATE commits SET lists = ?, decisions = '', assumptions = '', tasks = '',"
		" open_questions = '', entities = '', artifacts = '' WHERE id = ?";
	sqlite3_stmt *q = prep(s, get), *u;
	const char *text[CONTENT_LISTS];
	size_t len[CONTENT_LISTS];
	struct content ct;
	enum smr_rc rc;

	if (!q)
		return db_error(s, err, "converting a checkpoint");
	sqlite3_bind_int64(q, 1, id);
	if (sqlite3_step(q) != SQLITE_ROW) {
		sqlite3_reset(q);
		return SMR_OK;   /* converted already, or gone */
	}
	for (int k = 0; k < CONTENT_LISTS; k++) {
		text[k] = (const char *)sqlite3_column_text(q, 2 + k);
		len[k] = (size_t)sqlite3_column_bytes(q, 2 + k);
	}
	if (content_split(&ct, text, len)) {
		sqlite3_reset(q);
		return SMR_OK;
	}
	content_mark_fresh(&ct, s->content_db, (const char *)sqlite3_column_text(q, 1));
	rc = insert_content(s, &ct, err);
	u = rc ? NULL : prep(s, set);
	if (u) {
		bind_row(u, 1, &ct);
		sqlite3_bind_int64(u, 2, id);
		rc = step_done(s, u, "converting a checkpoint", err);
	} else if (!rc) {
		rc = db_error(s, err, "converting a checkpoint");
	}
	if (!rc)
		content_remember(s->content_db, (const char *)sqlite3_column_text(q, 0), ct.row, ct.n_row);
	content_release(&ct);
	sqlite3_reset(q);
	return rc;
}

/* The ids of the next batch after the cursor into ids; *n 0: none left. */
static enum smr_rc convert_batch_ids(struct sqlite_store *s, int64_t after, int64_t *ids,
				     size_t *n, struct smr_err *err)
{
	static const char sql[] = "SELECT id FROM commits WHERE id > ? ORDER BY id LIMIT ?";
	sqlite3_stmt *q = prep(s, sql);
	int step;

	*n = 0;
	if (!q)
		return db_error(s, err, "converting checkpoints");
	sqlite3_bind_int64(q, 1, after);
	sqlite3_bind_int(q, 2, CONVERT_BATCH);
	while ((step = sqlite3_step(q)) == SQLITE_ROW)
		ids[(*n)++] = sqlite3_column_int64(q, 0);
	sqlite3_reset(q);
	return step == SQLITE_DONE ? SMR_OK : db_error(s, err, "converting checkpoints");
}

/* One batch in one transaction; *left 0 when the conversion is done. */
static enum smr_rc convert_batch(struct sqlite_store *s, int64_t *cursor, size_t *done,
				 int *left, struct smr_err *err)
{
	int64_t ids[CONVERT_BATCH];
	size_t n = 0;
	sqlite3_stmt *q;
	enum smr_rc rc = begin(s, err);

	if (rc)
		return rc;
	q = prep(s, "SELECT last_commit FROM content_migration WHERE id = 1");
	*left = q && sqlite3_step(q) == SQLITE_ROW;
	*cursor = *left ? sqlite3_column_int64(q, 0) : 0;
	if (q)
		sqlite3_reset(q);
	if (*left)
		rc = convert_batch_ids(s, *cursor, ids, &n, err);
	for (size_t i = 0; !rc && i < n; i++)
		rc = convert_row(s, ids[i], err);
	if (!rc && *left && n) {
		*cursor = ids[n - 1];
		q = prep(s, "UPDATE content_migration SET last_commit = ? WHERE id = 1");
		if (q)
			sqlite3_bind_int64(q, 1, *cursor);
		rc = step_done(s, q, "converting checkpoints", err);
	} else if (!rc && *left) {
		rc = exec(s, "DELETE FROM content_migration", err);
		*left = 0;
	}
	if (rc)
		return rollback(s, rc);
	*done += n;
	return commit(s, err);
}

static int64_t count_after(struct sqlite_store *s, int64_t cursor)
{
	sqlite3_stmt *q = prep(s, "SELECT count(*) FROM commits WHERE id > ?");
	int64_t n = 0;

	if (!q)
		return 0;
	sqlite3_bind_int64(q, 1, cursor);
	if (sqlite3_step(q) == SQLITE_ROW)
		n = sqlite3_column_int64(q, 0);
	sqlite3_reset(q);
	return n;
}

/* Converts what is left to convert, with a progress line on stderr per batch. */
static enum smr_rc convert_content(struct sqlite_store *s, struct smr_err *err)
{
	sqlite3_stmt *q = prep(s, "SELECT last_commit FROM content_migration WHERE id = 1");
	int64_t cursor = 0, total;
	size_t done = 0, before;
	int left;
	enum smr_rc rc = SMR_OK;

	if (!q)
		return db_error(s, err, "converting checkpoints");
	left = sqlite3_step(q) == SQLITE_ROW;
	if (left)
		cursor = sqlite3_column_int64(q, 0);
	sqlite3_reset(q);
	if (!left)
		return SMR_OK;
	total = count_after(s, cursor);
	while (!rc && left) {
		before = done;
		rc = convert_batch(s, &cursor, &done, &left, err);
		if (!rc && done > before)
			fprintf(stderr, "smriti: storing each item once: %zu of %lld checkpoints"
				" converted\n", done, (long long)total);
	}
	return rc;
}

/* ---- Checkpoints ---- */

/* A checkpoint's columns, read through Space S (its name is c->space). */
#define CKPT_COLS_AT(S) \
	"SELECT c.commit_hash, p.commit_hash, m.commit_hash, r.name, c.title, c.summary," \
	" c.decisions, c.assumptions, c.tasks, c.open_questions, c.entities, c.artifacts," \
	" c.metadata_, c.author, c.created_at, c.parent_commit_id, c.id," \
	" c.merge_parent_commit_id, c.lists FROM commits c" \
	" JOIN repos r ON r.id = " S \
	" LEFT JOIN commits p ON p.id = c.parent_commit_id" \
	" LEFT JOIN commits m ON m.id = c.merge_parent_commit_id"
/* ... or through the Space that wrote it. */
#define CKPT_COLS CKPT_COLS_AT("c.repo_id")

/* A damaged JSON column becomes null, which fsck then reports as a hash mismatch. */
static json_t *col_json(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);
	json_t *v = t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;

	return v ? v : json_null();
}

/* The slots of c's JSON fields, in the order of their columns (6 to 12). */
static json_t **json_slot(struct checkpoint *c, int i)
{
	json_t **slots[MEMO_FIELDS] = { &c->decisions, &c->assumptions, &c->tasks,
					&c->open_questions, &c->entities, &c->artifacts,
					&c->metadata };

	return slots[i];
}

/* Fills c (not init'ed) but for its JSON fields; returns what read_checkpoint does. */
static int read_checkpoint_text(sqlite3_stmt *st, struct checkpoint *c)
{
	memset(c, 0, sizeof(*c));
	c->hash = col_text(st, 0);
	c->parent_hash = col_text(st, 1);
	c->merge_parent_hash = col_text(st, 2);
	c->space = col_text(st, 3);
	c->title = col_text(st, 4);
	c->summary = col_text(st, 5);
	c->author = col_text(st, 13);
	c->created_at = col_text(st, 14);
	return (sqlite3_column_type(st, 15) != SQLITE_NULL && !c->parent_hash) ||
	       (sqlite3_column_type(st, 17) != SQLITE_NULL && !c->merge_parent_hash);
}

/* A list's text parsed; null when it is not JSON (fsck then reports a hash mismatch). */
static json_t *text_json(const char *t, size_t len)
{
	json_t *v = t ? json_loadb(t, len, JSON_DECODE_ANY, NULL) : NULL;

	return v ? v : json_null();
}

/*
 * Fills c (not init'ed), its lists from its chunks (with fresh: none from
 * the cache) or its own columns; returns 1 when the row names a parent (or
 * second parent) that does not exist.
 */
static int read_checkpoint(struct sqlite_store *s, sqlite3_stmt *st, struct checkpoint *c,
			   int fresh)
{
	int missing = read_checkpoint_text(st, c);
	char *text[CONTENT_LISTS] = { NULL };
	size_t len[CONTENT_LISTS];
	int kept = row_lists(s, st, fresh, text, len);

	for (int i = 0; i < MEMO_FIELDS; i++)
		*json_slot(c, i) = kept > 0 || i == CONTENT_LISTS ? col_json(st, 6 + i)
								: text_json(text[i], len[i]);
	for (int i = 0; i < CONTENT_LISTS; i++)
		free(text[i]);
	return missing;
}

struct row_read {
	struct sqlite_store *s;
	void *out;
};

static void read_checkpoint_row(sqlite3_stmt *q, void *elem)
{
	struct row_read *r = elem;

	read_checkpoint(r->s, q, r->out, 0);
}

static void bind_json(sqlite3_stmt *st, int i, const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	sqlite3_bind_text(st, i, s, -1, free);
}

static int same_hash(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Reads the Space's HEAD under the write lock that BEGIN IMMEDIATE took, and checks it. */
static enum smr_rc check_head(struct store *st, const char *space_id, const char *expected,
			      char **hash, struct smr_err *err)
{
	static const char sql[] =
		"SELECT c.commit_hash FROM refs f"
		" LEFT JOIN commits c ON c.id = f.commit_id"
		" WHERE f.repo_id = ? AND f.name = 'main'";
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, sql);
	int step;

	if (!q)
		return db_error(s, err, "reading HEAD");
	bind_text(q, 1, space_id);
	step = sqlite3_step(q);
	if (step == SQLITE_ROW)
		*hash = col_text(q, 0);
	sqlite3_reset(q);
	if (step == SQLITE_DONE)
		return smr_errf(err, SMR_ENOTFOUND, "no space '%s'", space_id);
	if (step != SQLITE_ROW)
		return db_error(s, err, "reading HEAD");
	return same_hash(*hash, expected) ? SMR_OK : SMR_ECONFLICT;
}

/* Does ref still name Space space_id, called name (a name match wins over an id)? */
static enum smr_rc check_space(struct store *st, const char *space_id, const char *ref,
			       const char *name, struct smr_err *err)
{
	static const char sql[] =
		"SELECT EXISTS (SELECT 1 FROM repos WHERE id = ?1 AND name = ?3"
		" AND (name = ?2 OR id = ?2))"
		" AND NOT EXISTS (SELECT 1 FROM repos WHERE name = ?2 AND id <> ?1)";
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, sql);
	int step, ok = 0;

	if (!q)
		return db_error(s, err, "reading a space");
	bind_text(q, 1, space_id);
	bind_text(q, 2, ref);
	bind_text(q, 3, name);
	step = sqlite3_step(q);
	if (step == SQLITE_ROW)
		ok = sqlite3_column_int(q, 0);
	sqlite3_reset(q);
	if (step != SQLITE_ROW)
		return db_error(s, err, "reading a space");
	return ok ? SMR_OK : SMR_ENOTFOUND;
}

/* The Space's HEAD row and hash under the current transaction. */
static enum smr_rc read_head(struct store *st, const char *space_id, int64_t *id, char **hash,
			     struct smr_err *err)
{
	static const char sql[] =
		"SELECT f.commit_id, c.commit_hash FROM refs f"
		" LEFT JOIN commits c ON c.id = f.commit_id"
		" WHERE f.repo_id = ? AND f.name = 'main'";
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, sql);
	int step;

	if (!q)
		return db_error(s, err, "reading HEAD");
	bind_text(q, 1, space_id);
	step = sqlite3_step(q);
	if (step == SQLITE_ROW) {
		*id = col_int_or_neg(q, 0);
		*hash = col_text(q, 1);
	}
	sqlite3_reset(q);
	if (step == SQLITE_DONE)
		return smr_errf(err, SMR_ENOTFOUND, "no space '%s'", space_id);
	if (step != SQLITE_ROW)
		return db_error(s, err, "reading HEAD");
	return SMR_OK;
}

/* Column i: the text given for c's list or metadata k, else v serialised. */
static void bind_json_as(sqlite3_stmt *st, int i, const struct checkpoint_text *text, int k,
			 const json_t *v)
{
	if (text && text->json[k])
		sqlite3_bind_text(st, i, text->json[k], (int)text->len[k], SQLITE_STATIC);
	else
		bind_json(st, i, v);
}

/*
 * A checkpoint's title .. created_at (the commits columns both inserts
 * share) at ?first on: its lists are in its chunks (ct), their own columns
 * left empty.
 */
static void bind_body(sqlite3_stmt *q, int first, const struct checkpoint *c,
		      const struct checkpoint_text *text)
{
	bind_text(q, first, c->title ? c->title : "");
	bind_text(q, first + 1, c->summary ? c->summary : "");
	for (int k = 0; k < CONTENT_LISTS; k++)
		sqlite3_bind_text(q, first + 2 + k, "", 0, SQLITE_STATIC);
	bind_json_as(q, first + 8, text, CONTENT_LISTS, c->metadata);
	bind_text(q, first + 9, c->author ? c->author : "");
	bind_text(q, first + 10, c->created_at);
}

static enum smr_rc commit_id(struct store *st, const char *space_id, const char *hash,
			    int64_t *id, struct smr_err *err);

/*
 * An insert that found its hash written already (the history is shared):
 * SMR_ECONFLICT when space_id holds it, else *id gets its row, which the
 * Space now takes on (the same checkpoint, written in another Space).
 */
static enum smr_rc written_before(struct store *st, const char *space_id, const char *hash,
				  int64_t *id, struct smr_err *err)
{
	static const char sql[] = "SELECT id FROM commits WHERE commit_hash = ?";
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q;
	enum smr_rc rc = commit_id(st, space_id, hash, id, err);

	if (rc)
		return rc;
	if (*id >= 0)
		return SMR_ECONFLICT;
	q = prep(s, sql);
	if (!q)
		return db_error(s, err, "writing a checkpoint");
	bind_text(q, 1, hash);
	if (sqlite3_step(q) == SQLITE_ROW)
		*id = sqlite3_column_int64(q, 0);
	sqlite3_reset(q);
	return *id >= 0 ? SMR_OK : db_error(s, err, "writing a checkpoint");
}

/*
 * Inserts c as row want (-1: the next free one).  1 when it went in (*id
 * its row), 0 when a row holds its hash already, -1 on an error (*rc set).
 */
static int insert_row(struct store *st, const char *space_id, const struct checkpoint *c,
		      const struct checkpoint_text *text, int64_t parent_id, int64_t merge_id,
		      int64_t want, int64_t *id, enum smr_rc *rc, struct smr_err *err)
{
	static const char sql[] =
		"INSERT OR IGNORE INTO commits (repo_id, commit_hash, parent_commit_id, title,"
		" summary, decisions, assumptions, tasks, open_questions, entities, artifacts,"
		" metadata_, author, created_at, merge_parent_commit_id, lists, id)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	struct sqlite_store *s = S(st);
	struct content ct;
	sqlite3_stmt *q;
	int step;

	*rc = write_content(s, c, text, &ct, err);
	q = *rc ? NULL : prep(s, sql);
	if (!q) {
		content_release(&ct);
		*rc = *rc ? *rc : db_error(s, err, "writing a checkpoint");
		return -1;
	}
	bind_text(q, 1, space_id);
	bind_text(q, 2, c->hash);
	bind_int_or_null(q, 3, parent_id);
	bind_body(q, 4, c, text);
	bind_int_or_null(q, 15, merge_id);
	bind_row(q, 16, &ct);
	bind_int_or_null(q, 17, want);
	step = sqlite3_step(q);
	sqlite3_reset(q);
	if (step == SQLITE_DONE)
		content_remember(s->content_db, c->hash, ct.row, ct.n_row);
	content_release(&ct);
	*rc = step == SQLITE_CONSTRAINT ? SMR_ECONFLICT :
	      step != SQLITE_DONE ? db_error(s, err, "writing a checkpoint") : SMR_OK;
	if (*rc)
		return -1;
	if (sqlite3_changes(s->db) != 1)
		return 0;
	*id = sqlite3_last_insert_rowid(s->db);
	return 1;
}

static enum smr_rc insert_commit(struct store *st, const char *space_id,
				 const struct checkpoint *c, const struct checkpoint_text *text,
				 int64_t parent_id, int64_t merge_id, int64_t *id,
				 struct smr_err *err)
{
	enum smr_rc rc;
	int in = insert_row(st, space_id, c, text, parent_id, merge_id, -1, id, &rc, err);

	if (in)
		return rc;
	return written_before(st, space_id, c->hash, id, err);
}

/*
 * store_ops.commit_reserve: the writer holds the database, so the rows
 * after the last one are free until it commits.  Not a round trip here,
 * but it spares the import a search-index lookup a checkpoint.
 */
static enum smr_rc reserve_commits(struct store *st, const char *const *hashes, size_t n,
				   int64_t *ids, struct smr_err *err)
{
	static const char sql[] = "SELECT (SELECT id FROM commits WHERE commit_hash = ?),"
		" (SELECT coalesce(max(id), 0) FROM commits)";
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, sql);
	int64_t next = -1;

	for (size_t i = 0; q && i < n; i++) {
		bind_text(q, 1, hashes[i]);
		if (sqlite3_step(q) != SQLITE_ROW) {
			sqlite3_reset(q);
			return db_error(s, err, "writing checkpoints");
		}
		if (next < 0)
			next = sqlite3_column_int64(q, 1) + 1;
		ids[i] = sqlite3_column_type(q, 0) == SQLITE_NULL ? next++ : -1;
		sqlite3_reset(q);
	}
	return q ? SMR_OK : db_error(s, err, "writing checkpoints");
}

/* insert_commit as row id (reserve_commits'); its hash taken meanwhile: SMR_ECONFLICT. */
static enum smr_rc insert_commit_as(struct store *st, const char *space_id,
				    const struct checkpoint *c, const struct checkpoint_text *text,
				    int64_t id, int64_t parent_id, int64_t merge_id,
				    struct smr_err *err)
{
	enum smr_rc rc;
	int64_t got = -1;
	int in = insert_row(st, space_id, c, text, parent_id, merge_id, id, &got, &rc, err);

	if (in < 0)
		return rc;
	return in && got == id ? SMR_OK : SMR_ECONFLICT;
}

/* Inserts c on top of the HEAD check_head locked (store.c's put). */
static enum smr_rc insert_on_head(struct store *st, const char *space_id,
				  const struct checkpoint *c, const struct checkpoint_text *text,
				  struct smr_err *err)
{
	static const char sql[] =
		"INSERT OR IGNORE INTO commits (repo_id, commit_hash, parent_commit_id, title,"
		" summary, decisions, assumptions, tasks, open_questions, entities, artifacts,"
		" metadata_, author, created_at, lists) VALUES (?1, ?2,"
		" (SELECT commit_id FROM refs WHERE repo_id = ?1 AND name = 'main'),"
		" ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
	struct sqlite_store *s = S(st);
	struct content ct;
	sqlite3_stmt *q;
	enum smr_rc rc = write_content(s, c, text, &ct, err);
	int step;

	q = rc ? NULL : prep(s, sql);
	if (!q) {
		content_release(&ct);
		return rc ? rc : db_error(s, err, "writing a checkpoint");
	}
	bind_text(q, 1, space_id);
	bind_text(q, 2, c->hash);
	bind_body(q, 3, c, text);
	bind_row(q, 14, &ct);
	step = sqlite3_step(q);
	sqlite3_reset(q);
	if (step == SQLITE_DONE)
		content_remember(s->content_db, c->hash, ct.row, ct.n_row);
	content_release(&ct);
	if (step == SQLITE_CONSTRAINT)
		return SMR_ECONFLICT;
	if (step != SQLITE_DONE)
		return db_error(s, err, "writing a checkpoint");
	if (sqlite3_changes(s->db) == 1)
		return SMR_OK;
	return written_before(st, space_id, c->hash, &(int64_t){ 0 }, err);
}

static enum smr_rc move_head(struct store *st, const char *space_id, int64_t commit_id,
			     struct smr_err *err)
{
	static const char sql[] =
		"UPDATE refs SET commit_id = ? WHERE repo_id = ? AND name = 'main'";
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, sql);

	if (q) {
		sqlite3_bind_int64(q, 1, commit_id);
		bind_text(q, 2, space_id);
	}
	return step_done(s, q, "moving HEAD", err);
}

/* Moves HEAD to the Space's checkpoint hash (store.c's put). */
static enum smr_rc move_head_to(struct store *st, const char *space_id, const char *hash,
				struct smr_err *err)
{
	static const char sql[] =
		"UPDATE refs SET commit_id = (SELECT id FROM commits"
		" WHERE commit_hash = ?2) WHERE repo_id = ?1 AND name = 'main'";
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, sql);

	if (q) {
		bind_text(q, 1, space_id);
		bind_text(q, 2, hash);
	}
	return step_done(s, q, "moving HEAD", err);
}

#define HEAD_COLS \
	"SELECT c.commit_hash, p.commit_hash, m.commit_hash, r.name, c.title, c.summary," \
	" c.decisions, c.assumptions, c.tasks, c.open_questions, c.entities, c.artifacts," \
	" c.metadata_, c.author, c.created_at, c.parent_commit_id, c.id," \
	" c.merge_parent_commit_id, c.lists FROM repos r" \
	" LEFT JOIN refs f ON f.repo_id = r.id AND f.name = 'main'" \
	" LEFT JOIN commits c ON c.id = f.commit_id" \
	" LEFT JOIN commits p ON p.id = c.parent_commit_id" \
	" LEFT JOIN commits m ON m.id = c.merge_parent_commit_id"

struct head_read {
	struct sqlite_store *s;
	struct checkpoint *out;
};

/*
 * A HEAD row into h->out: its JSON fields are copies of the memo's when it
 * is the memo's checkpoint, else parsed, and the memo is now this one.
 */
static void read_head_row(sqlite3_stmt *q, void *elem)
{
	struct head_read *h = elem;
	struct fields_memo *m = &h->s->memo;
	const char *hash = (const char *)sqlite3_column_text(q, 0);

	if (!hash || strlen(hash) >= sizeof(m->hash)) {   /* an empty Space */
		read_checkpoint(h->s, q, h->out, 0);
		return;
	}
	if (!m->fields[0] || strcmp(m->hash, hash)) {
		memo_clear(m);
		read_checkpoint(h->s, q, h->out, 0);
		for (int i = 0; i < MEMO_FIELDS; i++) {
			m->fields[i] = *json_slot(h->out, i);
			*json_slot(h->out, i) = NULL;
		}
		strcpy(m->hash, hash);
		checkpoint_release(h->out);
	}
	read_checkpoint_text(q, h->out);
	for (int i = 0; i < MEMO_FIELDS; i++)
		*json_slot(h->out, i) = json_deep_copy(m->fields[i]);
}

static enum smr_rc sqlite_head_get(struct store *st, const char *space, struct checkpoint *out,
				   struct smr_err *err)
{
	/* as store_space_get (rows.c): a name wins over another Space's id */
	static const char sql[] = HEAD_COLS " WHERE r.deleted_at IS NULL"
		" AND (r.name = ?1 OR r.id = ?1) ORDER BY r.name = ?1 DESC LIMIT 1";
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, sql);
	enum smr_rc rc;

	if (!q)
		return db_error(s, err, "reading HEAD");
	bind_text(q, 1, space);
	read_failed(s, NULL);
	rc = read_one(s, q, read_head_row, &(struct head_read){ s, out }, "reading HEAD", err);
	if (!rc && (rc = read_failed(s, err))) {
		checkpoint_release(out);
		memo_clear(&s->memo);   /* what it memoised was not read */
	}
	if (rc == SMR_ENOTFOUND)
		return smr_errf(err, rc, "no space '%s'", space);
	return rc;
}

static enum smr_rc sqlite_checkpoint_get(struct store *st, const char *space_id,
					 const char *hash, struct checkpoint *out,
					 struct smr_err *err)
{
	static const char in_space[] = CKPT_COLS_AT("?1")
		" WHERE c.id = " SQL_REACH("?1", "?2");
	static const char any[] = CKPT_COLS " WHERE c.commit_hash = ?";
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, space_id ? in_space : any);
	enum smr_rc rc;

	if (!q)
		return db_error(s, err, "reading a checkpoint");
	if (space_id) {
		bind_text(q, 1, space_id);
		bind_text(q, 2, hash);
	} else {
		bind_text(q, 1, hash);
	}
	read_failed(s, NULL);
	rc = read_one(s, q, read_checkpoint_row, &(struct row_read){ s, out }, "reading a checkpoint",
		      err);
	if (!rc && (rc = read_failed(s, err)))
		checkpoint_release(out);
	if (rc == SMR_ENOTFOUND)
		return smr_errf(err, rc, "no checkpoint %s", hash);
	return rc;
}

static enum smr_rc sqlite_checkpoint_log(struct store *st, const char *space_id,
					 const char *hash, size_t limit,
					 struct checkpoint **out, size_t *n, struct smr_err *err)
{
	static const char by_id[] = CKPT_COLS_AT("?2") " WHERE c.id = ?1";
	static const char start[] = "SELECT " SQL_REACH("?1", "?2");
	struct sqlite_store *s = S(st);
	struct checkpoint *v = NULL;
	size_t len = 0, cap = 0;
	int64_t id = -1;
	sqlite3_stmt *q = prep(s, start);
	enum smr_rc rc = SMR_OK;
	int step;

	if (!q)
		return db_error(s, err, "reading the log");
	bind_text(q, 1, space_id);
	bind_text(q, 2, hash);
	if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL)
		id = sqlite3_column_int64(q, 0);
	sqlite3_reset(q);
	if (id < 0)
		return smr_errf(err, SMR_ENOTFOUND, "no checkpoint %s in this space", hash);
	/* Reads inside one transaction see one snapshot of the chain. */
	exec(s, "BEGIN", NULL);
	while (id >= 0 && (!limit || len < limit)) {
		q = prep(s, by_id);
		if (!q) {
			rc = db_error(s, err, "reading the log");
			break;
		}
		sqlite3_bind_int64(q, 1, id);
		bind_text(q, 2, space_id);
		step = sqlite3_step(q);
		if (step != SQLITE_ROW) {
			sqlite3_reset(q);
			/* DONE: a parent row is missing (damage fsck reports); stop there */
			if (step != SQLITE_DONE)
				rc = db_error(s, err, "reading the log");
			break;
		}
		if (len == cap) {
			cap = cap ? cap * 2 : 16;
			v = xrealloc(v, cap * sizeof(*v));
		}
		read_checkpoint(s, q, &v[len++], 0);
		id = col_int_or_neg(q, 15);
		sqlite3_reset(q);
		if ((rc = read_failed(s, err)))
			break;
	}
	exec(s, "COMMIT", NULL);
	if (rc) {
		checkpoints_free(v, len);
		return rc;
	}
	*out = v;
	*n = len;
	return SMR_OK;
}

/* Reads a scanned row from q and hands it on; non-zero stops the scan. */
typedef int (*scan_row_fn)(struct sqlite_store *s, sqlite3_stmt *q, void *arg);

/* A Space's checkpoint rows, oldest first, in one read transaction. */
static enum smr_rc scan_checkpoint_rows(struct sqlite_store *s, const char *space_id,
					scan_row_fn row, void *arg, struct smr_err *err)
{
	static const char reached[] = SQL_REACHED("?1") CKPT_COLS_AT("?1")
		" WHERE c.id IN (SELECT id FROM rch_all) ORDER BY c.id";
	static const char every[] = CKPT_COLS " ORDER BY c.id";
	sqlite3_stmt *q;
	int step, stop = 0;

	exec(s, "BEGIN", NULL);
	q = prep(s, space_id ? reached : every);
	if (!q)
		return rollback(s, db_error(s, err, "scanning checkpoints"));
	if (space_id)
		bind_text(q, 1, space_id);
	read_failed(s, NULL);
	for (;;) {
		step = sqlite3_step(q);
		if (step != SQLITE_ROW || stop)
			break;
		stop = row(s, q, arg);
		if (s->read_rc)
			break;
	}
	sqlite3_reset(q);
	exec(s, "COMMIT", NULL);
	if (s->read_rc)
		return read_failed(s, err);
	if (step != SQLITE_DONE && step != SQLITE_ROW)
		return db_error(s, err, "scanning checkpoints");
	return SMR_OK;
}

struct scan_parsed {
	store_scan_fn fn;
	void *ctx;
};

/* fresh: a scan (fsck) reads every chunk from the file, none from the cache */
static int row_parsed(struct sqlite_store *s, sqlite3_stmt *q, void *arg)
{
	struct scan_parsed *a = arg;
	struct checkpoint c;
	int missing = read_checkpoint(s, q, &c, 1);
	int stop = s->read_rc ? 1 : a->fn(&c, missing, a->ctx);

	checkpoint_release(&c);
	return stop;
}

static enum smr_rc sqlite_checkpoint_scan(struct store *st, const char *space_id,
					  store_scan_fn fn, void *ctx, struct smr_err *err)
{
	struct scan_parsed a = { fn, ctx };

	return scan_checkpoint_rows(S(st), space_id, row_parsed, &a, err);
}

/*
 * The row's strings into c (lists left NULL), its lists' text into t
 * (borrowed from the row, or from own[k], the caller's to free).
 */
static void read_checkpoint_columns(struct sqlite_store *s, sqlite3_stmt *q,
				    struct checkpoint *c, struct checkpoint_text *t,
				    char *own[CONTENT_LISTS])
{
	size_t len[CONTENT_LISTS];
	int kept;

	read_checkpoint_text(q, c);
	kept = row_lists(s, q, 1, own, len);
	for (int k = 0; k < CHECKPOINT_TEXT_COLS; k++) {
		if (!kept && k < CONTENT_LISTS) {
			t->json[k] = own[k];
			t->len[k] = len[k];
			continue;
		}
		t->json[k] = kept < 0 && k < CONTENT_LISTS ? NULL
			     : (const char *)sqlite3_column_text(q, 6 + k);
		t->len[k] = t->json[k] ? (size_t)sqlite3_column_bytes(q, 6 + k) : 0;
		if (!t->json[k]) {   /* NULL: what col_json reads as null */
			t->json[k] = "null";
			t->len[k] = 4;
		}
	}
}

struct scan_text {
	store_scan_text_fn fn;
	void *ctx;
};

static int row_text(struct sqlite_store *s, sqlite3_stmt *q, void *arg)
{
	struct scan_text *a = arg;
	struct checkpoint c;
	struct checkpoint_text t;
	char *own[CONTENT_LISTS] = { NULL };
	int stop;

	read_checkpoint_columns(s, q, &c, &t, own);
	stop = s->read_rc ? 1 : a->fn(&c, &t, a->ctx);
	checkpoint_release(&c);
	for (int k = 0; k < CONTENT_LISTS; k++)
		free(own[k]);
	return stop;
}

static enum smr_rc sqlite_checkpoint_scan_text(struct store *st, const char *space_id,
					       store_scan_text_fn fn, void *ctx,
					       struct smr_err *err)
{
	struct scan_text a = { fn, ctx };

	return scan_checkpoint_rows(S(st), space_id, row_text, &a, err);
}

static enum smr_rc commit_id(struct store *st, const char *space_id, const char *hash,
			    int64_t *id, struct smr_err *err)
{
	static const char sql[] = "SELECT " SQL_REACH("?1", "?2");
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, sql);
	int step;

	if (!q)
		return db_error(s, err, "looking up a checkpoint");
	bind_text(q, 1, space_id);
	bind_text(q, 2, hash);
	step = sqlite3_step(q);
	*id = step == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL
		? sqlite3_column_int64(q, 0) : -1;
	sqlite3_reset(q);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return db_error(s, err, "looking up a checkpoint");
	return SMR_OK;
}

static enum smr_rc space_insert(struct store *st, const struct space *sp, struct smr_err *err)
{
	return insert_space(S(st), sp, err);
}

static enum smr_rc commit_links(struct store *st, const char *space_id, const char *hash,
				char **parent, char **merge_parent, char **created_at,
				struct smr_err *err)
{
	static const char sql[] =
		"SELECT p.commit_hash, m.commit_hash, c.created_at FROM commits c"
		" LEFT JOIN commits p ON p.id = c.parent_commit_id"
		" LEFT JOIN commits m ON m.id = c.merge_parent_commit_id"
		" WHERE c.id = " SQL_REACH("?1", "?2");
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, sql);
	int step;

	*parent = *merge_parent = *created_at = NULL;
	if (!q)
		return db_error(s, err, "reading a checkpoint's parents");
	bind_text(q, 1, space_id);
	bind_text(q, 2, hash);
	step = sqlite3_step(q);
	if (step == SQLITE_ROW) {
		*parent = col_text(q, 0);
		*merge_parent = col_text(q, 1);
		*created_at = col_text(q, 2);
	}
	sqlite3_reset(q);
	if (step == SQLITE_DONE)
		return smr_errf(err, SMR_ENOTFOUND, "no checkpoint %s in this space", hash);
	if (step != SQLITE_ROW)
		return db_error(s, err, "reading a checkpoint's parents");
	return SMR_OK;
}

static enum smr_rc commit_ancestry(struct store *st, const char *space_id, const char *hash,
				   json_t *into, struct smr_err *err)
{
	/* UNION, not UNION ALL: a row reached by two paths (a merge) is walked once */
	static const char sql[] =
		"WITH RECURSIVE anc(id) AS ("
		" SELECT id FROM (SELECT " SQL_REACH("?1", "?2") " AS id) x WHERE id IS NOT NULL"
		" UNION SELECT c.parent_commit_id FROM commits c JOIN anc ON c.id = anc.id"
		" WHERE c.parent_commit_id IS NOT NULL"
		" UNION SELECT c.merge_parent_commit_id FROM commits c JOIN anc ON c.id = anc.id"
		" WHERE c.merge_parent_commit_id IS NOT NULL)"
		" SELECT c.commit_hash, c.created_at FROM anc JOIN commits c ON c.id = anc.id";
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, sql);
	size_t rows = 0;
	int step;

	if (!q)
		return db_error(s, err, "reading a checkpoint's ancestry");
	bind_text(q, 1, space_id);
	bind_text(q, 2, hash);
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		json_object_set_new(into, (const char *)sqlite3_column_text(q, 0),
				    json_string((const char *)sqlite3_column_text(q, 1)));
		rows++;
	}
	sqlite3_reset(q);
	if (step != SQLITE_DONE)
		return db_error(s, err, "reading a checkpoint's ancestry");
	if (!rows)
		return smr_errf(err, SMR_ENOTFOUND, "no checkpoint %s in this space", hash);
	return SMR_OK;
}

/* ---- sessions and turns ---- */

static enum smr_rc last_seq(struct store *st, const char *session_id, int64_t expected_last,
			    int64_t *out, struct smr_err *err)
{
	static const char sql[] =
		"SELECT (SELECT COUNT(*) FROM sessions WHERE id = ?1),"
		" (SELECT COALESCE(MAX(sequence_number), 0) FROM turns WHERE session_id = ?1)";
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, sql);
	int exists = 0;

	if (!q)
		return db_error(s, err, "reading a session");
	bind_text(q, 1, session_id);
	if (sqlite3_step(q) == SQLITE_ROW) {
		exists = sqlite3_column_int(q, 0);
		*out = sqlite3_column_int64(q, 1);
	}
	sqlite3_reset(q);
	if (!exists)
		return smr_errf(err, SMR_ENOTFOUND, "no session '%s'", session_id);
	if (expected_last >= 0 && *out != expected_last)
		return SMR_ECONFLICT;
	return SMR_OK;
}

static enum smr_rc insert_turn(struct store *st, struct turn *t, struct smr_err *err)
{
	static const char sql[] =
		"INSERT INTO turns (session_id, sequence_number, role, content, provider, model,"
		" prompt_tokens, completion_tokens, latency_ms, error, created_at, status, author,"
		" parent_seq)"
		" VALUES (?1, (SELECT COALESCE(MAX(sequence_number), 0) + 1 FROM turns"
		" WHERE session_id = ?1), ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12,"
		/* a parent that is the turn before stays implicit, as in a linear session */
		" NULLIF(?13, (SELECT COALESCE(MAX(sequence_number), 0) FROM turns"
		" WHERE session_id = ?1)))"
		" RETURNING id, sequence_number";
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, sql);
	int step;

	if (!q)
		return db_error(s, err, "writing a turn");
	bind_text(q, 1, t->session_id);
	bind_text(q, 2, t->role);
	bind_text(q, 3, t->content);
	bind_text(q, 4, t->provider);
	bind_text(q, 5, t->model);
	bind_int_or_null(q, 6, t->prompt_tokens);
	bind_int_or_null(q, 7, t->completion_tokens);
	bind_int_or_null(q, 8, t->latency_ms);
	bind_text(q, 9, t->error);
	bind_text(q, 10, t->created_at);
	bind_text(q, 11, t->status);
	bind_text(q, 12, t->author);
	bind_int_or_null(q, 13, t->has_parent ? t->parent_seq : -1);
	step = sqlite3_step(q);
	if (step == SQLITE_ROW) {
		t->id = sqlite3_column_int64(q, 0);
		t->seq = sqlite3_column_int64(q, 1);
		step = sqlite3_step(q);
	}
	sqlite3_reset(q);
	if (step != SQLITE_DONE)
		return db_error(s, err, "writing a turn");
	return SMR_OK;
}

/* ---- generations ---- */

/* ---- portable SQL (store/sql.h) ---- */

static void rows_add(struct store_rows *out, sqlite3_stmt *q, size_t *cap)
{
	size_t cols = out->cols;

	if ((out->rows + 1) * cols > *cap) {
		*cap = *cap ? *cap * 2 : 16 * cols;
		out->cells = xrealloc(out->cells, *cap * sizeof(char *));
	}
	for (size_t c = 0; c < cols; c++)
		out->cells[out->rows * cols + c] = col_text(q, (int)c);
	out->rows++;
}

/*
 * Binds the arguments of portable SQL by name ($1 is params[0]), so that
 * their order in the text does not matter (as in PostgreSQL).
 */
static void bind_params(sqlite3_stmt *q, const char *const *params, int n)
{
	char name[16];
	int i, at;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "$%d", i + 1);
		at = sqlite3_bind_parameter_index(q, name);
		if (at)
			bind_text(q, at, params[i]);
	}
}

/*
 * Every mode runs the statement at once: outside a transaction it is one
 * (autocommit), run once; inside store.c's it is a row of it.
 */
static enum smr_rc sqlite_sql_text(struct store *st, enum sql_mode mode, const char *sql,
				   const char *const *params, int n, const char *what,
				   struct store_rows *out, struct smr_err *err)
{
	struct sqlite_store *s = S(st);
	sqlite3_stmt *q = prep(s, sql);
	size_t cap = 0;
	int step;

	if (mode == SQL_ROW && sqlite3_get_autocommit(s->db))
		BUG("sql_text(SQL_ROW) outside store.c's transaction");
	memset(out, 0, sizeof(*out));
	if (!q)
		return db_error(s, err, what);
	bind_params(q, params, n);
	out->cols = (size_t)sqlite3_column_count(q);
	while ((step = sqlite3_step(q)) == SQLITE_ROW)
		rows_add(out, q, &cap);
	sqlite3_reset(q);
	if (step == SQLITE_DONE) {
		out->changes = (size_t)sqlite3_changes(s->db);
		return SMR_OK;
	}
	store_rows_release(out);
	if (sqlite3_errcode(s->db) == SQLITE_CONSTRAINT)
		return SMR_ECONFLICT;
	return db_error(s, err, what);
}

const struct store_ops store_sqlite_ops = {
	.shared = 0,
	.name = "sqlite",
	.accepts = sqlite_accepts,
	.open = sqlite_open,
	.close = sqlite_close,
	.txn_begin = sqlite_txn_begin,
	.bulk = sqlite_bulk,
	.txn_commit = sqlite_txn_commit,
	.txn_rollback = sqlite_txn_rollback,
	.space_check = check_space,
	.head_lock = read_head,
	.head_check = check_head,
	.commit_insert_on_head = insert_on_head,
	.head_move_to = move_head_to,
	.commit_insert = insert_commit,
	.commit_reserve = reserve_commits,
	.commit_insert_as = insert_commit_as,
	.commit_id = commit_id,
	.commit_read = sqlite_checkpoint_get,
	.commit_links = commit_links,
	.commit_ancestry = commit_ancestry,
	.space_insert = space_insert,
	.head_move = move_head,
	.last_seq_lock = last_seq,
	.turn_insert = insert_turn,
	.head_get = sqlite_head_get,
	.data_version = sqlite_data_version,
	.group_key = sqlite_group_key,
	.checkpoint_due = sqlite_checkpoint_due,
	.checkpoint = sqlite_checkpoint,
	.savepoint = sqlite_savepoint,
	.space_create = sqlite_space_create,
	.gc_prune = sqlite_gc_prune,
	.search_has = sqlite_search_has,
	.search_insert = sqlite_search_insert,
	.search = sqlite_search,
	.checkpoint_get = sqlite_checkpoint_get,
	.checkpoint_log = sqlite_checkpoint_log,
	.checkpoint_scan = sqlite_checkpoint_scan,
	.checkpoint_scan_text = sqlite_checkpoint_scan_text,
	.sql_text = sqlite_sql_text,
	.reach_into_sql = SQL_REACH_INTO(SQL_ASKS_SQLITE),
	.heads_at_sql = SQL_HEADS_AT(SQL_HASHES_SQLITE),
	.live_of_sql = SQL_LIVE_OF(SQL_HASHES_SQLITE),
};
