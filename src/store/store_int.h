/*
 * store_int.h -- what the storage backends share, private to src/store.
 *
 * Each backend (sqlite.c, full/postgres.c) fills a struct store_ops and
 * embeds struct store as the first member of its own handle, the way git's
 * ref backends fill a ref_storage_be.  Callers never see this table: they
 * call the functions of store.h, which dispatch here.  A method meets the
 * contract of the store.h function of the same name.
 *
 * Policy is not a backend's business: the HEAD compare-and-swap, the
 * stale-parent and duplicate-hash conflicts and their messages, copying a
 * history between Spaces (fork, merge), and the sequence rule of turns
 * live once in store.c, which runs them between
 * txn_begin and txn_commit over the row-level methods below.  So a backend
 * is its SQL, and a new one is one new file (plus a line in backends_*.c).
 * A plain row whose SQL both engines run as written is no method at all:
 * store/rows.c and store/store_auth.c run it through sql_text (store/sql.h).
 */
#ifndef SMRITI_STORE_INTERNAL_H
#define SMRITI_STORE_INTERNAL_H

#include "store/store.h"

/*
 * Rows of text from sql_text: cells[row * cols + col], NULL for SQL NULL;
 * changes is how many rows a write touched.  Owned by the caller:
 * store_rows_release() (store.c).
 */
struct store_rows {
	char **cells;
	size_t rows, cols;
	size_t changes;
};

void store_rows_release(struct store_rows *r);

/* Rows of one write that store.c runs inside a transaction (see group.h). */
typedef enum smr_rc (*store_rows_fn)(struct store *st, void *arg, struct smr_err *err);

struct store_watch;   /* store/auth.h; defined below */

/*
 * How sql_text runs its statement.  Outside store.c's transactions,
 * SQL_AUTO: on its own (autocommit), and once more on a fresh connection
 * when the old one had died: a read, or a write that may run twice;
 * SQL_TXN: in a transaction of its own, never sent twice (a COMMIT that got
 * no answer is reported as possibly applied): a write that must not.
 * Inside one (between txn_begin and txn_commit), the statement is a row of
 * it, never retried: at once, with its rows, or, SQL_ROW, whenever the
 * backend sends the rest (a pipelining one reports its failure at
 * txn_commit, and out gets no rows).
 */
enum sql_mode { SQL_AUTO, SQL_TXN, SQL_ROW };

enum savepoint_op { SAVEPOINT_BEGIN, SAVEPOINT_END, SAVEPOINT_UNDO };

/* One search row of a checkpoint (search_insert_at): field is store_field_code's. */
struct search_put {
	int field;
	int64_t ordinal;
	const char *words;
};

struct store_ops {
	const char *name;
	int shared;                      /* see store_is_shared() */
	/* 1 if this backend handles the DSN ("postgres://...", a file path). */
	int (*accepts)(const char *dsn);
	enum smr_rc (*open)(const char *dsn, struct store **out, struct smr_err *err);
	void (*close)(struct store *st);

