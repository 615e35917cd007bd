/*
 * trace.c -- a storage backend that wraps another and logs every call of
 * the port, the way git's GIT_TRACE_REFS wraps a ref backend: with
 * SMRITI_STORE_TRACE=1 in its environment, store_open hands out wrapped
 * handles, and each method call writes one line on standard error,
 * "smriti: store 3: head_get ok (41 us)" (sql_text names its work:
 * "sql_text reading a session").  Handles are numbered in the order they
 * were opened; arguments are not logged (they hold users' text).
 *
 * A new method of store_int.h gets a line in METHODS (or, when it does not
 * return enum smr_rc, a function of its own below); tests/unit/test_store_trace.c
 * fails for a method left out.
 */
#include "store/store_int.h"
#include "util/logline.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct trace_store {
	struct store base;
	struct store *inner;
	unsigned id;
};

static struct store *IN(struct store *st)
{
	return ((struct trace_store *)st)->inner;
}

static void trace_line(struct store *st, const char *name, const char *what, enum smr_rc rc,
		       int64_t t0)
{
	logline("trace", "store %u: %s%s%s %s (%lld us)", ((struct trace_store *)st)->id, name,
		what ? " " : "", what ? what : "", rc ? smr_rc_name(rc) : "ok",
		(long long)(sys_monotonic_us() - t0));
}

#define UNPAREN(...) __VA_ARGS__

/* name, its parameters after st, and their names */
#define METHODS(M) \
	M(txn_begin, (struct smr_err *err), (err)) \
	M(txn_commit, (struct smr_err *err), (err)) \
	M(txn_flush, (struct smr_err *err), (err)) \
	M(head_check, (const char *space_id, const char *expected, char **hash, \
	  struct smr_err *err), \
	  (space_id, expected, hash, err)) \
	M(space_check, (const char *space_id, const char *ref, const char *name, \
	  struct smr_err *err), \
	  (space_id, ref, name, err)) \
	M(commit_insert_on_head, (const char *space_id, const struct checkpoint *c, \
	  const struct checkpoint_text *text, struct smr_err *err), \
	  (space_id, c, text, err)) \
	M(head_move_to, (const char *space_id, const char *hash, struct smr_err *err), \
	  (space_id, hash, err)) \
	M(head_lock, (const char *space_id, int64_t *id, char **hash, struct smr_err *err), \
	  (space_id, id, hash, err)) \
	M(commit_insert, (const char *space_id, const struct checkpoint *c, \
	  const struct checkpoint_text *text, int64_t parent_id, int64_t merge_id, int64_t *id, \
	  struct smr_err *err), \
	  (space_id, c, text, parent_id, merge_id, id, err)) \
	M(commit_reserve, (const char *const *hashes, size_t n, int64_t *ids, \
	  struct smr_err *err), \
	  (hashes, n, ids, err)) \
	M(commit_insert_as, (const char *space_id, const struct checkpoint *c, \
	  const struct checkpoint_text *text, int64_t id, int64_t parent_id, int64_t merge_id, \
	  struct smr_err *err), \
	  (space_id, c, text, id, parent_id, merge_id, err)) \
	M(commit_id, (const char *space_id, const char *hash, int64_t *id, struct smr_err *err), \
	  (space_id, hash, id, err)) \
	M(commit_read, (const char *space_id, const char *hash, struct checkpoint *out, \
	  struct smr_err *err), \
	  (space_id, hash, out, err)) \
	M(commit_links, (const char *space_id, const char *hash, char **parent, \
	  char **merge_parent, char **created_at, struct smr_err *err), \
	  (space_id, hash, parent, merge_parent, created_at, err)) \
	M(commit_ancestry, (const char *space_id, const char *hash, json_t *into, \
	  struct smr_err *err), \
	  (space_id, hash, into, err)) \
	M(space_insert, (const struct space *sp, struct smr_err *err), (sp, err)) \
	M(head_move, (const char *space_id, int64_t commit_id, struct smr_err *err), \
	  (space_id, commit_id, err)) \
	M(last_seq_lock, (const char *session_id, int64_t expected_last, int64_t *last, \
	  struct smr_err *err), \
	  (session_id, expected_last, last, err)) \
	M(turn_insert, (struct turn *t, struct smr_err *err), (t, err)) \
	M(savepoint, (enum savepoint_op op, struct smr_err *err), (op, err)) \
	M(data_version, (uint64_t *v, struct smr_err *err), (v, err)) \
	M(head_get, (const char *space, struct checkpoint *out, struct smr_err *err), \
	  (space, out, err)) \
	M(space_create, (const struct space *sp, struct smr_err *err), (sp, err)) \
	M(search_has, (const char *hash, int *yes, struct smr_err *err), (hash, yes, err)) \
	M(search_insert, (int64_t commit_id, int64_t turn_id, int field, int64_t ordinal, \
	  const char *words, struct smr_err *err), \
	  (commit_id, turn_id, field, ordinal, words, err)) \
	M(search_insert_at, (const char *space_id, const char *hash, \
	  const struct search_put *v, size_t n, struct smr_err *err), \
	  (space_id, hash, v, n, err)) \
	M(search_insert_turn, (const char *session_id, int field, const char *words, \
	  struct smr_err *err), \
	  (session_id, field, words, err)) \
	M(search, (const struct search_filter *f, const char *spaces_json, \
	  struct search_row **out, size_t *n, struct smr_err *err), \
	  (f, spaces_json, out, n, err)) \
	M(gc_prune, (const char *before, const char *expire, struct gc_counts *n, \
	  struct smr_err *err), (before, expire, n, err)) \
	M(checkpoint_get, (const char *space_id, const char *hash, struct checkpoint *out, \
	  struct smr_err *err), \
	  (space_id, hash, out, err)) \
	M(checkpoints_each, (const char *const *hashes, size_t n, store_each_fn fn, void *ctx, \
	  struct smr_err *err), \
	  (hashes, n, fn, ctx, err)) \
	M(checkpoint_log, (const char *space_id, const char *hash, size_t limit, \
	  struct checkpoint **out, size_t *n, struct smr_err *err), \
	  (space_id, hash, limit, out, n, err)) \
	M(checkpoint_scan, (const char *space_id, store_scan_fn fn, void *ctx, \
	  struct smr_err *err), \
	  (space_id, fn, ctx, err)) \
	M(checkpoint_scan_text, (const char *space_id, store_scan_text_fn fn, void *ctx, \
	  struct smr_err *err), \
	  (space_id, fn, ctx, err))