	/*
	 * One write transaction of store.c.  Between txn_begin and txn_commit
	 * the rows that head_lock and last_seq_lock lock stay as they read
	 * until the transaction ends (a write lock, or row locks).  txn_commit
	 * returns SMR_OK only once the write is durable; txn_rollback ends a
	 * failed one.
	 *
	 * A backend may pipeline the row methods below (postgres.c sends
	 * BEGIN ... COMMIT in one round trip): then what a method reports
	 * through its pointers, and the failure of its statement, arrive at
	 * txn_commit rather than at the call.  So a method takes what it needs
	 * by name (Space id, hash, session id), never from an earlier method's
	 * output; the pointers it is given stay valid until txn_commit or
	 * txn_rollback returns; and a failed check dooms the transaction:
	 * nothing after it is written and txn_commit returns the first failure.
	 */
	enum smr_rc (*txn_begin)(struct store *st, struct smr_err *err);
	enum smr_rc (*txn_commit)(struct store *st, struct smr_err *err);
	void (*txn_rollback)(struct store *st);
	/*
	 * Optional: a bulk load (an import) starts (on = 1) or has ended (0), so
	 * the backend may size its caches for it and back.
	 */
	void (*bulk)(struct store *st, int on);
	/*
	 * Makes what the row methods called so far report through their
	 * pointers readable now (a pipelining backend reads their results; one
	 * round trip); their first failure, if any, is returned.  NULL: the
	 * backend reports at once anyway.
	 */
	enum smr_rc (*txn_flush)(struct store *st, struct smr_err *err);
	/*
	 * 1 when the last write failed before the database began it (its BEGIN
	 * met a connection that had died while idle): nothing of it happened,
	 * and store.c runs it once more on the fresh connection.  NULL: never.
	 */
	int (*txn_not_started)(struct store *st);
	/*
	 * Locks the Space's HEAD and reads it into *hash (NULL: empty; caller
	 * frees).  Unless it is expected (NULL: empty), SMR_ECONFLICT (store.c
	 * words it).  SMR_ENOTFOUND: no such Space.
	 */
	enum smr_rc (*head_check)(struct store *st, const char *space_id, const char *expected,
				  char **hash, struct smr_err *err);
	/*
	 * Checks that ref (a name or an id, resolved as space_get resolves it)
	 * still names Space space_id and that its name is still name; else
	 * SMR_ENOTFOUND (no message needed: store.c words it).
	 */
	enum smr_rc (*space_check)(struct store *st, const char *space_id, const char *ref,
				   const char *name, struct smr_err *err);
	/*
	 * Inserts c on top of the HEAD head_check locked.  SMR_ECONFLICT: c's
	 * hash is there.  text: c's lists as JSON text made already, or NULL.
	 */
	enum smr_rc (*commit_insert_on_head)(struct store *st, const char *space_id,
					     const struct checkpoint *c,
					     const struct checkpoint_text *text,
					     struct smr_err *err);
	/* Moves HEAD to the Space's checkpoint hash. */
	enum smr_rc (*head_move_to)(struct store *st, const char *space_id, const char *hash,
				    struct smr_err *err);
	/*
	 * The rows below take and give row ids, so a pipelining backend runs
	 * each at once (one round trip each): store.c uses them where a write
	 * needs what it read (update, merge, fork), and the by-name rows above
	 * for a plain put.
	 */
	/* The Space's HEAD row id and hash (-1 and NULL: empty; caller frees *hash). */
	enum smr_rc (*head_lock)(struct store *st, const char *space_id, int64_t *id, char **hash,
				 struct smr_err *err);
	/*
	 * Inserts c on parent row parent_id and second parent row merge_id (-1:
	 * none); *id gets its row.  SMR_ECONFLICT: hash is there.  text, when
	 * not NULL, is c's lists and metadata as JSON text already (an import's),
	 * which a backend may write instead of serialising them again.
	 */
	enum smr_rc (*commit_insert)(struct store *st, const char *space_id,
				     const struct checkpoint *c, const struct checkpoint_text *text,
				     int64_t parent_id, int64_t merge_id, int64_t *id,
				     struct smr_err *err);
	/*
	 * Optional (both or neither), for an import's new checkpoints, so a
	 * pipelining backend writes them without waiting on each, and no
	 * backend looks up the search rows of a checkpoint no row held (a
	 * lookup that grows with the index): commit_reserve
	 * gives ids[i] a fresh row id for each hashes[i] no row holds yet, -1
	 * for one that is held (then commit_insert writes it), in one round trip
	 * for them all; commit_insert_as inserts c as that row id, as
	 * commit_insert would, and reports nothing back (a hash written
	 * meanwhile: SMR_ECONFLICT, at txn_commit).
	 */
	enum smr_rc (*commit_reserve)(struct store *st, const char *const *hashes, size_t n,
				      int64_t *ids, struct smr_err *err);
	enum smr_rc (*commit_insert_as)(struct store *st, const char *space_id,
					const struct checkpoint *c,
					const struct checkpoint_text *text, int64_t id,
					int64_t parent_id, int64_t merge_id, struct smr_err *err);
	/*
	 * The row of hash when the Space reaches it (store/sql.h), -1 when it
	 * does not.  commit_insert of a hash written before (the history is
	 * shared): the existing row when the Space does not hold it yet,
	 * SMR_ECONFLICT when it does.
	 */
	enum smr_rc (*commit_id)(struct store *st, const char *space_id, const char *hash,
				 int64_t *id, struct smr_err *err);
	/* checkpoint_get inside the current transaction (no reconnecting retry). */
	enum smr_rc (*commit_read)(struct store *st, const char *space_id, const char *hash,
				   struct checkpoint *out, struct smr_err *err);
	/*
	 * The parent hashes of hash in the Space (NULL for none) and its time;
	 * caller frees the three.  SMR_ENOTFOUND when hash is not there.
	 */
	enum smr_rc (*commit_links)(struct store *st, const char *space_id, const char *hash,
				    char **parent, char **merge_parent, char **created_at,
				    struct smr_err *err);
	/*
	 * Adds hash and every ancestor of it in the Space (both parents of
	 * merges) to into as {hash: created_at}, in one statement (a merge's
	 * base, a fork's ahead/behind: one round trip however long the
	 * history).  SMR_ENOTFOUND when hash is not there.
	 */
	enum smr_rc (*commit_ancestry)(struct store *st, const char *space_id, const char *hash,
				       json_t *into, struct smr_err *err);
	/* Inserts the Space and its empty HEAD; SMR_ECONFLICT naming a taken name. */
	enum smr_rc (*space_insert)(struct store *st, const struct space *sp,
				    struct smr_err *err);
	enum smr_rc (*head_move)(struct store *st, const char *space_id, int64_t commit_id,
				 struct smr_err *err);
	/*
	 * Locks the session and reads its last sequence number into *last (0:
	 * no turns).  Unless expected_last < 0 or *last == expected_last,
	 * SMR_ECONFLICT (store.c words it).  SMR_ENOTFOUND naming the session.
	 */
	enum smr_rc (*last_seq_lock)(struct store *st, const char *session_id,
				     int64_t expected_last, int64_t *last, struct smr_err *err);
	/*
	 * Inserts t as its session's next turn (last + 1); sets t->seq and t->id.
	 * t->parent_seq (with has_parent) is stored unless it is the turn before.
	 */
	enum smr_rc (*turn_insert)(struct store *st, struct turn *t, struct smr_err *err);

	/*
	 * Group commit (both NULL: the backend does not group).  group_key
	 * names the database this handle writes, the same for every handle on
	 * it (SQLite: the file's full path), or NULL for one not to group (an
	 * in-memory database).  savepoint opens (BEGIN), releases (END) or
	 * rolls back and releases (UNDO) the savepoint that keeps one write of
	 * a group apart inside its transaction.
	 */
	const char *(*group_key)(struct store *st);
	enum smr_rc (*savepoint)(struct store *st, enum savepoint_op op, struct smr_err *err);
	/*
	 * For the handle a group's leaders write on (NULL: the backend's
	 * commits checkpoint as they always did).  checkpoint_due makes the
	 * handle's WAL checkpoints the group's to run, no longer at the end of
	 * its commits, and says which is due after the last one: 0 none, 1 one
	 * to run on another handle while the next transaction goes on, 2 one to
	 * run before it (the WAL has grown that far).  checkpoint runs one on st
	 * without waiting for readers or writers.
	 */
	int (*checkpoint_due)(struct store *st);
	void (*checkpoint)(struct store *st);

	/* See store_data_version; NULL: the backend has no cheap version. */
	enum smr_rc (*data_version)(struct store *st, uint64_t *v, struct smr_err *err);

	/* The HEAD checkpoint of a Space (id or name) in one read; see store_head_get. */
	enum smr_rc (*head_get)(struct store *st, const char *space, struct checkpoint *out,
				struct smr_err *err);