#define WRAP(name, params, args) \
	static enum smr_rc trace_##name(struct store *st, UNPAREN params) \
	{ \
		int64_t t0 = sys_monotonic_us(); \
		enum smr_rc rc = IN(st)->ops->name(IN(st), UNPAREN args); \
		trace_line(st, #name, NULL, rc, t0); \
		return rc; \
	}
METHODS(WRAP)

static enum smr_rc trace_sql_text(struct store *st, enum sql_mode mode, const char *sql,
				  const char *const *params, int n, const char *what,
				  struct store_rows *out, struct smr_err *err)
{
	int64_t t0 = sys_monotonic_us();
	enum smr_rc rc = IN(st)->ops->sql_text(IN(st), mode, sql, params, n, what, out, err);

	trace_line(st, "sql_text", what, rc, t0);
	return rc;
}

static void trace_close(struct store *st)
{
	trace_line(st, "close", NULL, SMR_OK, sys_monotonic_us());
	IN(st)->ops->close(IN(st));
	free(st);
}

static void trace_txn_rollback(struct store *st)
{
	trace_line(st, "txn_rollback", NULL, SMR_OK, sys_monotonic_us());
	IN(st)->ops->txn_rollback(IN(st));
}

static void trace_bulk(struct store *st, int on)
{
	trace_line(st, on ? "bulk on" : "bulk off", NULL, SMR_OK, sys_monotonic_us());
	IN(st)->ops->bulk(IN(st), on);
}

static void trace_checkpoint(struct store *st)
{
	int64_t t0 = sys_monotonic_us();

	IN(st)->ops->checkpoint(IN(st));
	trace_line(st, "checkpoint", NULL, SMR_OK, t0);
}

/* These answer from the handle's own state: asked often, and not worth a line. */
static int trace_txn_not_started(struct store *st)
{
	return IN(st)->ops->txn_not_started(IN(st));
}

static const char *trace_group_key(struct store *st)
{
	return IN(st)->ops->group_key(IN(st));
}

static int trace_checkpoint_due(struct store *st)
{
	return IN(st)->ops->checkpoint_due(IN(st));
}

/* The tracing table of each backend, made on first use: a method a backend lacks stays NULL. */
#define TABLES 4
static struct {
	pthread_mutex_t mu;
	const struct store_ops *inner[TABLES];
	struct store_ops table[TABLES];
	unsigned handles;
} traced = { .mu = PTHREAD_MUTEX_INITIALIZER };

#define SET(name, params, args) t->name = in->name ? trace_##name : NULL;
#define SET_OWN(name) t->name = in->name ? trace_##name : NULL;

static void make_table(struct store_ops *t, const struct store_ops *in)
{
	/*
	 * name, shared, accepts, open, auth_bump_sql, reach_into_sql, heads_at_sql,
	 * live_of_sql, watch_open
	 */
	*t = *in;
	METHODS(SET)
	SET_OWN(sql_text) SET_OWN(close) SET_OWN(txn_rollback) SET_OWN(bulk)
	SET_OWN(checkpoint) SET_OWN(txn_not_started) SET_OWN(group_key) SET_OWN(checkpoint_due)
}

static const struct store_ops *table_of(const struct store_ops *in, unsigned *id)
{
	int i;

	pthread_mutex_lock(&traced.mu);
	for (i = 0; i < TABLES && traced.inner[i] && traced.inner[i] != in; i++)
		;
	if (i == TABLES)
		BUG("more than %d storage backends: raise TABLES", TABLES);
	if (!traced.inner[i]) {
		make_table(&traced.table[i], in);
		traced.inner[i] = in;
	}
	*id = ++traced.handles;
	pthread_mutex_unlock(&traced.mu);
	return &traced.table[i];
}

struct store *store_trace_wrap(struct store *inner)
{
	struct trace_store *t = xcalloc(1, sizeof(*t));

	t->inner = inner;
	t->base.ops = table_of(inner->ops, &t->id);
	t->base.migrated_from = inner->migrated_from;
	trace_line(&t->base, "open", inner->ops->name, SMR_OK, sys_monotonic_us());
	return &t->base;
}

int store_trace_on(void)
{
	return sys_env_long("SMRITI_STORE_TRACE", 0, 0, 1) == 1;
}