	/*
	 * Rows of one transaction of store.c (no transaction of their own):
	 * the Space writes, and the reflog row of a move (its space_name is the
	 * Space's name as the row is written).  space_delete marks the Space
	 * deleted at mv->at and frees its name.
	 */
	enum smr_rc (*space_create)(struct store *st, const struct space *sp, struct smr_err *err);

	/*
	 * The search index (index.c): whether a checkpoint's items are there,
	 * one row (hash NULL and turn_id set for a turn) in the current
	 * transaction, and the query of store_search with the Space filter as
	 * a JSON array of ids (NULL: every live Space).
	 */
	/* *yes: more than one row holds hash (so it was indexed with an earlier one) */
	enum smr_rc (*search_has)(struct store *st, const char *hash, int *yes,
				  struct smr_err *err);
	/* commit_id (a row of the checkpoint) or turn_id is -1; field is store_field_code's */
	enum smr_rc (*search_insert)(struct store *st, int64_t commit_id, int64_t turn_id,
				     int field, int64_t ordinal, const char *words,
				     struct smr_err *err);
	/*
	 * By name, so a pipelining backend sends them with a put (NULL: the
	 * backend reports ids at once; index.c uses search_insert).  The rows
	 * v[0..n) of checkpoint hash in the Space, all in one statement, each
	 * unless another Space holds a copy of it indexed; and session_id's
	 * last turn (ordinal its sequence number).
	 */
	enum smr_rc (*search_insert_at)(struct store *st, const char *space_id, const char *hash,
					const struct search_put *v, size_t n,
					struct smr_err *err);
	enum smr_rc (*search_insert_turn)(struct store *st, const char *session_id, int field,
					  const char *words, struct smr_err *err);
	enum smr_rc (*search)(struct store *st, const struct search_filter *f,
			      const char *spaces_json, struct search_row **out, size_t *n,
			      struct smr_err *err);

	enum smr_rc (*gc_prune)(struct store *st, const char *before, const char *expire,
				struct gc_counts *n, struct smr_err *err);

	enum smr_rc (*checkpoint_get)(struct store *st, const char *space_id, const char *hash,
				      struct checkpoint *out, struct smr_err *err);
	/* Optional (NULL: checkpoint_get for each): see store_checkpoints_each. */
	enum smr_rc (*checkpoints_each)(struct store *st, const char *const *hashes, size_t n,
					store_each_fn fn, void *ctx, struct smr_err *err);
	enum smr_rc (*checkpoint_log)(struct store *st, const char *space_id, const char *hash,
				      size_t limit, struct checkpoint **out, size_t *n,
				      struct smr_err *err);
	enum smr_rc (*checkpoint_scan)(struct store *st, const char *space_id,
				       store_scan_fn fn, void *ctx, struct smr_err *err);
	/* Optional: checkpoint_scan handing the lists' text as stored. */
	enum smr_rc (*checkpoint_scan_text)(struct store *st, const char *space_id,
					    store_scan_text_fn fn, void *ctx,
					    struct smr_err *err);




	/*
	 * One statement of portable SQL (store/sql.h), as mode says: the plain
	 * rows of store/rows.c and store/store_auth.c, whose SQL is the same on every
	 * backend.  params are
	 * $1..$n, passed as text (NULL is SQL NULL), and every column comes back
	 * as text.  sql is a string constant (backends cache its prepared form by
	 * address); what names the work in messages.  A unique-constraint
	 * violation is SMR_ECONFLICT with no message (the caller names what
	 * exists).
	 */
	enum smr_rc (*sql_text)(struct store *st, enum sql_mode mode, const char *sql,
				const char *const *params, int n, const char *what,
				struct store_rows *out, struct smr_err *err);
	/*
	 * The statement (for sql_text) that moves the auth epoch, when the
	 * backend has one of its own; NULL: the portable UPDATE of store/store_auth.c.
	 * PostgreSQL's also NOTIFYs STORE_AUTH_CHANNEL in the same statement, so
	 * the notice goes out only when the new epoch is committed.
	 */
	const char *auth_bump_sql;
	/* SQL_REACH_INTO (store/sql.h) in the backend's spelling, for sql_text. */
	const char *reach_into_sql;
	/* SQL_HEADS_AT (store/sql.h) in the backend's spelling, for sql_text. */
	const char *heads_at_sql;
	/* SQL_LIVE_OF (store/sql.h) in the backend's spelling, for sql_text. */
	const char *live_of_sql;
	/* See store_watch_open_on; NULL: the backend has no change notices (SQLite). */
	enum smr_rc (*watch_open)(const char *dsn, const char *channel, struct store_watch **out,
				  struct smr_err *err);
};

/* A backend's watch embeds this first (full/pg_watch.c). */
struct store_watch {
	int (*wait)(struct store_watch *w, int ms, struct smr_err *err);
	void (*close)(struct store_watch *w);
};

struct index_memo;   /* index.c's last indexed checkpoint */

struct store {
	const struct store_ops *ops;
	/* the schema version open found when it brought an existing database
	 * up to date; 0 when the database was new or already current */
	int migrated_from;
	struct index_memo *memo;   /* index.c's, claimed by this handle; store_close frees it */
	struct commit_group *group;      /* set by store_open when the backend groups */
	int background;                  /* store_set_background */
};

/*
 * Indexes what c (stored as row commit_id) introduced over its first parent
 * (index.c; parent NULL: a root, all of it), in the caller's transaction.
 * With check, nothing happens when another copy of c is stored already
 * (a fork's, or an import's of a hash this store has): it was indexed then.
 */
enum smr_rc store_index_checkpoint(struct store *st, const struct checkpoint *c,
				   int64_t commit_id, const struct checkpoint *parent,
				   int check, struct smr_err *err);
/*
 * store_index_checkpoint for a put that knows c by Space and hash only (its
 * row id may not be read yet): with check, as a pipelined statement where
 * the backend has search_insert_at.  parent may carry only its hash when
 * store_index_knows(parent's hash).
 */
enum smr_rc store_index_put(struct store *st, const char *space_id, const struct checkpoint *c,
			    const struct checkpoint *parent, struct smr_err *err);
/*
 * store_index_put in two halves, for a write that queues for a commit
 * group's leader: the plan (c's items and words, and which are new over
 * parent, which may carry only its hash as for store_index_put) made
 * before, on the writer's handle; the inserts in the transaction, on any.
 * store_index_plan_done() shelves the plan's items for c's child (NULL: a
 * no-op).
 */
struct index_plan;
struct index_plan *store_index_plan(struct store *st, const struct checkpoint *c,
				    const struct checkpoint *parent);
enum smr_rc store_index_put_planned(struct store *st, const char *space_id,
				    const struct checkpoint *c, const struct index_plan *plan,
				    struct smr_err *err);
void store_index_plan_done(struct index_plan *plan);
/* Frees a plan whose checkpoint was not written as planned (sealed again elsewhere); NULL: a no-op. */
void store_index_plan_drop(struct index_plan *plan);
/*
 * 1 when index.c keeps the items of checkpoint hash (it indexed it lately,
 * on any handle): this handle then holds them for its next index of a
 * child of hash.
 */
int store_index_knows(struct store *st, const char *hash);
void store_index_memo_free(struct store *st);
/* The search index's code of a field name (-1: none) and the name of a code. */
int store_field_code(const char *name);
const char *store_field_name(int code);
/*
 * Indexes every checkpoint of a store that holds some written before the
 * search index existed: store_open calls it once, right after the
 * migration that created the index (SEARCH_INDEX_MIGRATION, the same
 * number in schema_sqlite.h and schema_postgres.h).  A checkpoint copied
 * into several Spaces is indexed once; nothing checks for rows already
 * there, so it must not run on an indexed store.
 */
#define SEARCH_INDEX_MIGRATION 4
enum smr_rc store_index_backfill(struct store *st, struct smr_err *err);
/* Indexes a stored turn (t->id set), in the caller's transaction. */
enum smr_rc store_index_turn(struct store *st, const struct turn *t, struct smr_err *err);
/* Indexes the turn just appended to t's session (t->id and t->seq may not be read yet). */
enum smr_rc store_index_appended(struct store *st, const struct turn *t, struct smr_err *err);

/*
 * Opens dsn with backend ops (ops->open), wrapped in the trace backend when
 * store_trace_on() (store.c); the way every handle is opened, a commit
 * group's own included.
 */
enum smr_rc store_backend_open(const struct store_ops *ops, const char *dsn, struct store **out,
			       struct smr_err *err);
/* 1 when SMRITI_STORE_TRACE=1 asks for every call of the port on stderr (trace.c). */
int store_trace_on(void);
/* A handle that logs every call and passes it to inner, which it owns (trace.c). */
struct store *store_trace_wrap(struct store *inner);

/*
 * Rows of store.c's transactions in one SQL text for both engines
 * (rows.c), each run inside one of them.  rows_reflog_insert: the reflog
 * row of a move (space_name NULL: the Space's name now), sent with the rest
 * of the write.  rows_reach_named: Space space_id reaches checkpoint hash
 * (NULL: nothing) from now on, for a reflog row that names it without a
 * ref taking it (an import's history; store/sql.h).
 */
enum smr_rc rows_reach_named(struct store *st, const char *space_id, const char *hash,
			     struct smr_err *err);
enum smr_rc rows_reflog_insert(struct store *st, const char *space_id, const char *space_name,
			       const char *old_hash, const char *new_hash, const char *action,
			       const struct ref_move *mv, struct smr_err *err);
/* SMR_ENOTFOUND when the Space is no live one; rename: SMR_ECONFLICT naming a taken name. */
enum smr_rc rows_space_rename(struct store *st, const char *id, const char *new_name,
			      struct smr_err *err);
/* Marks the Space deleted at at and frees its name. */
enum smr_rc rows_space_delete(struct store *st, const char *id, const char *at,
			      struct smr_err *err);
/* one hand-off row; SMR_ENOTFOUND when h->space_id is no live Space */
enum smr_rc rows_handoff_insert(struct store *st, const struct handoff *h, struct smr_err *err);
/* Grants user_id the owner role on space_id and moves the auth epoch (ref_move.owner). */
enum smr_rc rows_space_owner(struct store *st, const char *space_id, const char *user_id,
			     struct smr_err *err);
/* Sets the session's leaf_seq (the path shown ends there); leaf <= 0: NULL, the newest. */
enum smr_rc rows_session_set_leaf(struct store *st, const char *session_id, int64_t leaf,
				  struct smr_err *err);
enum smr_rc rows_session_insert(struct store *st, const struct session *s,
				struct smr_err *err);
/* SMR_ECONFLICT (message unset) when the session has a running one already. */
enum smr_rc rows_generation_insert(struct store *st, const struct generation *g,
				   struct smr_err *err);
enum smr_rc rows_generation_update(struct store *st, const struct generation *g,
				   struct smr_err *err);
/* One batch of store_generation_publish, in the caller's transaction. */
enum smr_rc rows_generation_events_put(struct store *st, const struct gen_events *b,
				       struct smr_err *err);
/*
 * While generation id runs: status NULL locks its row (its end is being
 * written); else sets status, error and finished_at.  *n gets 1, or 0 when
 * it no longer runs (another server took it over, or it ended).
 */
enum smr_rc rows_generation_claim(struct store *st, const char *id, const char *status,
				  const char *error, const char *now, size_t *n,
				  struct smr_err *err);
/* Turn seq of the session gets error, unless it has one. */
enum smr_rc rows_turn_set_error_seq(struct store *st, const char *session_id, int64_t seq,
				    const char *error, struct smr_err *err);

/*
 * The shared history's migration (docs/storage.md): collapses the
 * per-Space copies of every checkpoint into its oldest row, in batches of
 * one transaction each, resumable (the cursor is a row of its own), with a
 * progress line on stderr.  Each backend runs it before the migration that
 * makes the hash unique (its text names HISTORY_MIGRATION_MARK).  *from
 * is the schema version this open started from; a run that resumes one
 * killed before gets the version that run started from (the backend
 * reports it as migrated_from, so what follows a migration still runs).
 */
/*
 * Gives the rows written before schema migration 15 their chain (sql.h),
 * batch by batch, each one transaction that moves the cursor
 * (chain_migration) with the rows it did, so a kill -9 loses at most the
 * batch under way; a progress line on stderr per batch.  Nothing to do
 * (SMR_OK at once) once the cursor is gone.
 */
enum smr_rc rows_chain_backfill(struct store *st, struct smr_err *err);
/*
 * Makes reach_tips and chain_entries again from the refs, the reflog and
 * the commits (store/sql.h), inside the caller's transaction.
 */
enum smr_rc rows_reach_rebuild(struct store *st, struct smr_err *err);
#define HISTORY_MIGRATION_MARK "commits_hash_unique"
enum smr_rc rows_history_collapse(struct store *st, int *from, struct smr_err *err);
/*
 * A live Space holding rows of a chain (rows_reach_into): the chain's
 * origin (origin 1), or a Space reaching the chain, with the highest row
 * of it reached (xmax).
 */
struct reach_into {
	int64_t chain;
	char *id, *name;
	int origin;
	int64_t xmax;
};
/* A chain asked of rows_reach_into: its rows at or above from, and its origin. */
struct reach_ask {
	int64_t chain, from;
	const char *origin;
};
/*
 * For each chain of asks, in one statement (store/sql.h, SQL_REACH_INTO):
 * its origin if live, then by name the live Spaces whose ref or reflog
 * reaches it at row from or above (the origin among them only when another
 * Space reaches the chain there too); *out by chain.  Caller
 * reach_into_free()s *out.
 */
enum smr_rc rows_reach_into(struct store *st, const struct reach_ask *asks, size_t n_asks,
			    struct reach_into **out, size_t *n, struct smr_err *err);
void reach_into_free(struct reach_into *v, size_t n);
/* Whether any Space is deleted, in *any (an index of the deleted alone answers). */
enum smr_rc rows_any_deleted(struct store *st, int *any, struct smr_err *err);
/* How many of the n distinct Spaces ids are live, in *n_live. */
enum smr_rc rows_live_of(struct store *st, const char *const *ids, size_t n, size_t *n_live,
			 struct smr_err *err);
/*
 * The Spaces (live only, or deleted too) that hold checkpoint hash (see
 * sql.h: its origin, and every Space whose ref or reflog names it or a
 * descendant): the origin first, then by name.  names NULL: not wanted.
 * The caller frees each string and the arrays.
 */
enum smr_rc rows_holders(struct store *st, const char *hash, int live, char ***ids,
			 char ***names, size_t *n, struct smr_err *err);

/* The backends compiled into this binary, NULL-terminated (backends_*.c). */
extern const struct store_ops *const store_backends[];
extern const struct store_ops store_sqlite_ops;
extern const struct store_ops store_postgres_ops;
/* PostgreSQL's store_watch (full/pg_watch.c). */
enum smr_rc pg_watch_open(const char *dsn, const char *channel, struct store_watch **out,
			  struct smr_err *err);

#endif
